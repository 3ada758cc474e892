"""Rank Centrality through orlbuild.builders.estimation.lsr_dense.statdist: choix's, exactly."""

from __future__ import annotations

import warnings

import choix
import numpy as np
import pytest
from choix.utils import statdist as choix_statdist

from orlbuild.builders.estimation.guarded_fit import fitted_scores
from orlbuild.builders.estimation.lsr_dense import statdist
from orlbuild.builders.estimation.rank_centrality import rank_centrality_pairwise
from orlbuild.records import EstimationError


def _choix_rank_centrality(counts: np.ndarray, *, alpha: float) -> np.ndarray:
    """The Rank Centrality of earlier builds: the same chain, solved by choix's statdist."""
    n = counts.shape[0]
    if n == 1:
        return np.zeros(1)
    pairs = counts + counts.T
    compared = pairs > 0
    chain = np.where(compared, counts.T / np.where(compared, pairs, 1), 0.0) + alpha / 2
    np.fill_diagonal(chain, 0.0)
    chain -= np.diag(chain.sum(axis=1))
    return fitted_scores("Rank Centrality", lambda: np.log(choix_statdist(chain)))


def _counts(rng: np.random.Generator) -> np.ndarray:
    """Random win counts: sparse or dense, with ties, never-winning items, islands."""
    n = int(rng.integers(2, 20))
    counts = rng.poisson(rng.uniform(0.2, 5), (n, n)).astype(float)
    counts *= rng.random((n, n)) < rng.uniform(0.05, 1)
    if rng.random() < 0.3:
        counts += 0.5 * (rng.random((n, n)) < 0.2)  # ties
    if rng.random() < 0.2:
        counts[:, int(rng.integers(n))] = 0.0  # an item that never loses
    if rng.random() < 0.2:
        counts[int(rng.integers(n)), :] = 0.0  # an item that never wins
    if rng.random() < 0.2 and n >= 4:
        cut = int(rng.integers(1, n - 1))
        counts[:cut, cut:] = counts[cut:, :cut] = 0.0  # two components
    np.fill_diagonal(counts, 0.0)
    if rng.random() < 0.2:
        counts = np.asfortranarray(counts)
    return counts


def _outcome(fit, *args, **kwargs) -> tuple[str, object]:
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", np.asarray(fit(*args, **kwargs)).tobytes()
    except (ValueError, EstimationError) as exc:
        return type(exc).__name__, str(exc)


def _generator(counts: np.ndarray, alpha: float) -> np.ndarray:
    pairs = counts + counts.T
    compared = pairs > 0
    chain = np.where(compared, counts.T / np.where(compared, pairs, 1), 0.0) + alpha / 2
    np.fill_diagonal(chain, 0.0)
    return chain - np.diag(chain.sum(axis=1))


def test_statdist_is_choix_s_bit_for_bit_on_seeded_chains() -> None:
    rng = np.random.default_rng(7)
    kinds = set()
    for _ in range(600):
        counts = _counts(rng)
        alpha = float(rng.choice([0.0, 0.0, 0.01, 0.1, 1.0]))
        generator = _generator(counts, alpha)
        if rng.random() < 0.3:
            generator = np.asfortranarray(generator)
        expected = _outcome(choix_statdist, generator)
        got = _outcome(statdist, generator)
        assert got == expected
        if expected[0] == "ok":
            np.testing.assert_array_equal(statdist(generator), choix_statdist(generator))
        kinds.add(expected[0])
    # solved chains and chains with several absorbing classes were both compared
    assert kinds == {"ok", "ValueError"}


def test_rank_centrality_is_the_choix_statdist_build_bit_for_bit() -> None:
    rng = np.random.default_rng(8)
    kinds = set()
    for _ in range(600):
        counts = _counts(rng)
        alpha = float(rng.choice([0.0, 0.0, 0.01, 0.1 / counts.shape[0], 1.0]))
        expected = _outcome(_choix_rank_centrality, counts, alpha=alpha)
        assert _outcome(rank_centrality_pairwise, counts, alpha=alpha) == expected
        if expected[0] == "ok":
            np.testing.assert_array_equal(
                rank_centrality_pairwise(counts, alpha=alpha),
                _choix_rank_centrality(counts, alpha=alpha),
            )
            kinds.add("ok")
        else:
            kinds.add(str(expected[1]).split(":")[0].split(" (")[0])
    # fits, non-finite scores (an item that never wins) and failed solves were all compared
    assert kinds == {
        "ok",
        "Rank Centrality returned non-finite scores; an item that never wins or never loses "
        "needs --reg > 0",
        "Rank Centrality failed",
    }


def test_rank_centrality_without_regularisation_is_choix_s_exactly() -> None:
    rng = np.random.default_rng(9)
    compared = 0
    for _ in range(200):
        n = int(rng.integers(2, 12))
        counts = rng.poisson(rng.uniform(0.5, 4), (n, n)).astype(float)
        np.fill_diagonal(counts, 0.0)
        pairs = [(i, j) for i in range(n) for j in range(n) for _ in range(int(counts[i, j]))]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                reference = choix.rank_centrality(n, pairs, alpha=0.0)
        except ValueError:
            with pytest.raises(EstimationError, match="Rank Centrality failed"):
                rank_centrality_pairwise(counts, alpha=0.0)
            continue
        if not np.all(np.isfinite(reference)):
            with pytest.raises(EstimationError, match="non-finite"):
                rank_centrality_pairwise(counts, alpha=0.0)
            continue
        np.testing.assert_array_equal(rank_centrality_pairwise(counts, alpha=0.0), reference)
        compared += 1
    assert compared >= 100


def test_one_item_scores_zero() -> None:
    np.testing.assert_array_equal(rank_centrality_pairwise(np.zeros((1, 1)), alpha=0.1), [0.0])


def test_fitted_scores_centres_as_numpy_s_mean_does() -> None:
    rng = np.random.default_rng(10)
    for _ in range(300):
        params = rng.normal(0, 10.0 ** rng.integers(-3, 4), size=int(rng.integers(1, 300)))
        expected = params - params.mean()
        np.testing.assert_array_equal(fitted_scores("x", lambda p=params: p), expected)


def _random_comparisons(rng: np.random.Generator):  # type: ignore[no-untyped-def]
    from orlbuild.builders.pairwise_data import PairwiseComparisons

    n = int(rng.integers(1, 12))
    m = int(rng.integers(1, 80))
    winners = rng.integers(0, n, size=m)
    losers = (winners + rng.integers(1, max(n, 2), size=m)) % max(n, 1)
    units = np.arange(m, dtype=np.int64)
    weights = None
    if rng.random() < 0.4:  # ties: halves of weight 1/2
        weights = np.where(rng.random(m) < 0.3, 0.5, 1.0)
    return PairwiseComparisons(
        items=np.array([f"i{k}" for k in range(n)], dtype=object),
        winners=winners.astype(np.int64),
        losers=losers.astype(np.int64),
        units=units,
        annotators=np.zeros(m, dtype=np.int64),
        annotator_names=np.array(["a"], dtype=object),
        weights=weights,
    )


@pytest.mark.parametrize("block_bytes", [1, 4 * 2**20])
def test_fit_many_is_fit_of_each_resample_bit_for_bit(monkeypatch, block_bytes) -> None:  # type: ignore[no-untyped-def]
    from orlbuild.builders.estimation import strength_models as strength_models
    from orlbuild.builders.estimation.strength_models import RankCentralityModel
    from orlbuild.builders.estimation.uncertainty import bootstrap_samples

    monkeypatch.setattr(strength_models, "FIT_BLOCK_BYTES", block_bytes)
    rng = np.random.default_rng(11)
    failures = 0
    for _ in range(150):
        comparisons = _random_comparisons(rng)
        model = RankCentralityModel(comparisons, float(rng.choice([0.0, 0.0, 0.5, 2.0])))
        weights = rng.poisson(1.0, size=(int(rng.integers(1, 30)), comparisons.n_units))
        weights = weights.astype(np.float64)
        # the matrices themselves
        many = comparisons.count_matrices(weights)
        for b in range(len(weights)):
            assert many[b].tobytes() == comparisons.count_matrix(weights[b]).tobytes()
        # the scores, or the same failure at the same resample
        outcomes = []
        for one_by_one in (True, False):
            draw = np.random.default_rng(5)
            try:
                samples = bootstrap_samples(
                    model.fit,
                    np.arange(comparisons.n_units),
                    resamples=len(weights),
                    rng=draw,
                    quiet=True,
                    fit_many=None if one_by_one else model.fit_many,
                )
                outcomes.append(("ok", samples.tobytes()))
            except EstimationError as exc:
                outcomes.append(("error", str(exc)))
        assert outcomes[0] == outcomes[1]
        failures += outcomes[0][0] == "error"
    assert 0 < failures < 150  # both paths exercised
