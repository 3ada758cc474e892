"""Holm and Bonferroni adjustments against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.errors import ScoringError
from scoring.statistics import adjust_pvalues, bonferroni_adjust, holm_adjust


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # sorted 0.005, 0.01, 0.03, 0.04 -> 4*0.005, 3*0.01, 2*0.03, 1*0.04 = 0.02, 0.03,
        # 0.06, 0.04 -> running max 0.02, 0.03, 0.06, 0.06
        ([0.01, 0.04, 0.03, 0.005], [0.03, 0.06, 0.06, 0.02]),
        # 3*0.01 = 0.03, 2*0.2 = 0.4, 1*0.5 = 0.5
        ([0.5, 0.2, 0.01], [0.5, 0.4, 0.03]),
        # tie: 2*0.02 = 0.04, 1*0.02 = 0.02 -> running max 0.04, 0.04
        ([0.02, 0.02], [0.04, 0.04]),
        # capped at 1: 3*0.4 = 1.2 -> 1, then running max keeps 1
        ([0.4, 0.9, 0.45], [1.0, 1.0, 1.0]),
        ([0.3], [0.3]),
    ],
)
def test_holm_hand_computed(raw: list[float], expected: list[float]) -> None:
    np.testing.assert_allclose(holm_adjust(raw), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(adjust_pvalues(raw, "holm"), expected, rtol=0, atol=1e-12)


def test_bonferroni_and_none() -> None:
    np.testing.assert_allclose(bonferroni_adjust([0.3, 0.01, 0.2]), [0.9, 0.03, 0.6])
    np.testing.assert_allclose(adjust_pvalues([0.6, 0.1], "bonferroni"), [1.0, 0.2])
    np.testing.assert_array_equal(adjust_pvalues([0.6, 0.1], "none"), [0.6, 0.1])
    assert holm_adjust([]).shape == (0,)


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_holm_between_raw_and_bonferroni_and_order_preserving(raw: list[float]) -> None:
    p = np.array(raw)
    holm = holm_adjust(p)
    assert np.all(holm >= p - 1e-15)
    assert np.all(holm <= bonferroni_adjust(p) + 1e-15)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(holm[order]) >= 0)


def test_bad_input() -> None:
    with pytest.raises(ScoringError, match="valid corrections: holm, bonferroni, none"):
        adjust_pvalues([0.1], "sidak")
    with pytest.raises(ScoringError, match=r"\[0, 1\]"):
        holm_adjust([0.1, 1.5])
