"""The fast largest null difference of system rank intervals equals the scan it replaces."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.statistics import rank_intervals
from scoring.statistics.rank_intervals import (
    _largest_null_difference,
    _smallest_partner_scan,
    system_rank_intervals,
)


def _threshold_mask(sums: np.ndarray, threshold: float) -> np.ndarray:
    """Active pairs as the step-down leaves them: ``sums_j - sums_k <= threshold``, ``j != k``."""
    active = (sums[:, None] - sums[None, :]) <= threshold
    np.fill_diagonal(active, False)
    return active


@pytest.mark.parametrize("seed", range(8))
def test_suffix_minima_equal_the_scan_on_step_down_masks(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 30))
    sums = np.round(rng.normal(size=m), 1)  # ties in the observed sums
    null_sums = np.round(rng.normal(size=(200, m)), 2)  # ties in the draws
    for threshold in (np.inf, 1.0, 0.3, 0.0, -0.1):
        active = _threshold_mask(sums, threshold)
        if not active.any():
            continue
        fast = _largest_null_difference(null_sums, sums, active)
        np.testing.assert_array_equal(fast, _smallest_partner_scan(null_sums, active))


def test_any_other_mask_takes_the_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    sums = np.arange(6.0)
    null_sums = rng.normal(size=(50, 6))
    active = rng.random((6, 6)) < 0.5
    np.fill_diagonal(active, False)
    active[0, 5], active[0, 1] = False, True  # not a run to the end in ascending sums
    calls: list[np.ndarray] = []
    scan = rank_intervals._smallest_partner_scan

    def counted(null: np.ndarray, mask: np.ndarray) -> np.ndarray:
        calls.append(mask)
        return scan(null, mask)

    monkeypatch.setattr(rank_intervals, "_smallest_partner_scan", counted)
    np.testing.assert_array_equal(
        _largest_null_difference(null_sums, sums, active), scan(null_sums, active)
    )
    assert len(calls) == 1


def test_intervals_unchanged_by_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeded intervals with the suffix minima equal those of the scan everywhere."""
    rng = np.random.default_rng(3)
    scores = np.linspace(0.0, 0.3, 25) + rng.normal(0.0, 0.1, size=(30, 25))
    fast = system_rank_intervals(scores, permutations=500, rng=4)
    monkeypatch.setattr(
        rank_intervals,
        "_largest_null_difference",
        lambda null_sums, sums, active: _smallest_partner_scan(null_sums, active),
    )
    slow = system_rank_intervals(scores, permutations=500, rng=4)
    assert fast.steps == slow.steps > 1
    np.testing.assert_array_equal(fast.lower, slow.lower)
    np.testing.assert_array_equal(fast.upper, slow.upper)
    np.testing.assert_array_equal(fast.better, slow.better)
