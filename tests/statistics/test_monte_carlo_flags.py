"""A pair whose p-value lies within Monte Carlo error of alpha is flagged, with the draws
that would decide it (docs/comparing-systems.md, "One family of decisions")."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from scoring.settings import TestSettings
from scoring.statistics import system_comparison
from scoring.statistics.verdicts import MC_Z, monte_carlo_error


def _two_systems(shift: float) -> pd.DataFrame:
    noise = np.random.default_rng(0).normal(0.0, 0.1, 40)
    return pd.DataFrame({"a": 0.5 + shift + noise, "b": np.full(40, 0.5)})


def test_a_p_value_near_alpha_is_flagged_with_the_draws_that_decide_it() -> None:
    settings = TestSettings(test="randomization", permutations=2000, seed=1)
    result = system_comparison(_two_systems(0.0325), settings)
    pair = result.pairs.iloc[0]
    assert 0.03 < pair["p_adjusted"] < 0.07
    p = pair["p_value"]
    assert pair["p_error"] == pytest.approx(math.sqrt(p * (1 - p) / 2000))
    assert pair["near_alpha"] and abs(pair["p_adjusted"] - 0.05) < MC_Z * pair["p_error"]
    needed = int(pair["permutations_to_decide"])
    assert needed > 2000
    # at that many draws the same estimate would lie MC_Z errors from alpha
    at_needed = monte_carlo_error(
        np.array([pair["p_value"]]), np.array([pair["p_adjusted"]]), needed
    )[0]
    assert MC_Z * at_needed <= abs(pair["p_adjusted"] - 0.05) * (1 + 1e-9)
    note = next(line for line in result.notes if "Monte Carlo error" in line)
    assert "a vs b" in note and f"--permutations {needed:,}" in note


def test_clear_pairs_exact_and_t_test_p_values_are_not_flagged() -> None:
    clear = system_comparison(
        _two_systems(0.2), TestSettings(test="randomization", permutations=2000, seed=1)
    ).pairs.iloc[0]
    assert not clear["near_alpha"] and pd.isna(clear["permutations_to_decide"])
    t_test = system_comparison(
        _two_systems(0.0325), TestSettings(test="t", correction="none")
    ).pairs.iloc[0]
    assert np.isnan(t_test["p_error"]) and not t_test["near_alpha"]
    few = _two_systems(0.0325).iloc[:9]  # 2**9 sign vectors: enumerated, exact
    result = system_comparison(few, TestSettings(test="randomization"))
    assert result.plans["score"].exact
    exact = result.pairs.iloc[0]
    assert np.isnan(exact["p_error"]) and not exact["near_alpha"]


def test_the_holm_factor_scales_the_error() -> None:
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(rng.normal(0.5, 0.1, (40, 4)) + np.array([0.0, 0.03, 0.06, 0.09]))
    frame.columns = ["w", "x", "y", "z"]
    result = system_comparison(frame, TestSettings(test="randomization", permutations=2000, seed=2))
    pairs = result.pairs
    p = pairs["p_value"].to_numpy()
    raised = result.plans["score"].permutations
    assert raised is not None and (pairs["p_adjusted"] > pairs["p_value"]).any()
    expected = (pairs["p_adjusted"] / p) * np.sqrt(p * (1 - p) / raised)
    np.testing.assert_allclose(pairs["p_error"], expected)
