"""Studentized step-down randomized Tukey HSD (``max-t``): exactness, step-down, error rates.

The side-by-side power against the sign-flip test with Holm is in
``tests/statistics/test_procedures.py``; the thorough table in
``tests/benchmarks/bench_max_t_power.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scoring.statistics.max_t as max_t_module
from scoring.errors import ScoringError
from scoring.settings import TestSettings
from scoring.statistics import (
    get_paired_test,
    max_t_pvalues,
    plan_test,
    system_comparison,
    system_tiers,
)
from scoring.statistics.tiers import compact_letters
from tests.permutation_panels import (
    all_pairs,
    assert_registered,
    equal_systems_panel,
    every_within_query_shuffle,
    null_family_wise_error,
)


def abs_t(scores: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """|paired t| of each pair, straight from the differences (0 when all are 0)."""
    diffs = scores[:, first] - scores[:, second]
    mean = diffs.mean(axis=0)
    sd = diffs.std(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(mean) / (sd / np.sqrt(scores.shape[0]))
    return np.where(np.abs(mean) < 1e-12, 0.0, t)


def step_down(observed: np.ndarray, permuted: np.ndarray) -> np.ndarray:
    """Westfall & Young's step-down p-values, written as a plain loop over the pairs.

    ``permuted`` holds one row of pair statistics per permutation; the p-value
    of the j-th largest observed pair is the share of rows whose maximum over
    the pairs not larger than it reaches it, made non-decreasing.
    """
    order = np.argsort(-observed, kind="stable")
    pvalues = np.empty(observed.size)
    running = 0.0
    for j, pair in enumerate(order):
        remaining = order[j:]
        share = np.mean(permuted[:, remaining].max(axis=1) >= observed[pair] * (1 - 1e-9))
        running = max(running, share)
        pvalues[pair] = running
    return pvalues


def brute_force_max_t(scores: np.ndarray) -> np.ndarray:
    """Exact step-down max-T p-values over every within-query permutation (tiny panels)."""
    first, second = all_pairs(scores.shape[1])
    permuted = [abs_t(shuffled, first, second) for shuffled in every_within_query_shuffle(scores)]
    return step_down(abs_t(scores, first, second), np.array(permuted))


def test_monte_carlo_approaches_the_exact_step_down_distribution() -> None:
    scores = np.array(
        [[0.9, 0.5, 0.1], [0.8, 0.6, 0.3], [0.7, 0.2, 0.4], [0.95, 0.4, 0.35]]
    )  # 6**4 = 1,296 equally likely permutations
    exact = brute_force_max_t(scores)
    drawn = max_t_pvalues(scores, all_pairs(3), permutations=40_000, rng=1)
    np.testing.assert_allclose(drawn, exact, atol=0.01)
    assert len(set(np.round(exact, 6))) > 1  # the steps differ: a real check


def test_chunks_compute_the_plain_step_down(monkeypatch: pytest.MonkeyPatch) -> None:
    """One permutation per chunk draws the same stream as a plain loop; results agree."""
    rng = np.random.default_rng(4)
    scores = equal_systems_panel(rng, 15, 6) + np.linspace(0, 0.3, 6)
    first, second = all_pairs(6)
    monkeypatch.setattr(max_t_module, "CHUNK_ENTRIES", 1)
    fast = max_t_pvalues(scores, (first, second), permutations=300, rng=11)
    generator = np.random.default_rng(11)
    centred = scores - scores.mean(axis=1, keepdims=True)
    permuted = np.array(
        [abs_t(generator.permuted(centred[None], axis=2)[0], first, second) for _ in range(300)]
    )
    plain = step_down(abs_t(scores, first, second), np.vstack([permuted]))
    expected = (1 + plain * 300) / 301  # the (1 + count) / (B + 1) convention
    np.testing.assert_allclose(fast, expected, atol=1e-12)


def test_the_first_step_is_the_single_step_max_t_and_later_steps_find_more() -> None:
    rng = np.random.default_rng(3)
    scores = equal_systems_panel(rng, 40, 8) + np.linspace(0, 0.25, 8)
    first, second = all_pairs(8)
    p = max_t_pvalues(scores, (first, second), permutations=2000, rng=4)
    observed = abs_t(scores, first, second)
    top = int(np.argmax(observed))
    # the largest pair's p-value is the single-step max-T test's
    generator = np.random.default_rng(4)
    assert p[top] == pytest.approx(p.min())
    order = np.argsort(-observed)
    assert np.all(np.diff(p[order]) >= 0)  # monotone along the observed order
    tukey = get_paired_test("tukey-hsd")(scores, (first, second), permutations=2000, rng=generator)
    assert np.count_nonzero(p < 0.05) >= np.count_nonzero(tukey < 0.05)


def test_identical_systems_and_constant_differences() -> None:
    rng = np.random.default_rng(5)
    base = rng.random((30, 1))
    scores = np.hstack([base, base, base + 0.2 + 0.3 * rng.random((30, 1)), base + 0.1])
    p = max_t_pvalues(scores, all_pairs(4), permutations=999, rng=2)
    assert p[0] == 1.0  # identical columns: t = 0
    # column 3 is column 0 plus a constant: |t| is infinite, nothing permuted reaches it
    pair_0_3 = [(a, b) for a, b in zip(*all_pairs(4), strict=True)].index((0, 3))
    assert p[pair_0_3] == pytest.approx(1 / 1000)


def test_registered_planned_and_validated() -> None:
    scores = np.random.default_rng(0).random((10, 4))
    assert_registered("max-t", max_t_pvalues, scores)
    plan = plan_test(None, None, n_systems=4, n_queries=10, permutations=100, alpha=0.05)
    assert plan.test.value == "max-t" and plan.correction is None and plan.permutations == 200
    assert "max-T" in plan.describe() and "raised" in (plan.note or "")
    with pytest.raises(ScoringError, match="does not apply to max-t"):
        plan_test("max-t", "holm", n_systems=4, n_queries=10, permutations=100, alpha=0.05)
    with pytest.raises(ScoringError, match="permutations"):
        max_t_pvalues(scores, all_pairs(4), permutations=0)
    with pytest.raises(ScoringError, match="finite"):
        max_t_pvalues(np.where(scores > 0.5, np.nan, scores), all_pairs(4))
    assert max_t_pvalues(scores, (np.array([], int), np.array([], int))).size == 0


def test_calibration_twenty_equal_systems() -> None:
    """Family-wise error: share of null experiments with any significant pair (target <= 0.07).

    20 equal systems, 50 queries, 200 simulated experiments, alpha = 0.05,
    1,000 permutations (the panels of ``test_tukey.py``'s calibration test).
    """
    rate = null_family_wise_error("max-t")
    print(f"max-T family-wise error, 20 equal systems: {rate:.3f}")
    assert 0.01 <= rate <= 0.07


def test_equal_means_with_unequal_spreads_are_not_rejected() -> None:
    """Studentizing fixes Tukey HSD's documented weakness (``test_tukey.py``).

    8 systems with equal means, per-query noise sd 0.05 to 0.25, 50 queries,
    200 experiments: Tukey HSD rejects some pair in 10.5% of the experiments;
    max-T (measured 6.0%) stays within the 0.07 target. 20 such systems (Tukey
    HSD 17%, max-T 4.5%) are in ``tests/benchmarks/bench_max_t_power.py``.
    """
    n_systems = 8
    rng = np.random.default_rng(5)
    hits = 0
    for experiment in range(200):
        difficulty = rng.normal(0.5, 0.2, size=(50, 1))
        sds = np.linspace(0.05, 0.25, n_systems)
        panel = pd.DataFrame(difficulty + rng.normal(0, 1, (50, n_systems)) * sds)
        hits += bool(
            system_comparison(
                panel, TestSettings(test="max-t", seed=experiment)
            ).pairs.significant.any()
        )
    print(f"unequal spreads, {n_systems} systems: max-T {hits / 200:.3f}")
    assert hits / 200 <= 0.07


def test_partial_null_family_wise_error() -> None:
    """10 equal systems among 20: a false rejection among the 45 equal pairs in <= 7%."""
    rng = np.random.default_rng(9)
    effects = np.r_[np.zeros(10), np.linspace(0.1, 0.5, 10)]
    first, second = all_pairs(20)
    nulls = effects[first] == effects[second]
    hits = found = 0
    for experiment in range(100):
        difficulty = rng.normal(0.5, 0.2, size=(50, 1))
        scores = np.clip(difficulty + effects + rng.normal(0, 0.15, (50, 20)), 0.0, 1.0)
        verdicts = max_t_pvalues(scores, (first, second), rng=experiment) < 0.05
        hits += bool(verdicts[nulls].any())
        found += int(verdicts[~nulls].sum())
    print(f"partial null: false rejection in {hits}% of experiments")
    assert hits / 100 <= 0.07
    assert found > 0


def test_tiers_and_letters_when_the_verdicts_are_not_ordered_by_mean() -> None:
    """Studentized verdicts need not follow the means: a steady system differs from an
    erratic one with a closer mean. Letters still share exactly the n.s. pairs (Piepho)."""
    rng = np.random.default_rng(12)
    base = rng.normal(0.5, 0.1, size=(60, 1))
    noise = rng.normal(0, 1, (60, 4)) * np.array([0.01, 0.01, 0.6, 0.01])
    scores = base + np.array([0.30, 0.25, 0.20, 0.0]) + noise
    panel = pd.DataFrame(scores, columns=["steady", "close", "erratic", "low"])
    result = system_comparison(
        panel, TestSettings(test=None, seed=1)
    )  # the default for 4 systems: max-t
    assert result.plans["score"].test.value == "max-t"
    verdict = {(a, b): s for a, b, s in result.pairs[["a", "b", "significant"]].itertuples(False)}
    means = panel.mean()
    # not ordered by mean: steady-close (closer) significant, steady-erratic (farther) not
    assert abs(means["steady"] - means["close"]) < abs(means["steady"] - means["erratic"])
    assert verdict[("steady", "close")] and not verdict[("steady", "erratic")]
    tiers = system_tiers(result.pairs)
    letters = dict(zip(tiers["system"], tiers["letters"], strict=True))
    for (a, b), significant in verdict.items():
        assert bool(set(letters[a]) & set(letters[b])) == (not significant), (a, b, letters)
    order = tiers["system"].tolist()
    matrix = np.array(
        [[a != b and verdict.get((a, b), verdict.get((b, a), False)) for b in order] for a in order]
    )
    assert [letters[s] for s in order] == compact_letters(matrix)
    assert [letters[s] for s in order] == ["a", "b", "ab", "c"]
    assert tiers["tier"].tolist() == [1, 2, 2, 3]
