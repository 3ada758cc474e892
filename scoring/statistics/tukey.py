"""Randomized Tukey HSD over all pairs of systems (Carterette, TOIS 2012).

docs/comparing-systems.md, "Comparing many systems": under the null hypothesis that all systems
are equal, the system labels are exchangeable within each query. Each of ``B``
permutations shuffles every query's scores across the systems independently;
the statistic of a permutation is the range (largest minus smallest) of the
system means. A pair's p-value is family-wise adjusted over all pairs at once:
``p_ab = (1 + #{range_b >= |mean_a - mean_b|}) / (B + 1)``. Rejecting where
``p_ab < alpha`` keeps the probability of any false rejection at most
``alpha`` when all systems are equal, without a Bonferroni or Holm factor.

Vectorised: a chunk of permutations is one ``(chunk, n_queries, n_systems)``
array shuffled along its last axis by :meth:`numpy.random.Generator.permuted`;
chunks bound the memory to about 32 MiB whatever the panel size.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from scoring.errors import ScoringError
from scoring.settings import TestSettings
from scoring.statistics.panel import FloatMatrix, FloatVector
from scoring.statistics.randomization import TIE_RTOL, PairIndex

__all__ = [
    "checked_panel",
    "permutation_ranges",
    "permuted_sums",
    "shuffled_panels",
    "tukey_hsd_pvalues",
]

#: Entries of one chunk of permuted scores (float64: 32 MiB).
CHUNK_ENTRIES: Final = 1 << 22
#: Entries of one chunk in :func:`permuted_sums` (2 MiB: stays in the cache, same stream).
SUMS_CHUNK_ENTRIES: Final = 1 << 18


def checked_panel(scores: npt.ArrayLike, permutations: int) -> FloatMatrix:
    """``scores`` as a finite float ``(n_queries, n_systems >= 2)`` matrix, ``permutations >= 1``.

    Raises
    ------
    ScoringError
        Naming what is wrong with either.
    """
    if permutations < 1:
        raise ScoringError(f"permutations must be at least 1, got {permutations}")
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] < 1 or matrix.shape[1] < 2:
        raise ScoringError(f"expected a (n_queries, n_systems >= 2) matrix, got {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ScoringError("per-query scores must be finite")
    return matrix


def permutation_ranges(
    scores: FloatMatrix, permutations: int, rng: np.random.Generator
) -> FloatVector:
    """Range of the system *sums* under ``permutations`` within-query shuffles.

    Parameters
    ----------
    scores
        Per-query scores, shape ``(n_queries, n_systems)``.
    permutations
        Number ``B`` of permutations.
    rng
        Source of the shuffles.

    Returns
    -------
    numpy.ndarray
        ``max - min`` of the column sums of each shuffled panel, shape ``(B,)``
        (sums, not means: the division by ``n`` cancels in the comparison).
    """
    sums = permuted_sums(scores, permutations, rng)
    return np.asarray(sums.max(axis=1) - sums.min(axis=1), dtype=np.float64)


def shuffled_panels(
    scores: FloatMatrix, copies: int, rng: np.random.Generator
) -> npt.NDArray[np.float64]:
    """``copies`` copies of ``scores``, each query's row shuffled across the systems.

    The values and the random stream of ``rng.permuted(np.broadcast_to(scores,
    (copies, n_queries, n_systems)), axis=2)``, in a C-contiguous array.
    :meth:`numpy.random.Generator.permuted` copies a broadcast input with its
    stride-0 axis innermost, so every shuffled row is strided and the shuffle
    runs about twice as slowly; here the copies are laid out first and
    shuffled in place (docs/performance.md, "Speed of the tests between systems"). The rows are
    shuffled in the same order either way, so the draws are the same.

    Parameters
    ----------
    scores
        Per-query scores, shape ``(n_queries, n_systems)``.
    copies
        Number of shuffled copies.
    rng
        Source of the shuffles.

    Returns
    -------
    numpy.ndarray
        Shape ``(copies, n_queries, n_systems)``, C-contiguous.
    """
    panels = np.empty((copies, *scores.shape), dtype=np.float64)
    panels[...] = scores
    rng.permuted(panels, axis=2, out=panels)
    return panels


def permuted_sums(scores: FloatMatrix, permutations: int, rng: np.random.Generator) -> FloatMatrix:
    """Column sums of ``permutations`` panels, each query's scores shuffled across the systems.

    Returns
    -------
    numpy.ndarray
        Shape ``(B, n_systems)``: the null distribution of the system sums
        under exchangeable systems (what :func:`permutation_ranges` reduces to
        ranges and :mod:`scoring.statistics.rank_intervals` to rank intervals).
    """
    n_queries, n_systems = scores.shape
    chunk = max(1, SUMS_CHUNK_ENTRIES // (n_queries * n_systems))
    sums = np.empty((permutations, n_systems), dtype=np.float64)
    for start in range(0, permutations, chunk):
        size = min(chunk, permutations - start)
        sums[start : start + size] = shuffled_panels(scores, size, rng).sum(axis=1)
    return sums


def tukey_hsd_pvalues(
    scores: npt.ArrayLike,
    pairs: PairIndex,
    *,
    permutations: int = TestSettings.permutations,
    rng: np.random.Generator | int | None = None,
) -> FloatVector:
    """Family-wise adjusted p-values of randomized Tukey HSD, one per pair.

    Parameters
    ----------
    scores
        Per-query scores, shape ``(n_queries, n_systems)``, finite.
    pairs
        Column indices ``(a, b)`` of the pairs to report (e.g.
        :attr:`ScorePanel.pair_index`); the permutation distribution always
        involves every system.
    permutations
        Number ``B`` of permutations.
    rng
        A :class:`numpy.random.Generator` or a seed for one.

    Returns
    -------
    numpy.ndarray
        ``(1 + #{range_b >= |d_ab|}) / (B + 1)`` per pair, shape ``(n_pairs,)``.

    Notes
    -----
    A permuted range within a relative ``1e-10`` (of the largest absolute
    column sum) of the observed difference counts as reaching it, so that two
    identical systems get ``p = 1`` despite float64 rounding.
    """
    matrix = checked_panel(scores, permutations)
    generator = np.random.default_rng(rng)
    ranges = np.sort(permutation_ranges(matrix, permutations, generator))
    sums = matrix.sum(axis=0)
    first, second = pairs
    observed = np.abs(sums[first] - sums[second])
    tolerance = TIE_RTOL * 2.0 * float(np.abs(matrix).sum(axis=0).max())
    reached = permutations - np.searchsorted(ranges, observed - tolerance, side="left")
    return np.asarray((1.0 + reached) / (permutations + 1.0), dtype=np.float64)
