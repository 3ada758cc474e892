"""compare_systems: every pair, per measure, with adjusted p-values and win counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scoring.errors import ScoringError
from scoring.settings import TestSettings
from scoring.statistics import (
    COMPARISON_COLUMNS,
    holm_adjust,
    score_panels,
    system_comparison,
    wins_ties_losses,
)


@pytest.fixture
def panel() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    base = rng.random(120)
    return pd.DataFrame(
        {
            "good": np.clip(base + 0.15, 0, 1),
            "same": base,
            "copy": base.copy(),
        },
        index=[f"q{i}" for i in range(120)],
    )


def test_rows_columns_and_values(panel: pd.DataFrame) -> None:
    result = system_comparison(
        panel, TestSettings(test="randomization", permutations=500, seed=3), measure="RDQ@5"
    ).pairs
    assert tuple(result.columns) == COMPARISON_COLUMNS
    assert list(zip(result["a"], result["b"], strict=True)) == [
        ("good", "same"),
        ("good", "copy"),
        ("same", "copy"),
    ]
    assert set(result["measure"]) == {"RDQ@5"}
    np.testing.assert_allclose(result["mean_a"], panel.mean()[["good", "good", "same"]])
    np.testing.assert_allclose(result["diff"], result["mean_a"] - result["mean_b"])
    good_vs_same = result.iloc[0]
    # 500 flips are raised to 600 so that Holm over 3 pairs can reach alpha/10: 3/601 < 0.005
    assert good_vs_same["p_value"] == pytest.approx(1 / 601)
    assert bool(good_vs_same["significant"])
    same_vs_copy = result.iloc[2]
    assert same_vs_copy["p_value"] == 1.0 and not same_vs_copy["significant"]
    assert (same_vs_copy["wins"], same_vs_copy["ties"], same_vs_copy["losses"]) == (0, 120, 0)
    np.testing.assert_allclose(result["p_adjusted"], holm_adjust(result["p_value"].to_numpy()))
    assert (result["wins"] + result["ties"] + result["losses"] == 120).all()


def test_wins_ties_losses_hand_counted() -> None:
    diffs = np.array([[0.1, 0.0], [-0.2, 0.0], [0.0, 0.3], [0.5, -0.1]])
    wins, ties, losses = wins_ties_losses(diffs)
    assert wins.tolist() == [2, 1] and ties.tolist() == [1, 2] and losses.tolist() == [1, 1]


def test_several_measures_are_independent_of_each_other(panel: pd.DataFrame) -> None:
    other = panel.sub(0.01 * np.arange(3), axis=1).rename(columns=str)
    both = system_comparison(
        {"m1": panel, "m2": other}, TestSettings(test="randomization", permutations=200, seed=4)
    ).pairs
    alone = system_comparison(
        {"m2": other}, TestSettings(test="randomization", permutations=200, seed=4)
    ).pairs
    assert len(both) == 6 and list(both["measure"].unique()) == ["m1", "m2"]
    pd.testing.assert_frame_equal(both[both["measure"] == "m2"].reset_index(drop=True), alone)


def test_correction_and_test_options(panel: pd.DataFrame) -> None:
    raw = system_comparison(
        panel, TestSettings(test="randomization", correction="none", permutations=200, seed=1)
    ).pairs
    np.testing.assert_array_equal(raw["p_adjusted"], raw["p_value"])
    bonf = system_comparison(
        panel, TestSettings(test="randomization", correction="bonferroni", permutations=200, seed=1)
    ).pairs
    np.testing.assert_allclose(bonf["p_adjusted"], np.minimum(1, 3 * bonf["p_value"]))
    t_test = system_comparison(panel, TestSettings(test="t")).pairs
    assert t_test.loc[0, "p_value"] < 1e-10 and t_test.loc[2, "p_value"] == 1.0


def test_reproducible_with_seed(panel: pd.DataFrame) -> None:
    noisy = panel.assign(same=panel["same"] + np.random.default_rng(2).normal(0, 0.05, 120))
    first = system_comparison(
        noisy, TestSettings(test="randomization", permutations=300, seed=9)
    ).pairs
    pd.testing.assert_frame_equal(
        first,
        system_comparison(
            noisy, TestSettings(test="randomization", permutations=300, seed=9)
        ).pairs,
    )


def test_bad_input(panel: pd.DataFrame) -> None:
    with pytest.raises(ScoringError, match="at least 2 systems"):
        system_comparison(panel[["good"]], TestSettings(test="randomization"))
    with pytest.raises(ScoringError, match="'same' on query 'q3'"):
        system_comparison(
            panel.assign(same=panel["same"].where(panel.index != "q3")),
            TestSettings(test="randomization"),
        )
    with pytest.raises(ScoringError, match="valid corrections"):
        system_comparison(panel, TestSettings(test="randomization", correction="fdr"))
    with pytest.raises(ScoringError, match="alpha"):
        system_comparison(panel, TestSettings(test="randomization", alpha=1.5))


def test_score_panels_pair_queries_that_every_system_defines() -> None:
    index = pd.Index(["q1", "q2", "q3"], name="query")
    first = pd.DataFrame({"m": [0.1, 0.2, np.nan], "n": [1.0, 1.0, 1.0]}, index=index)
    second = pd.DataFrame({"m": [0.4, 0.3], "n": [0.0, 0.5]}, index=pd.Index(["q2", "q1"]))
    panels = score_panels({"A": first, "B": second})
    assert list(panels) == ["m", "n"]
    assert panels["m"].to_dict(orient="index") == {
        "q1": {"A": 0.1, "B": 0.3},
        "q2": {"A": 0.2, "B": 0.4},
    }
    assert list(panels["n"].index) == ["q1", "q2"]  # q3: not scored by B
    with pytest.raises(ScoringError, match="'AP@5' was not computed for"):
        score_panels({"A": first, "B": second}, ["AP@5"])
