"""Power@n, discriminative power and stability on simulated panels with a known ordering."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from scoring.errors import ScoringError
from scoring.statistics import (
    as_panel,
    default_budgets,
    first_budget_reaching,
    kendall_tau_rows,
    normalised_auc,
    power_analysis,
    power_analysis_steps,
    randomization_pvalues,
)

SMALL = {"subsamples": 40, "permutations": 200}


def simulated_panel(effect: float, *, n_queries: int = 400, n_systems: int = 5) -> pd.DataFrame:
    """Systems s0 < s1 < ... whose true means step up by ``effect``; query difficulty shared."""
    rng = np.random.default_rng(42)
    difficulty = rng.normal(0.5, 0.2, size=(n_queries, 1))
    noise = rng.normal(0.0, 0.15, size=(n_queries, n_systems))
    scores = np.clip(difficulty + effect * np.arange(n_systems) + noise, 0.0, 1.0)
    return pd.DataFrame(scores, columns=[f"s{i}" for i in range(n_systems)])


def test_stability_rises_with_the_budget() -> None:
    result = power_analysis(simulated_panel(0.02), budgets=[10, 50, 200, 400], seed=1, **SMALL)
    tau = result.stability
    assert np.all(np.diff(tau) > 0)
    assert tau[-1] == 1.0  # the budget of all queries reproduces the full ordering
    assert tau[0] < 0.8
    assert result.tau80_budget in (50, 200)


def test_power_rises_with_effect_size_and_budget() -> None:
    budgets = [20, 80, 200]
    small = power_analysis(simulated_panel(0.01), budgets=budgets, seed=2, **SMALL)
    large = power_analysis(simulated_panel(0.04), budgets=budgets, seed=2, **SMALL)
    assert np.all(large.power_median > small.power_median)
    assert np.all(np.diff(large.power_median) > 0)
    assert np.all(large.power_p90 >= large.power_median)
    assert large.discriminative_power == 1.0
    assert large.n80 is not None and (small.n80 is None or small.n80 > large.n80)


def test_identical_systems_have_no_power() -> None:
    base = simulated_panel(0.0, n_systems=1)["s0"]
    panel = pd.DataFrame({"a": base, "b": base, "c": base})
    result = power_analysis(panel, budgets=[30], seed=0, **SMALL)
    assert result.discriminative_power == 0.0
    assert np.all(result.pair_power == 0.0)
    assert np.isnan(result.stability[0])  # all systems tie: no ordering to agree with
    assert result.tau80_budget is None


def test_reproducible_and_independent_of_other_budgets() -> None:
    panel = simulated_panel(0.015, n_queries=150)
    one = power_analysis(panel, budgets=[25, 50], seed=7, **SMALL)
    again = power_analysis(panel, budgets=[50, 25], seed=7, **SMALL)
    alone = power_analysis(panel, budgets=[50], seed=7, **SMALL)
    np.testing.assert_array_equal(one.pair_power, again.pair_power)
    np.testing.assert_array_equal(one.taus, again.taus)
    np.testing.assert_array_equal(one.pair_power[1], alone.pair_power[0])
    np.testing.assert_array_equal(one.taus[1], alone.taus[0])
    other = power_analysis(panel, budgets=[25, 50], seed=8, **SMALL)
    assert not np.array_equal(one.taus, other.taus)


def test_progress_is_reported_per_subsample() -> None:
    calls: list[int] = []
    power_analysis(
        simulated_panel(0.02, n_queries=60),
        budgets=[10, 20, 30],
        subsamples=7,
        permutations=50,
        seed=0,
        progress=lambda n=1: calls.append(n),
    )
    assert sum(calls) == power_analysis_steps(3, 7) == 22


def test_json_shape_and_t_test() -> None:
    result = power_analysis(simulated_panel(0.03), budgets=[25, 50], test="t", seed=3, **SMALL)
    doc = result.to_dict()
    assert set(doc) == {
        "power",
        "n80",
        "discriminative_power",
        "stability",
        "tau80_budget",
        "auc_tau",
    }
    assert set(doc["power"]) == {"25", "50"} and set(doc["power"]["25"]) == {"median", "p90"}
    assert doc["stability"]["50"] == pytest.approx(result.stability[1])
    assert doc["auc_tau"] == pytest.approx(result.stability.mean())  # two budgets: the mean
    assert result.pair_power.shape == (2, 10) and len(result.pairs) == 10
    assert list(result.summary().index) == [25, 50]


def test_budget_validation_and_defaults() -> None:
    assert default_budgets(5000) == list(range(25, 501, 25))
    assert default_budgets(130) == [25, 50, 75, 100, 125]
    assert default_budgets(12) == [12]
    panel = simulated_panel(0.02, n_queries=40)
    with pytest.raises(ScoringError, match="between 1 and the 40 shared queries"):
        power_analysis(panel, budgets=[20, 50], **SMALL)
    with pytest.raises(ScoringError, match="subsamples"):
        power_analysis(panel, budgets=[20], subsamples=0)


def test_summaries_hand_computed() -> None:
    assert first_budget_reaching([25, 50, 75], [0.5, 0.8, 0.9]) == 50
    assert first_budget_reaching([25, 50], [0.5, np.nan]) is None
    # trapezoid over 25..75 of (0.5, 0.7, 0.9): 25*(0.6 + 0.8) = 35, / 50 = 0.7
    assert normalised_auc([25, 50, 75], [0.5, 0.7, 0.9]) == pytest.approx(0.7)
    assert normalised_auc([100], [0.6]) == pytest.approx(0.6)


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.float64, (4, 6), elements=st.sampled_from([0.0, 0.25, 0.5, 1.0])),
    arrays(np.float64, 6, elements=st.sampled_from([0.0, 0.3, 0.6, 0.9])),
)
def test_vectorised_kendall_tau_equals_scipy(rows: np.ndarray, reference: np.ndarray) -> None:
    ours = kendall_tau_rows(rows, reference)
    theirs = [stats.kendalltau(row, reference).statistic for row in rows]
    np.testing.assert_allclose(ours, theirs, equal_nan=True, atol=1e-12)


def test_vectorised_analysis_equals_a_per_pair_loop() -> None:
    """Same random stream, one pair at a time with scipy's Kendall tau: identical results."""
    panel = simulated_panel(0.02, n_queries=60, n_systems=4)
    # the analysis draws on the panel with its systems and queries sorted
    scores = as_panel(panel).canonical().scores
    budgets, subsamples, permutations, alpha = [10, 30], 12, 99, 0.1
    result = power_analysis(
        panel, budgets=budgets, subsamples=subsamples, permutations=permutations,
        alpha=alpha, seed=11,
    )  # fmt: skip
    pairs = [(a, b) for a in range(4) for b in range(a + 1, 4)]
    entropy = np.random.SeedSequence(11).entropy
    for row, budget in enumerate(budgets):
        rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(1, budget)))
        rejections, taus = np.zeros(len(pairs)), []
        for _ in range(subsamples):
            subset = rng.choice(60, size=budget, replace=False)
            start = rng.bit_generator.state
            for k, (a, b) in enumerate(pairs):
                rng.bit_generator.state = start  # every pair sees the same sign flips
                diffs = scores[subset, a] - scores[subset, b]
                p = randomization_pvalues(diffs, permutations=permutations, rng=rng)[0]
                rejections[k] += p < alpha
            means = scores[subset].mean(axis=0)
            taus.append(stats.kendalltau(means, scores.mean(axis=0)).statistic)
        np.testing.assert_array_equal(result.pair_power[row], rejections / subsamples)
        np.testing.assert_allclose(result.taus[row], taus, atol=1e-12)
