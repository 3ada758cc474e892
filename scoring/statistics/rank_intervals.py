"""Simultaneous confidence intervals for ranks.

See docs/comparing-systems.md, "Comparing many systems".

Mogstad, Romano, Shaikh & Wilhelm (2024, "Inference for ranks with
applications to mobility across neighborhoods and academic achievements
across countries", *Review of Economic Studies* 91(1)), as their R package
csranks computes them (``csranks(..., simul = TRUE, stepdown = TRUE)``): test
every ordered pair ``(j, k)``, ``H_jk: theta_j <= theta_k``, with a step-down
max statistic; with ``N-(j)`` the populations found better than ``j`` and
``N+(j)`` those found worse, ``[1 + |N-(j)|, m - |N+(j)|]`` covers the true
rank of every population at once with probability at least ``1 - alpha``.
Rank 1 is the largest value; the true rank of ``j`` is
``1 + #{k: theta_k > theta_j}`` (tied populations share the best rank), and
an interval covers it when it holds every rank that ``j``'s ties allow.

Step-down (csranks' two-sided simultaneous set): all ordered pairs start
active; the critical value is the ``1 - alpha`` quantile of the largest null
statistic over the active pairs; pairs above it are rejected and leave the
active set (their reverse stays, so later steps are one-sided), until a step
rejects nothing.

Two null distributions:

* :func:`system_rank_intervals` - systems scored on the same queries: the
  statistic of ``(j, k)`` is the difference of their score sums and its null
  distribution comes from the within-query permutations of randomized Tukey
  HSD (:func:`scoring.statistics.tukey.permuted_sums`), the same draws as the
  system comparison; the first step *is* randomized Tukey HSD. Exact when
  the systems are exchangeable (all equal), so the intervals hold the
  nominal coverage where a Gaussian approximation would not (at 63 systems
  and 50 queries a Gaussian parametric bootstrap covers 79%, its multivariate
  t version 90%, measured while choosing this design).
* :func:`gaussian_rank_intervals` - estimates with a covariance (an ORL's
  Bradley-Terry strengths): studentized differences ``(x_j - x_k) / sd_jk``
  against draws from ``N(0, Sigma)``, csranks' parametric bootstrap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.errors import ScoringError
from scoring.statistics.panel import BoolMatrix, FloatMatrix, FloatVector, IntVector
from scoring.statistics.randomization import TIE_RTOL
from scoring.statistics.tukey import checked_panel, permuted_sums

__all__ = [
    "RankIntervals",
    "gaussian_rank_intervals",
    "rank_bounds",
    "rank_interval_table",
    "system_rank_intervals",
]

#: Entries of one block of Gaussian pair statistics (float64: 32 MiB).
BLOCK_ENTRIES: Final = 1 << 22


@dataclass(frozen=True, eq=False)
class RankIntervals:
    """Simultaneous rank confidence intervals of ``m`` populations.

    Attributes
    ----------
    estimates
        The values ranked (largest is rank 1), shape ``(m,)``.
    rank
        Point rank ``1 + #{k: estimate_k > estimate_j}``.
    lower, upper
        The interval ``[lower, upper]`` per population (``1 <= lower <= rank
        <= upper <= m``).
    better
        ``better[j, k]``: ``j`` was found above ``k`` (the rejections).
    coverage
        The nominal simultaneous coverage ``1 - alpha``.
    draws
        Number of permutations or Gaussian draws behind the critical values.
    steps
        Step-down steps taken.
    """

    estimates: FloatVector
    rank: IntVector
    lower: IntVector
    upper: IntVector
    better: BoolMatrix
    coverage: float
    draws: int
    steps: int


def rank_bounds(better: BoolMatrix) -> tuple[IntVector, IntVector]:
    """``(lower, upper)`` ranks from the rejections: ``better[j, k]`` = ``j`` above ``k``.

    ``lower_j = 1 + #{k: better[k, j]}``, ``upper_j = m - #{k: better[j, k]}``
    (csranks' ``Nminus + 1`` and ``p - Nplus``).
    """
    m = better.shape[0]
    lower = 1 + better.sum(axis=0).astype(np.int64)
    upper = m - better.sum(axis=1).astype(np.int64)
    return lower, upper


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ScoringError(f"alpha must lie in (0, 1), got {alpha}")


def _step_down(
    observed: FloatMatrix,
    tolerance: float,
    null_max: Callable[[BoolMatrix], FloatVector],
    alpha: float,
) -> tuple[BoolMatrix, int]:
    """Reject ordered pairs step by step (csranks' ``csdiffmeans`` loop).

    ``observed[j, k]`` is the statistic of ``H_jk: theta_j <= theta_k``;
    ``null_max(active)`` the largest null statistic over the active pairs, one
    value per draw. A pair is rejected when ``(1 + #{null >= observed}) /
    (B + 1) < alpha``, the p-value convention of the system comparison.
    """
    m = observed.shape[0]
    active = ~np.eye(m, dtype=bool)
    better = np.zeros((m, m), dtype=bool)
    steps = 0
    while active.any():
        steps += 1
        null = np.sort(null_max(active))
        draws = null.size
        reached = draws - np.searchsorted(null, observed - tolerance, side="left")
        reject = active & (observed > tolerance) & ((1.0 + reached) / (draws + 1.0) < alpha)
        if not reject.any():
            break
        better |= reject
        active &= ~reject
    return better, steps


def _point_ranks(estimates: FloatVector) -> IntVector:
    return 1 + (estimates[None, :] > estimates[:, None]).sum(axis=1).astype(np.int64)


def _smallest_partner_scan(null_sums: FloatMatrix, active: BoolMatrix) -> FloatVector:
    """``max over active (j, k) of null_sums[:, j] - null_sums[:, k]``, for any ``active``.

    The reference: per system ``j``, its smallest active partner found by a
    scan of each draw's sums in ascending order.
    """
    draws, m = null_sums.shape
    order = np.argsort(null_sums, axis=1)
    ordered = np.take_along_axis(null_sums, order, axis=1)
    best = np.full(draws, -np.inf)
    rows = np.arange(draws)
    for j in np.flatnonzero(active.any(axis=1)).tolist():
        # the smallest active partner is among the (inactive + 1) smallest sums
        width = int(m - active[j].sum()) + 1
        allowed = active[j][order[:, :width]]
        smallest = ordered[rows, allowed.argmax(axis=1)]
        np.maximum(best, null_sums[:, j] - smallest, out=best)
    return best


def _suffix_minima(
    columns: FloatMatrix,
) -> tuple[FloatMatrix, IntVector, FloatMatrix]:
    """Per start ``p``: the smallest of ``columns[p:]``, its row and the second smallest.

    ``columns`` has one row per system (in some order) and one column per
    draw; each output has the same shape, row ``p`` describing rows ``p..m-1``.
    """
    m, draws = columns.shape
    smallest = np.empty_like(columns)
    second = np.empty_like(columns)
    where = np.empty((m, draws), dtype=np.int64)
    low = np.full(draws, np.inf)
    low_at = np.full(draws, -1, dtype=np.int64)
    next_low = np.full(draws, np.inf)
    for p in range(m - 1, -1, -1):
        value = columns[p]
        below = value < low
        next_low = np.where(below, low, np.minimum(next_low, value))
        low_at = np.where(below, p, low_at)
        low = np.where(below, value, low)
        smallest[p], where[p], second[p] = low, low_at, next_low
    return smallest, where, second


def _largest_null_difference(
    null_sums: FloatMatrix, sums: FloatVector, active: BoolMatrix
) -> FloatVector:
    """``max over active (j, k) of null_sums[:, j] - null_sums[:, k]``, one value per draw.

    The step-down rejects a pair when its observed difference ``sums_j -
    sums_k`` is large enough, so, with the systems in ascending order of
    ``sums``, the active partners of every ``j`` are a run from some position
    to the end (``j`` itself aside). Then ``j``'s smallest active partner is
    the smallest null sum of that run, or its second smallest when the
    smallest is ``j``'s own: suffix minima give all of them in ``O(m B)``
    instead of a scan per system. Any other ``active`` takes the scan
    (:func:`_smallest_partner_scan`); both return the same floats.
    """
    m = sums.size
    order = np.argsort(sums, kind="stable")
    ranked = active[np.ix_(order, order)] | np.eye(m, dtype=bool)
    if not bool(np.all(ranked[:, 1:] >= ranked[:, :-1])):
        return _smallest_partner_scan(null_sums, active)
    rows = np.flatnonzero(active[order].any(axis=1))
    if rows.size == 0:
        return np.full(null_sums.shape[0], -np.inf)
    columns = np.ascontiguousarray(null_sums[:, order].T)
    smallest, where, second = _suffix_minima(columns)
    starts = m - ranked[rows].sum(axis=1)
    partner = np.where(where[starts] == rows[:, None], second[starts], smallest[starts])
    return np.asarray((columns[rows] - partner).max(axis=0))


def system_rank_intervals(
    scores: npt.ArrayLike,
    *,
    alpha: float = 0.05,
    permutations: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> RankIntervals:
    """Simultaneous rank intervals of systems from their per-query scores.

    Parameters
    ----------
    scores
        Per-query scores, shape ``(n_queries, n_systems)``, finite; larger is
        better.
    alpha
        One minus the simultaneous coverage.
    permutations
        Number ``B`` of within-query permutations (randomized Tukey HSD's).
    rng
        A :class:`numpy.random.Generator` or a seed for one.

    Returns
    -------
    RankIntervals
        On the system means.

    Raises
    ------
    ScoringError
        For a bad panel, ``alpha`` or ``permutations``.

    Examples
    --------
    >>> import numpy as np
    >>> scores = np.array([[0.9, 0.5, 0.1]] * 20) + np.linspace(0, 0.05, 20)[:, None]
    >>> result = system_rank_intervals(scores, permutations=200, rng=0)
    >>> result.lower.tolist(), result.upper.tolist()
    ([1, 2, 3], [1, 2, 3])
    """
    _check_alpha(alpha)
    matrix = checked_panel(scores, permutations)
    generator = np.random.default_rng(rng)
    centred = matrix - matrix.mean(axis=1, keepdims=True)
    sums = centred.sum(axis=0)
    null_sums = permuted_sums(centred, permutations, generator)

    def null_max(active: BoolMatrix) -> FloatVector:
        return _largest_null_difference(null_sums, sums, active)

    observed = sums[:, None] - sums[None, :]
    tolerance = TIE_RTOL * 2.0 * float(np.abs(centred).sum(axis=0).max(initial=0.0))
    better, steps = _step_down(observed, tolerance, null_max, alpha)
    lower, upper = rank_bounds(better)
    means = matrix.mean(axis=0)
    return RankIntervals(
        means, _point_ranks(means), lower, upper, better, 1.0 - alpha, permutations, steps
    )


def _gaussian_draws(covariance: FloatMatrix, draws: int, rng: np.random.Generator) -> FloatMatrix:
    """``draws`` rows from ``N(0, covariance)`` (positive semi-definite, possibly singular)."""
    values, vectors = np.linalg.eigh(covariance)
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    return np.asarray(rng.standard_normal((draws, covariance.shape[0])) @ root.T)


def gaussian_rank_intervals(
    estimates: npt.ArrayLike,
    covariance: npt.ArrayLike,
    *,
    alpha: float = 0.05,
    draws: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> RankIntervals:
    """Simultaneous rank intervals from estimates and their covariance (csranks).

    Parameters
    ----------
    estimates
        Values to rank, shape ``(m,)``, ``m >= 2``; larger is better.
    covariance
        Their ``(m, m)`` covariance (e.g. the Fisher or sandwich covariance
        of Bradley-Terry strengths).
    alpha
        One minus the simultaneous coverage.
    draws
        Parametric bootstrap draws from ``N(0, covariance)``.
    rng
        A :class:`numpy.random.Generator` or a seed for one.

    Returns
    -------
    RankIntervals
        Pairs whose difference has no variance are never rejected.

    Raises
    ------
    ScoringError
        For mismatched shapes, non-finite values, ``m < 2`` or a bad ``alpha``.
    """
    _check_alpha(alpha)
    x = np.asarray(estimates, dtype=np.float64)
    cov = np.asarray(covariance, dtype=np.float64)
    m = x.size
    if x.ndim != 1 or m < 2 or cov.shape != (m, m):
        raise ScoringError(
            f"need m >= 2 estimates and an (m, m) covariance, got {x.shape}, {cov.shape}"
        )
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(cov))):
        raise ScoringError("estimates and covariance must be finite")
    if draws < 1:
        raise ScoringError(f"draws must be at least 1, got {draws}")
    generator = np.random.default_rng(rng)
    variance = np.diag(cov)
    sd = np.sqrt(np.clip(variance[:, None] + variance[None, :] - 2.0 * cov, 0.0, None))
    scale = float(np.sqrt(max(variance.max(initial=0.0), 0.0)))
    usable = sd > TIE_RTOL * max(scale, 1e-300)
    z = _gaussian_draws(cov, draws, generator)
    observed = np.full((m, m), -np.inf)
    np.divide(x[:, None] - x[None, :], sd, out=observed, where=usable)

    def null_max(active: BoolMatrix) -> FloatVector:
        first, second = np.nonzero(active & usable)
        best = np.full(draws, -np.inf)
        block = max(1, BLOCK_ENTRIES // max(draws, 1))
        for lo in range(0, first.size, block):
            f, s = first[lo : lo + block], second[lo : lo + block]
            stats = (z[:, f] - z[:, s]) / sd[f, s]
            np.maximum(best, stats.max(axis=1), out=best)
        return best

    better, steps = _step_down(observed, 1e-9, null_max, alpha)
    lower, upper = rank_bounds(better)
    return RankIntervals(x, _point_ranks(x), lower, upper, better, 1.0 - alpha, draws, steps)


def rank_interval_table(
    panels: Mapping[str, pd.DataFrame],
    *,
    alpha: float = 0.05,
    permutations: int = 1000,
    seed: int | None = None,
) -> pd.DataFrame:
    """Rank intervals of every measure's systems, as one table.

    Parameters
    ----------
    panels
        Measure -> panel (one column per system, one row per query), e.g.
        :func:`scoring.statistics.score_panels`; panels with fewer than two
        systems are skipped.
    alpha, permutations
        As in :func:`system_rank_intervals`.
    seed
        Every measure's draws come from this seed.

    Returns
    -------
    pandas.DataFrame
        One row per (measure, system), best first: ``measure, system, mean,
        rank, rank_lo, rank_hi``.
    """
    frames = []
    for measure, panel in panels.items():
        if panel.shape[1] < 2 or panel.shape[0] < 1:
            continue
        result = system_rank_intervals(
            panel.to_numpy(dtype=np.float64), alpha=alpha, permutations=permutations, rng=seed
        )
        frame = pd.DataFrame(
            {
                "measure": measure,
                "system": [str(c) for c in panel.columns],
                "mean": result.estimates,
                "rank": result.rank,
                "rank_lo": result.lower,
                "rank_hi": result.upper,
            }
        )
        frames.append(frame.sort_values(["rank", "system"], kind="stable"))
    columns = ["measure", "system", "mean", "rank", "rank_lo", "rank_hi"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
