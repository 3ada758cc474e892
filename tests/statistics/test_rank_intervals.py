"""Simultaneous rank intervals (docs/comparing-systems.md, "Comparing many systems")."""

from __future__ import annotations

import numpy as np
import pytest
from rank_coverage import coverage, covers

from scoring.errors import ScoringError
from scoring.statistics.rank_intervals import (
    gaussian_rank_intervals,
    rank_bounds,
    system_rank_intervals,
)
from scoring.statistics.tukey import tukey_hsd_pvalues


def test_rank_bounds_count_the_rejections() -> None:
    better = np.zeros((4, 4), dtype=bool)
    better[0, 1:] = True  # 0 above everyone
    better[1, 3] = True
    lower, upper = rank_bounds(better)
    assert lower.tolist() == [1, 2, 2, 3]
    assert upper.tolist() == [1, 3, 4, 4]


def test_well_separated_systems_get_their_exact_ranks() -> None:
    rng = np.random.default_rng(1)
    scores = np.array([0.2, 0.9, 0.5]) + rng.normal(0, 0.02, size=(30, 3))
    result = system_rank_intervals(scores, permutations=500, rng=0)
    assert result.rank.tolist() == [3, 1, 2]
    assert result.lower.tolist() == [3, 1, 2] and result.upper.tolist() == [3, 1, 2]


def test_equal_systems_get_the_whole_range() -> None:
    scores = np.tile(np.array([[0.5, 0.5, 0.5, 0.5]]), (20, 1))
    result = system_rank_intervals(scores, permutations=200, rng=0)
    assert result.lower.tolist() == [1] * 4 and result.upper.tolist() == [4] * 4


def test_first_step_is_randomized_tukey_hsd() -> None:
    """Every pair Tukey HSD rejects (same draws) is ordered in the intervals."""
    rng = np.random.default_rng(3)
    scores = np.linspace(0, 0.3, 8) + rng.normal(0, 0.2, size=(40, 8))
    result = system_rank_intervals(scores, permutations=999, rng=7)
    first, second = np.triu_indices(8, 1)
    p = tukey_hsd_pvalues(scores, (first, second), permutations=999, rng=7)
    for a, b, value in zip(first, second, p, strict=True):
        if value < 0.05:
            hi, lo = (a, b) if scores[:, a].mean() > scores[:, b].mean() else (b, a)
            assert result.better[hi, lo]


def test_intervals_hold_the_point_rank() -> None:
    rng = np.random.default_rng(4)
    scores = rng.normal(size=(25, 12)) + np.linspace(0, 1, 12)
    result = system_rank_intervals(scores, permutations=300, rng=1)
    assert np.all((result.lower <= result.rank) & (result.rank <= result.upper))
    assert result.lower.min() == 1 and result.upper.max() == 12


@pytest.mark.parametrize("m", [5, 20])
def test_seeded_coverage_of_the_true_ranks(m: int) -> None:
    """Coverage >= 0.95 within its Monte Carlo error (200 panels, 400 permutations)."""
    rate, width = coverage(m, 200, permutations=400, seed=11)
    # 200 panels: a true 0.95 gives >= 0.915 with 99% probability
    assert rate >= 0.915, rate
    assert width < m  # the intervals are informative, not the whole range


def test_covers_tells_ties_apart() -> None:
    theta = np.array([0.0, 0.0, 1.0])
    assert covers(np.array([2, 2, 1]), np.array([3, 3, 1]), theta)
    assert not covers(np.array([2, 3, 1]), np.array([2, 3, 1]), theta)  # orders a tie


def test_gaussian_intervals_follow_csranks() -> None:
    # csranks' own example shape: well-separated means with small errors are exact;
    # a large common error leaves every rank open.
    exact = gaussian_rank_intervals(np.arange(5.0), np.eye(5) * 0.01, rng=0)
    assert exact.lower.tolist() == [5, 4, 3, 2, 1] == exact.upper.tolist()
    wide = gaussian_rank_intervals(np.arange(5.0), np.eye(5) * 100.0, rng=0)
    assert wide.lower.tolist() == [1] * 5 and wide.upper.tolist() == [5] * 5


def test_gaussian_coverage_when_all_equal() -> None:
    """Family-wise: no rejection among equal estimates in >= 93% of 300 draws."""
    rng = np.random.default_rng(5)
    cov = np.full((6, 6), 0.3) + np.eye(6) * 0.7
    root = np.linalg.cholesky(cov)
    hits = 0
    for sim in range(300):
        x = root @ rng.standard_normal(6)
        result = gaussian_rank_intervals(x, cov, draws=500, rng=sim)
        hits += not result.better.any()
    assert hits / 300 >= 0.93


def test_bad_inputs() -> None:
    with pytest.raises(ScoringError, match="alpha"):
        system_rank_intervals(np.zeros((3, 3)), alpha=1.5)
    with pytest.raises(ScoringError, match="covariance"):
        gaussian_rank_intervals(np.zeros(3), np.eye(2))
