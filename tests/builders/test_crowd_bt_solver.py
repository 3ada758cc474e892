"""The Crowd-BT strength solver (Newton, warm starts) against the L-BFGS-B run it replaced,
and the leave-one-annotator-out audit against refits from zero (issue 20)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from orlbuild.builders import BuildParameters, build_orls
from orlbuild.builders.audit.leave_one_out import _without, flipped_pairs
from orlbuild.builders.build import _check_frame, pairwise_query_comparisons, query_rng
from orlbuild.builders.estimation import crowd_bt
from orlbuild.builders.estimation.crowd_bt import CrowdBTModel, fit_reliabilities
from orlbuild.builders.pairwise import pairwise_query_orl
from orlbuild.builders.pairwise_data import PairwiseComparisons
from orlbuild.records import QueryBuildError
from tests.builders.simulation import simulate_round_robin, tiered_strengths

#: one tolerance for strengths: the L-BFGS-B reference stops at gtol 1e-10 / ftol 1e-15
ATOL = 1e-6


def _careless(seed: int, queries: int = 8) -> pd.DataFrame:
    """Mixed queries, 6 annotators: a0 answers at random, a1 reversed, the others careful."""
    rng = np.random.default_rng(seed)
    frames = []
    for k in range(queries):
        n = int(rng.integers(3, 12))
        strengths, _ = tiered_strengths([n // 3, n - 2 * (n // 3), n // 3], 1.5)
        frames.append(simulate_round_robin(rng, strengths, 3, query=f"q{k}", n_annotators=6))
    frame = pd.concat(frames, ignore_index=True)
    swap = (frame["annotator"] == "a1") | (
        (frame["annotator"] == "a0") & (rng.random(len(frame)) < 0.5)
    )
    frame.loc[swap, ["winner", "loser"]] = frame.loc[swap, ["loser", "winner"]].to_numpy()
    return frame


def _queries(frame: pd.DataFrame) -> list[tuple[str, PairwiseComparisons]]:
    return list(pairwise_query_comparisons(_check_frame(frame, "pairwise")))


def _lbfgsb(
    comps: PairwiseComparisons,
    codes: np.ndarray,
    eta: np.ndarray,
    alpha: float,
    weights: np.ndarray,
) -> np.ndarray:
    """The solver before Newton: L-BFGS-B from zero, gtol 1e-10, ftol 1e-15."""
    n = comps.n_items
    result = minimize(
        crowd_bt._objective,
        np.zeros(n),
        args=(comps.winners, comps.losers, codes, weights, np.full(n, alpha), n, eta),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 5000, "gtol": 1e-10, "ftol": 1e-15},
    )
    return np.asarray(result.x - result.x.mean())


@pytest.fixture(scope="module")
def fitted() -> tuple[list[tuple[str, PairwiseComparisons]], crowd_bt.ReliabilityFit]:
    queries = _queries(_careless(5))
    return queries, fit_reliabilities(queries, reg=0.5)


@pytest.mark.parametrize("reg", [0.5, 0.0])
def test_newton_finds_the_strengths_lbfgsb_found(fitted, reg: float) -> None:  # type: ignore[no-untyped-def]
    queries, fit = fitted
    compared = 0
    for _, comps in queries:
        codes = fit.codes_of(comps)
        alpha = reg / comps.n_items
        ours = crowd_bt._fit_scores(comps, codes, fit.eta, alpha, None)
        reference = _lbfgsb(comps, codes, fit.eta, alpha, np.ones(len(comps.winners)))
        if reg == 0 and np.abs(reference).max() > 15:
            # no finite optimum (an item nobody beats): both stop somewhere on the plateau
            continue
        np.testing.assert_allclose(ours, reference, atol=ATOL)
        compared += 1
    assert compared >= len(queries) // 2


def test_newton_with_bootstrap_weights_zeros_included(fitted) -> None:  # type: ignore[no-untyped-def]
    queries, fit = fitted
    rng = np.random.default_rng(2)
    _, comps = queries[0]
    units = rng.multinomial(comps.n_units, np.full(comps.n_units, 1 / comps.n_units))
    units = units.astype(np.float64)
    assert (units == 0).any()
    codes = fit.codes_of(comps)
    alpha = 0.5 / comps.n_items
    ours = crowd_bt._fit_scores(comps, codes, fit.eta, alpha, units)
    weights = comps.comparison_weights(units)
    assert weights is not None
    np.testing.assert_allclose(ours, _lbfgsb(comps, codes, fit.eta, alpha, weights), atol=ATOL)


def test_a_warm_start_changes_the_steps_not_the_strengths(fitted) -> None:  # type: ignore[no-untyped-def]
    queries, fit = fitted
    rng = np.random.default_rng(4)
    for query, comps in queries:
        cold = CrowdBTModel(comps, 0.5, fit).fit()
        for start in (fit.scores[query], rng.normal(scale=2.0, size=comps.n_items)):
            warm = CrowdBTModel(comps, 0.5, fit, start).fit()
            np.testing.assert_allclose(warm, cold, atol=ATOL)


def test_without_newton_the_lbfgsb_fallback_gives_the_same(fitted, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    queries, fit = fitted
    _, comps = queries[1]
    newton = CrowdBTModel(comps, 0.5, fit).fit()
    monkeypatch.setattr(crowd_bt, "_NEWTON_ITERATIONS", 0)
    assert (
        crowd_bt._newton_scores(
            comps.winners,
            comps.losers,
            fit.eta[fit.codes_of(comps)],
            np.ones(len(comps.winners)),
            0.5 / comps.n_items,
            np.zeros(comps.n_items),
        )
        is None
    )
    np.testing.assert_allclose(CrowdBTModel(comps, 0.5, fit).fit(), newton, atol=ATOL)


@pytest.mark.slow
@pytest.mark.parametrize("tiering", ["model", "simultaneous"])
def test_leave_one_out_flips_equal_refits_from_zero(tiering: str) -> None:
    frame = _careless(6, queries=6)
    params, outcome = build_orls(
        frame, BuildParameters(source="pairwise", annotators="reliability", tiering=tiering)
    )
    queries = _queries(frame)
    fit = fit_reliabilities(queries, reg=params.reg)
    expected = dict.fromkeys(fit.names.astype(str), 0)
    for query, comps in queries:
        for local, name in enumerate(comps.annotator_names.astype(str).tolist()):
            if not np.any(comps.annotators == local):
                continue
            # the audit before warm starts: the build's route from zero
            try:
                alone = pairwise_query_orl(
                    query,
                    _without(comps, local),
                    params,
                    query_rng(int(params.seed or 0), query),
                    fit,
                )
            except QueryBuildError:
                continue
            expected[name] += flipped_pairs(outcome.orls[query], alone)
    assert {r.annotator: r.flips for r in outcome.reliabilities} == expected
    assert sum(expected.values()) > 0 or tiering == "simultaneous"


def test_the_joint_fit_does_not_depend_on_blas_threads() -> None:
    """The joint fit runs with one BLAS thread whatever the caller set (it was 25 times
    slower with threads on a loaded machine); the result is what it is with threads."""
    from threadpoolctl import threadpool_limits

    queries = _queries(_careless(7, queries=4))
    once = fit_reliabilities(queries, reg=0.5)
    with threadpool_limits(limits=2, user_api="blas"):
        again = fit_reliabilities(queries, reg=0.5)
    np.testing.assert_array_equal(once.eta, again.eta)
