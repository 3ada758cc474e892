"""Test plans (no configuration that cannot reject runs silently), tiers, letters, power."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scoring.errors import ScoringError
from scoring.settings import TestSettings
from scoring.statistics import (
    SignificanceTest,
    compact_letters,
    default_test,
    leader_tiers,
    plan_test,
    power_analysis,
    system_comparison,
    system_tiers,
)
from scoring.statistics import tiers as tiers_module


def plan(test: str | None, correction: str | None = None, **kw: int | float) -> object:
    settings = {"n_systems": 63, "n_queries": 50, "permutations": 1000, "alpha": 0.05}
    settings.update(kw)
    return plan_test(test, correction, **settings)  # type: ignore[arg-type]


def test_default_test_depends_on_the_number_of_systems() -> None:
    assert default_test(2) is SignificanceTest.randomization
    assert default_test(3) is SignificanceTest.max_t
    assert plan(None).test is SignificanceTest.max_t  # type: ignore[attr-defined]
    assert plan(None, n_systems=2).test is SignificanceTest.randomization  # type: ignore[attr-defined]


def test_holm_over_many_pairs_raises_the_flips_to_reach_alpha_over_ten() -> None:
    raised = plan("randomization", "holm")
    # 1953 pairs: 1953 / (B + 1) < 0.005  <=>  B >= 390,600
    assert raised.permutations == 390_600  # type: ignore[attr-defined]
    assert raised.smallest_p < 0.005 <= 1953 / 390_600  # type: ignore[attr-defined]
    assert "raised to 390,600" in raised.note and raised.warning is None  # type: ignore[attr-defined]
    unchanged = plan("randomization", "holm", n_systems=2)
    assert unchanged.permutations == 1000 and unchanged.note is None  # type: ignore[attr-defined]
    none = plan("randomization", "none")
    assert none.permutations == 1000 and none.smallest_p == pytest.approx(1 / 1001)  # type: ignore[attr-defined]
    tukey = plan("tukey-hsd", permutations=100)
    assert tukey.permutations == 200 and "raised" in tukey.note  # type: ignore[attr-defined]
    assert tukey.correction is None  # type: ignore[attr-defined]


def test_few_queries_are_enumerated_and_impossible_configurations_warn() -> None:
    exact = plan("randomization", "holm", n_systems=2, n_queries=9)
    assert exact.exact and exact.permutations is None  # type: ignore[attr-defined]
    assert exact.smallest_p == pytest.approx(2.0**-8)  # type: ignore[attr-defined]
    assert "2**9 sign vectors enumerated" in exact.note  # type: ignore[attr-defined]
    assert exact.warning is None  # type: ignore[attr-defined]
    weak = plan("randomization", "holm", n_systems=4, n_queries=8)
    assert weak.exact and weak.smallest_p == pytest.approx(6 / 128)  # type: ignore[attr-defined]
    assert "only the clearest differences" in weak.warning  # type: ignore[attr-defined]
    hopeless = plan("randomization", "bonferroni", n_systems=10, n_queries=6)
    assert "no pair can be significant" in hopeless.warning  # type: ignore[attr-defined]
    capped = plan("randomization", "holm", n_systems=200)
    assert capped.permutations == 1_000_000 and capped.warning  # type: ignore[attr-defined]
    assert plan("t", "holm").warning is None  # type: ignore[attr-defined]


def test_exact_enumeration_in_compare_matches_the_plan() -> None:
    rng = np.random.default_rng(4)
    shift = np.array([0.6, 0.2, 0.1, 0.0])
    panel = pd.DataFrame(rng.random((8, 4)) + shift, columns=list("abcd"))
    result = system_comparison(panel, TestSettings(test="randomization", correction="holm", seed=1))
    assert result.plans["score"].exact
    assert result.warnings and "only the clearest differences" in result.warnings[0]
    # exact p-values are multiples of 2**-8
    assert np.allclose(result.pairs["p_value"] * 256, np.round(result.pairs["p_value"] * 256))


def test_invalid_combinations_are_refused() -> None:
    with pytest.raises(ScoringError, match="does not apply to tukey-hsd"):
        plan("tukey-hsd", "holm")
    with pytest.raises(ScoringError, match="valid tests: randomization, t, tukey-hsd"):
        plan("wilcoxon")
    with pytest.raises(ScoringError, match="valid corrections"):
        plan("randomization", "fdr")


def test_leader_tiers_and_letters_hand_worked() -> None:
    # sorted best first: a b c d; a-c, a-d, b-d significant; b-c, c-d, a-b not
    significant = np.zeros((4, 4), dtype=bool)
    for i, j in [(0, 2), (0, 3), (1, 3)]:
        significant[i, j] = significant[j, i] = True
    assert leader_tiers(significant).tolist() == [1, 1, 2, 2]  # c opens tier 2 (vs leader a)
    assert compact_letters(significant) == ["a", "ab", "bc", "c"]
    assert compact_letters(np.zeros((3, 3), dtype=bool)) == ["a", "a", "a"]
    everything = ~np.eye(3, dtype=bool)
    assert compact_letters(everything) == ["a", "b", "c"]
    assert leader_tiers(everything).tolist() == [1, 2, 3]


def test_letters_share_a_letter_exactly_when_not_significant() -> None:
    rng = np.random.default_rng(0)
    for _ in range(30):
        m = int(rng.integers(3, 12))
        upper = np.triu(rng.random((m, m)) < 0.4, k=1)
        significant = upper | upper.T
        letters = compact_letters(significant)
        for i in range(m):
            for j in range(i + 1, m):
                shares = bool(set(letters[i]) & set(letters[j]))
                assert shares == (not significant[i, j]), (significant, letters)


def _shares_iff_not_significant(significant: np.ndarray, letters: list[str]) -> bool:
    tokens = [set(x.split(",")) if "," in x else set(x) for x in letters]
    m = len(letters)
    return all(
        bool(tokens[i] & tokens[j]) == (not significant[i, j])
        for i in range(m)
        for j in range(i + 1, m)
    )


def test_letters_stay_valid_and_fast_for_orders_and_for_tangles() -> None:
    rng = np.random.default_rng(1)
    means = np.sort(rng.random(150))[::-1]
    ordered = np.abs(means[:, None] - means[None, :]) > 0.1  # Tukey-like: by distance only
    exact = compact_letters(ordered)  # the ordered fast path (maximal runs)
    assert _shares_iff_not_significant(ordered, exact)
    small = ordered[:40, :40]
    assert compact_letters(small) == tiers_module._letters_of(tiers_module._insert_absorb(small))
    upper = np.triu(rng.random((60, 60)) < 0.4, k=1)
    tangle = upper | upper.T  # far from any order: exponentially many maximal groups
    assert _shares_iff_not_significant(tangle, compact_letters(tangle))  # greedy fallback


def test_system_tiers_from_a_comparison() -> None:
    rng = np.random.default_rng(8)
    base = rng.normal(0.5, 0.2, size=(60, 1))
    scores = base + np.array([0.3, 0.28, 0.0, -0.02, -0.3]) + rng.normal(0, 0.05, (60, 5))
    panel = pd.DataFrame(scores, columns=["v", "w", "x", "y", "z"])
    result = system_comparison(panel, TestSettings(test="tukey-hsd", seed=3))
    tiers = result.tiers()
    assert tiers["system"].tolist() == ["v", "w", "x", "y", "z"]
    assert tiers["tier"].tolist() == [1, 1, 2, 2, 3]
    assert tiers["letters"].tolist() == ["a", "a", "b", "b", "c"]
    assert system_tiers(result.pairs.iloc[0:0]).empty


def _spread_panel(rng: np.random.Generator, spread: float) -> tuple[pd.DataFrame, np.ndarray]:
    """20 systems whose true means step evenly over ``spread``; 50 queries; noise sd 0.15."""
    effects = np.linspace(0.0, spread, 20)
    difficulty = rng.normal(0.5, 0.2, size=(50, 1))
    scores = np.clip(difficulty + effects + rng.normal(0.0, 0.15, size=(50, 20)), 0.0, 1.0)
    return pd.DataFrame(scores), effects


@pytest.mark.parametrize("spread", [0.1, 0.15, 0.2, 0.3, 0.5])
def test_max_t_power_at_least_sign_flips_with_holm_at_raised_flips(spread: float) -> None:
    """Side by side: share of truly different pairs found, 20 simulated experiments each.

    20 systems, 50 queries, noise sd 0.15; max-t and tukey-hsd at 1,000
    permutations, sign flips + Holm at the raised 38,000 flips. Measured here
    (max-T / Tukey HSD / Holm): spread 0.10: 0.033 / 0.035 / 0.027; 0.15:
    0.130 / 0.138 / 0.116; 0.20: 0.260 / 0.248 / 0.241; 0.30: 0.460 / 0.398 /
    0.444; 0.50: 0.650 / 0.511 / 0.646. The single-step Tukey HSD loses to
    Holm once the means spread widely; the studentized step-down does not
    (docs/comparing-systems.md, "Comparing many systems"; 100 experiments each in
    ``tests/benchmarks/bench_max_t_power.py``).
    """
    rng = np.random.default_rng(int(spread * 1000))
    found: dict[str, list[float]] = {"max-t": [], "tukey-hsd": [], "randomization": []}
    for experiment in range(20):
        panel, effects = _spread_panel(rng, spread)
        first, second = np.triu_indices(20, k=1)
        different = effects[first] != effects[second]
        for test, values in found.items():
            result = system_comparison(panel, TestSettings(test=test, seed=experiment))
            if test == "randomization":  # 190 pairs, raised from 1,000 for Holm
                assert result.plans["score"].permutations == 38_000
            values.append(result.pairs["significant"].to_numpy()[different].mean())
    means = {test: float(np.mean(values)) for test, values in found.items()}
    print(f"spread {spread}: " + ", ".join(f"{t} {m:.4f}" for t, m in means.items()))
    assert means["max-t"] >= means["randomization"] > 0


def test_power_under_max_t_is_family_wise() -> None:
    rng = np.random.default_rng(6)
    panel, _ = _spread_panel(rng, 0.3)
    kw = {"budgets": [10, 50], "subsamples": 30, "permutations": 300, "seed": 2}
    hsd = power_analysis(panel, test=None, **kw)  # type: ignore[arg-type]
    raw = power_analysis(panel, test="randomization", **kw)  # type: ignore[arg-type]
    assert hsd.test == "max-t" and hsd.permutations == 300
    # family-wise over 190 pairs is stricter than 190 unadjusted tests
    assert np.all(hsd.power_median <= raw.power_median)
    assert hsd.power_p90[-1] > hsd.power_p90[0]


def test_calibration_sign_flips_with_holm_at_raised_flips() -> None:
    """Family-wise error of the raised sign-flip test with Holm: 8 equal systems, 200 experiments.

    28 pairs: 1,000 flips are raised to 5,600. Measured: 0.040 (Holm is
    conservative: it ignores the correlation between pairs).
    """
    rng = np.random.default_rng(77)
    hits = 0
    for experiment in range(200):
        difficulty = rng.normal(0.5, 0.2, size=(50, 1))
        panel = pd.DataFrame(np.clip(difficulty + rng.normal(0, 0.15, (50, 8)), 0, 1))
        result = system_comparison(panel, TestSettings(test="randomization", seed=experiment))
        assert result.plans["score"].permutations == 5_600
        hits += bool(result.pairs["significant"].any())
    print(f"sign flips + Holm family-wise error, 8 equal systems: {hits / 200:.3f}")
    assert hits / 200 <= 0.07
