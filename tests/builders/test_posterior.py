"""The ``posterior`` tiering's steps (orlbuild/builders/tiering/posterior.py): hand cases,
forward-backward against brute-force enumeration, and a seeded simulation of its error rate."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import multivariate_normal, norm

from orlbuild.builders.calibration.simulation import adjusted_rand_index, tiered_strengths
from orlbuild.builders.estimation.bradley_terry import (
    bradley_terry_information,
    bradley_terry_pairwise,
    regularisation_information,
)
from orlbuild.builders.estimation.uncertainty import fisher_uncertainty
from orlbuild.builders.parameters import DEFAULT_REG
from orlbuild.builders.tiering.posterior import (
    PosteriorPrior,
    fit_prior,
    item_variances,
    log_evidence,
    posterior_tiers,
    same_segment_probability,
    stated_order_risk,
    wrong_order_probability,
)

PRIOR = PosteriorPrior(lam=1.0, tau=1.0)


def _se(n: int, value: float) -> np.ndarray:
    se = np.full((n, n), value)
    np.fill_diagonal(se, 0.0)
    return se


def _brute_force(y: np.ndarray, v: np.ndarray, prior: PosteriorPrior) -> tuple[float, np.ndarray]:
    """Log evidence and ``P_same`` by enumerating all ``2^(n-1)`` contiguous partitions, each
    segment's marginal from the multivariate normal ``N(m0, diag(v) + tau^2 1 1^T)``."""
    n = len(y)
    rho = min(0.5, prior.lam / (n - 1))
    m0 = y.mean()
    logs, sames = [], []
    for cuts in itertools.product([False, True], repeat=n - 1):
        bounds = [0, *[k + 1 for k, cut in enumerate(cuts) if cut], n]
        total = sum(cuts) * np.log(rho) + (n - 1 - sum(cuts)) * np.log1p(-rho)
        label = np.zeros(n, dtype=int)
        for seg, (s, e) in enumerate(itertools.pairwise(bounds)):
            cov = np.diag(v[s:e]) + prior.tau**2
            total += multivariate_normal(np.full(e - s, m0), cov).logpdf(y[s:e])
            label[s:e] = seg
        logs.append(total)
        sames.append(label[:, None] == label[None, :])
    logs_a = np.array(logs)
    evidence = float(np.logaddexp.reduce(logs_a))
    weights = np.exp(logs_a - evidence)
    return evidence, np.tensordot(weights, np.array(sames, dtype=float), axes=1)


@pytest.mark.parametrize("seed", range(12))
def test_forward_backward_matches_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    y = np.sort(rng.normal(0.0, 1.5, n))[::-1]
    v = rng.uniform(0.01, 0.5, n)
    prior = PosteriorPrior(lam=float(rng.uniform(0.2, 6.0)), tau=float(rng.uniform(0.2, 3.0)))
    evidence, expected = _brute_force(y, v, prior)
    np.testing.assert_allclose(same_segment_probability(y, v, prior), expected, atol=1e-10)
    assert float(log_evidence(y, v, lam=prior.lam, tau=prior.tau)) == pytest.approx(
        evidence, abs=1e-9
    )


def test_log_evidence_batches_queries_and_priors() -> None:
    rng = np.random.default_rng(5)
    y = np.sort(rng.normal(size=(3, 6)), axis=1)[:, ::-1]
    v = rng.uniform(0.05, 0.3, (3, 6))
    lam = np.array([[0.5], [2.0]])
    tau = np.array([[1.0], [0.3]])
    batched = log_evidence(y, v, lam=lam, tau=tau)
    assert batched.shape == (2, 3)
    for g in range(2):
        for q in range(3):
            single = log_evidence(y[q], v[q], lam=float(lam[g, 0]), tau=float(tau[g, 0]))
            assert batched[g, q] == pytest.approx(float(single), abs=1e-12)


def test_item_variances_are_the_least_squares_solution() -> None:
    rng = np.random.default_rng(1)
    n = 6
    true_v = rng.uniform(0.05, 0.4, n)
    se2 = true_v[:, None] + true_v[None, :] + rng.normal(0, 0.01, (n, n))
    se2 = (se2 + se2.T) / 2
    pairs = list(itertools.combinations(range(n), 2))
    design = np.zeros((len(pairs), n))
    for row, (i, j) in enumerate(pairs):
        design[row, [i, j]] = 1.0
    solution = np.linalg.lstsq(design, np.array([se2[i, j] for i, j in pairs]), rcond=None)[0]
    np.testing.assert_allclose(item_variances(np.sqrt(se2)), solution, atol=1e-12)
    assert item_variances(_se(2, 0.4)).tolist() == pytest.approx([0.08, 0.08])
    assert item_variances(_se(3, 0.0)).tolist() == [1e-6] * 3


def test_two_items_by_hand() -> None:
    """Two items: P_same is the posterior of "no cut" (rho = 0.5) against "one cut",
    each a normal marginal, and w follows step 5."""
    y, se = np.array([0.3, -0.3]), _se(2, 0.5)
    v = np.array([0.125, 0.125])
    tau2 = 1.0
    together = multivariate_normal(np.zeros(2), np.diag(v) + tau2).logpdf(y)
    apart = multivariate_normal(np.zeros(2), np.diag(v + tau2)).logpdf(y)
    p_same = 1.0 / (1.0 + np.exp(apart - together))
    got = same_segment_probability(y, v, PRIOR)
    assert got[0, 1] == pytest.approx(p_same, abs=1e-12)
    w = wrong_order_probability(y, se, got)
    assert w[0, 1] == pytest.approx(p_same + (1 - p_same) * norm.cdf(-0.6 / 0.5), abs=1e-12)
    result = posterior_tiers(y[::-1], se, PRIOR, fdr=0.05)
    assert result.tiers.tolist() == [1, 1]  # w is far above 0.05
    assert result.boundary_probability.tolist() == pytest.approx([1 - p_same])
    assert result.top_probability.tolist() == pytest.approx([p_same, 1.0])
    assert (result.expected_wrong, result.stated, result.wrong_share) == (0.0, 0, 0.0)
    far = posterior_tiers(np.array([-4.0, 4.0]), _se(2, 0.2), PRIOR, fdr=0.05)
    assert far.tiers.tolist() == [2, 1]
    assert far.stated == 1 and far.expected_wrong < 1e-6


def test_all_equal_items_give_one_tier() -> None:
    """100 queries of 2-20 equal items, scores drawn with the stated standard errors (item
    variance 0.045, so ``se_ij = 0.3``): none is split, under the fitted prior or a fixed one."""
    rng = np.random.default_rng(2)
    queries = []
    for _ in range(100):
        n = int(rng.integers(2, 21))
        queries.append((rng.normal(0.0, 0.3 / np.sqrt(2.0), n), _se(n, 0.3)))
    for prior in (fit_prior(queries), PosteriorPrior(2.0, 0.5)):
        split = [
            posterior_tiers(scores, se, prior, fdr=0.05).tiers.max() > 1 for scores, se in queries
        ]
        assert sum(split) == 0
    same = posterior_tiers(np.zeros(7), _se(7, 0.3), PRIOR)
    assert same.tiers.tolist() == [1] * 7 and same.stated == 0


def _blocks(heavy_se: float) -> tuple[np.ndarray, np.ndarray]:
    scores = np.array([3.0, 3.02, 2.98, 3.01, -3.0, -2.99, -3.02])
    return scores, _se(len(scores), heavy_se)


def test_two_far_apart_blocks_give_two_tiers() -> None:
    scores, se = _blocks(0.05)
    prior = fit_prior([(scores, se)] * 5)
    result = posterior_tiers(scores, se, prior, fdr=0.05)
    assert result.tiers.tolist() == [1, 1, 1, 1, 2, 2, 2]
    assert result.stated == 12
    assert result.wrong_share < 1e-6
    assert result.boundary_probability[3] > 1 - 1e-6
    assert np.all(result.top_probability[:4] > 0.99) and np.all(result.top_probability[4:] < 1e-6)


def test_fdr_zero_gives_one_tier() -> None:
    scores, se = _blocks(0.05)
    result = posterior_tiers(scores, se, fit_prior([(scores, se)] * 5), fdr=0.0)
    assert result.tiers.tolist() == [1] * 7
    assert result.stated == 0 and result.k_feasible == 1 and result.k_posterior == 2
    with pytest.raises(ValueError, match="fdr"):
        posterior_tiers(scores, se, PRIOR, fdr=1.0)


def test_exactly_equal_scores_are_never_cut() -> None:
    """Three items at 2.0 and three at -2.0, heavy data: the only cut allowed is between
    the blocks, even with a loose fdr that would state more."""
    scores = np.array([2.0, 2.0, -2.0, 2.0, -2.0, -2.0])
    result = posterior_tiers(scores, _se(6, 0.01), PosteriorPrior(5.0, 2.0), fdr=0.45)
    assert result.tiers.tolist() == [1, 1, 2, 1, 2, 2]
    # Equal scores with a loose fdr and a prior wanting many cuts: still one tier.
    flat = posterior_tiers(np.ones(5), _se(5, 0.001), PosteriorPrior(1e3, 1e2), fdr=0.9)
    assert flat.tiers.tolist() == [1] * 5


def test_stated_order_risk_scores_any_tiering() -> None:
    w = np.triu(np.full((3, 3), 0.1), 1)
    assert stated_order_risk(w, np.array([1, 1, 2])) == (pytest.approx(0.2), 2)
    assert stated_order_risk(w, np.array([1, 2, 3])) == (pytest.approx(0.3), 3)
    assert stated_order_risk(w, np.array([1, 1, 1])) == (0.0, 0)


def _design_a(
    seed: int, queries: int, per_query: int
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Design A: 20-item queries, 2-5 true tiers (sizes a uniform composition), gap 1.0,
    ``per_query`` uniformly drawn pairs, Bradley-Terry fits with Fisher standard errors."""
    rng = np.random.default_rng(seed)
    n, out = 20, []
    for _ in range(queries):
        parts = int(rng.integers(2, 6))
        cuts = np.sort(rng.choice(np.arange(1, n), parts - 1, replace=False))
        strength, ranks = tiered_strengths(np.diff(np.r_[0, cuts, n]).tolist(), 1.0)
        a = rng.integers(0, n, per_query)
        b = (a + rng.integers(1, n, per_query)) % n
        a_wins = rng.random(per_query) < 1.0 / (1.0 + np.exp(strength[b] - strength[a]))
        counts = np.zeros((n, n))
        np.add.at(counts, (np.where(a_wins, a, b), np.where(a_wins, b, a)), 1.0)
        alpha = DEFAULT_REG / n
        scores = bradley_terry_pairwise(counts, alpha=alpha)
        information = bradley_terry_information(scores, counts + counts.T)
        information += regularisation_information(scores, alpha=alpha, solver="ilsr")
        fit = fisher_uncertainty(scores, information)
        out.append((fit.scores, fit.se, ranks))
    return out


def _realised(
    data: list[tuple[np.ndarray, np.ndarray, np.ndarray]], fdr: float
) -> tuple[float, float, float]:
    """Pooled realised wrong share, pooled predicted share (sum E / sum N), mean adjusted Rand."""
    prior = fit_prior([(scores, se) for scores, se, _ in data])
    stated = wrong = 0
    expected, aris = 0.0, []
    for scores, se, ranks in data:
        result = posterior_tiers(scores, se, prior, fdr=fdr)
        above = result.tiers[:, None] < result.tiers[None, :]
        assert result.stated == int(above.sum())
        stated += result.stated
        wrong += int((above & (ranks[:, None] >= ranks[None, :])).sum())
        expected += result.expected_wrong
        aris.append(adjusted_rand_index(ranks, result.tiers))
    return wrong / stated, expected / stated, float(np.mean(aris))


def test_simulated_wrong_share_is_controlled_and_the_test_can_fail() -> None:
    """Design A at 400 judgments per query, 40 queries, seed 0 (measured: realised 0.032,
    predicted 0.039, adjusted Rand 0.32 at fdr 0.05; realised 0.24, predicted 0.13 at fdr 0.3)."""
    data = _design_a(0, 40, 400)
    share, predicted, ari = _realised(data, 0.05)
    assert share <= 0.05
    assert abs(predicted - share) <= 0.015
    assert ari >= 0.3  # it states order: the all-significant rules reach 0.00 here
    loose, _, _ = _realised(data, 0.3)
    assert loose > 0.05


def test_fit_prior_maximises_the_summed_marginal_likelihood() -> None:
    """The fitted prior is no worse than any point of a wide grid or its near neighbours, and
    queries of fewer than two items are ignored."""
    data = _design_a(3, 12, 300)
    queries = [(scores, se) for scores, se, _ in data]
    prior = fit_prior([*queries, (np.zeros(1), np.zeros((1, 1)))])

    def total(lam: float, tau: float) -> float:
        fits = [
            log_evidence(
                np.sort(s)[::-1],
                item_variances(se[np.ix_(np.argsort(-s), np.argsort(-s))]),
                lam=lam,
                tau=tau,
            )
            for s, se in queries
        ]
        return float(np.sum(fits))

    best = total(prior.lam, prior.tau)
    for lam in (*np.geomspace(0.01, 100, 6), prior.lam * 1.05, prior.lam / 1.05):
        for tau in (*np.geomspace(0.01, 10, 6), prior.tau * 1.05, prior.tau / 1.05):
            assert total(float(lam), float(tau)) <= best + 1e-9
    assert fit_prior([(np.zeros(1), np.zeros((1, 1)))]) == PosteriorPrior(1.0, 1.0)
