"""Paired two-sided randomization (sign-flip) test, vectorised over system pairs.

docs/comparing-systems.md, "Comparing many systems": under the null hypothesis that two systems are
exchangeable on every query, the sign of each per-query difference is a fair coin. The
statistic is the mean difference; ``B`` random sign vectors give the
Monte Carlo p-value ``p = (1 + #{|mean_b| >= |mean_obs|}) / (B + 1)``.

Every pair of systems shares one sign matrix, so the flipped sums of all pairs
come from one matrix product. Because a flip is linear,
``sum_i s_i (x_ai - x_bi) = (s @ x)_a - (s @ x)_b``: the product is taken with
the per-query *system* scores, ``signs (B x n) @ scores (n x m)``, and the
``m (m - 1) / 2`` pair statistics are column differences of that ``B x m``
result (5.5 times fewer operations than ``signs @ diffs (n x pairs)`` for 12
systems). The sign matrix holds 0/1 bits ``b`` and the flipped sum is recovered
as ``2 * (b @ d) - sum(d)`` (a sign is ``s = 2b - 1``), which saves a pass over
the large matrix.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from scoring.errors import ScoringError
from scoring.settings import TestSettings
from scoring.statistics.panel import FloatMatrix, FloatVector, IndexVector

BitMatrix: TypeAlias = npt.NDArray[np.uint8]
PairIndex: TypeAlias = tuple[IndexVector, IndexVector]

__all__ = [
    "EXACT_MAX_QUERIES",
    "exact_randomization_pvalues",
    "pairwise_randomization_pvalues",
    "randomization_pvalues",
]

#: Relative tolerance (of the sum of absolute scores involved) under which a flipped
#: statistic counts as tying the observed one; it absorbs the rounding of float64
#: sums (at most about ``n * 2.2e-16`` relative).
TIE_RTOL = 1e-10
#: Entries of one block of the sign matrix, and of the block's flipped sums of every
#: pair (the product is computed block by block so memory stays near 32 MiB per
#: array whatever the number of queries and pairs).
BLOCK_ENTRIES = 1 << 22
#: Largest block of flipped pair sums (sign vectors times pairs) that
#: :func:`_count_extreme_pairs` compares whole rather than one first system at a time
#: (docs/performance.md, "Speed of the tests between systems").
DIRECT_MAX_ENTRIES = 1 << 15
#: Largest number of queries for which all ``2**n`` sign vectors are enumerated.
EXACT_MAX_QUERIES = 24


def randomization_pvalues(
    diffs: npt.ArrayLike,
    *,
    permutations: int = TestSettings.permutations,
    rng: np.random.Generator | int | None = None,
) -> FloatVector:
    """Monte Carlo p-values of the paired two-sided randomization test, one per pair.

    Parameters
    ----------
    diffs
        Per-query differences ``score_a - score_b``, shape ``(n_queries, n_pairs)``
        (a 1-D array is one pair).
    permutations
        Number ``B`` of random sign vectors, shared by all pairs.
    rng
        A :class:`numpy.random.Generator` or a seed for one.

    Returns
    -------
    numpy.ndarray
        ``p = (1 + #{|mean_b| >= |mean_obs|}) / (B + 1)`` per pair, shape ``(n_pairs,)``.

    Notes
    -----
    A flipped mean within a relative ``1e-10`` of the observed one counts as
    at least as extreme, so that identical systems get ``p = 1`` and ties that
    are exact in real arithmetic survive float64 rounding.
    """
    return _monte_carlo(diffs, None, permutations, rng)


def pairwise_randomization_pvalues(
    scores: npt.ArrayLike,
    pairs: PairIndex,
    *,
    permutations: int = TestSettings.permutations,
    rng: np.random.Generator | int | None = None,
) -> FloatVector:
    """Monte Carlo randomization p-values of system pairs, from per-query system scores.

    Same test and same random stream as :func:`randomization_pvalues` on the
    differences ``scores[:, a] - scores[:, b]``, but the sign matrix is
    multiplied with the ``(n_queries, n_systems)`` scores once and the pair
    statistics are differences of the product's columns.

    Parameters
    ----------
    scores
        Per-query scores, shape ``(n_queries, n_systems)``, finite.
    pairs
        Column indices ``(a, b)`` of the pairs to test (e.g.
        :attr:`ScorePanel.pair_index`).
    permutations
        Number ``B`` of random sign vectors, shared by all pairs.
    rng
        A :class:`numpy.random.Generator` or a seed for one.

    Returns
    -------
    numpy.ndarray
        One p-value per pair, shape ``(n_pairs,)``.
    """
    return _monte_carlo(scores, pairs, permutations, rng)


def exact_randomization_pvalues(diffs: npt.ArrayLike) -> FloatVector:
    """Exact p-values of the paired randomization test over all ``2**n`` sign vectors.

    Parameters
    ----------
    diffs
        Per-query differences, shape ``(n_queries, n_pairs)``, with
        ``n_queries <= 24``.

    Returns
    -------
    numpy.ndarray
        ``#{|mean_s| >= |mean_obs|} / 2**n`` per pair (the identity flip included).
    """
    matrix = _diff_matrix(diffs)
    n_queries = matrix.shape[0]
    if n_queries > EXACT_MAX_QUERIES:
        raise ScoringError(
            f"exact enumeration of 2**{n_queries} sign vectors is too large; "
            f"use at most {EXACT_MAX_QUERIES} queries or the Monte Carlo test"
        )
    count = _count_extreme(matrix, None, _all_bits(n_queries, matrix.shape[1]))
    return count / float(1 << n_queries)


def _monte_carlo(
    values: npt.ArrayLike,
    pairs: PairIndex | None,
    permutations: int,
    rng: np.random.Generator | int | None,
) -> FloatVector:
    """Validate, then ``(1 + count) / (B + 1)`` over ``B`` random sign vectors."""
    if permutations < 1:
        raise ScoringError(f"permutations must be at least 1, got {permutations}")
    matrix = _diff_matrix(values)
    width = max(matrix.shape[0], matrix.shape[1] if pairs is None else pairs[0].size)
    rows_per_block = max(1, BLOCK_ENTRIES // width)
    bits = _random_bits(np.random.default_rng(rng), permutations, matrix.shape[0], rows_per_block)
    count = _count_extreme(matrix, pairs, bits)
    return np.asarray((1.0 + count) / (permutations + 1.0), dtype=np.float64)


def _diff_matrix(diffs: npt.ArrayLike) -> FloatMatrix:
    """Validate differences (or scores) as a finite float64 ``(n_queries, k)`` matrix."""
    matrix = np.asarray(diffs, dtype=np.float64)
    if matrix.ndim == 1:
        matrix = matrix[:, None]
    if matrix.ndim != 2 or matrix.shape[0] < 1:
        raise ScoringError(f"expected a (n_queries >= 1, k) matrix, got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ScoringError("per-query scores and differences must be finite")
    return matrix


def _random_bits(
    generator: np.random.Generator, rows: int, n_queries: int, rows_per_block: int
) -> Iterator[BitMatrix]:
    """Yield ``rows`` random 0/1 rows of length ``n_queries``, ``rows_per_block`` at a time."""
    n_bytes = (n_queries + 7) // 8
    for start in range(0, rows, rows_per_block):
        size = min(rows_per_block, rows - start)
        packed = generator.integers(0, 256, size=(size, n_bytes), dtype=np.uint8)
        yield np.unpackbits(packed, axis=1, count=n_queries)


def _all_bits(n_queries: int, n_pairs: int = 1) -> Iterator[BitMatrix]:
    """Yield all ``2**n_queries`` 0/1 rows (binary codes in order), block by block."""
    total = 1 << n_queries
    rows_per_block = max(1, BLOCK_ENTRIES // max(n_queries, n_pairs))
    shifts = np.arange(n_queries, dtype=np.int64)
    for start in range(0, total, rows_per_block):
        codes = np.arange(start, min(total, start + rows_per_block), dtype=np.int64)
        yield ((codes[:, None] >> shifts) & 1).astype(np.uint8)


def _count_extreme(
    matrix: FloatMatrix, pairs: PairIndex | None, bit_blocks: Iterable[BitMatrix]
) -> npt.NDArray[np.int64]:
    """Count sign vectors whose |flipped sum| reaches the observed |sum|, per pair.

    ``matrix`` holds differences (one column per pair, ``pairs is None``) or
    system scores (pair ``k`` is column ``pairs[0][k]`` minus ``pairs[1][k]``).
    """
    column_sums = matrix.sum(axis=0)
    scale = np.abs(matrix).sum(axis=0)
    if pairs is None:
        threshold = np.abs(column_sums) - TIE_RTOL * scale
        count = np.zeros(column_sums.shape[0], dtype=np.int64)
        for bits in bit_blocks:
            flipped = 2.0 * (bits.astype(np.float64) @ matrix) - column_sums
            count += np.count_nonzero(np.abs(flipped) >= threshold, axis=0)
        return count
    return _count_extreme_pairs(matrix, pairs, bit_blocks, column_sums, scale)


def _count_extreme_pairs(
    scores: FloatMatrix,
    pairs: PairIndex,
    bit_blocks: Iterable[BitMatrix],
    column_sums: FloatVector,
    scale: FloatVector,
) -> npt.NDArray[np.int64]:
    """:func:`_count_extreme` for system pairs.

    A block of at most :data:`DIRECT_MAX_ENTRIES` flipped pair sums is
    compared whole; larger blocks go one first system at a time
    (:func:`_count_by_first_system`). Both compare the same floats.

    ``|2 (P_a - P_b) - S_ab| >= t`` is ``P_a - P_b >= (S_ab + t) / 2`` or
    ``<= (S_ab - t) / 2``, where ``P = bits @ scores``: each group of pairs
    sharing its first system costs one subtraction and two comparisons,
    without materialising the ``(B, n_pairs)`` flipped sums. The sums are laid
    out one system per row, so a group whose second systems are consecutive
    (all pairs ``(a, b > a)``, the usual case) reads them as one slice, and the
    per-group work reuses preallocated buffers.
    """
    first, second = pairs
    sums = column_sums[first] - column_sums[second]
    threshold = np.abs(sums) - TIE_RTOL * (scale[first] + scale[second])
    high, low = (sums + threshold) / 2.0, (sums - threshold) / 2.0
    count = np.zeros(first.shape[0], dtype=np.int64)
    blocks = iter(bit_blocks)
    for bits in blocks:
        if bits.shape[0] * first.size > DIRECT_MAX_ENTRIES:
            count += _count_by_first_system(
                scores, pairs, itertools.chain([bits], blocks), high, low
            )
            break
        # a small block (power analysis: thousands of calls with a few hundred draws):
        # the per-group set-up and loop cost more than the whole (B, n_pairs) block;
        # the same floats and comparisons, so the same counts
        product = bits.astype(np.float64) @ scores
        gap = product[:, first] - product[:, second]
        count += np.count_nonzero((gap >= high) | (gap <= low), axis=0)
    return count


def _count_by_first_system(
    scores: FloatMatrix,
    pairs: PairIndex,
    bit_blocks: Iterable[BitMatrix],
    high: FloatVector,
    low: FloatVector,
) -> npt.NDArray[np.int64]:
    """:func:`_count_extreme_pairs`'s counts, one group of pairs sharing a first system at once."""
    first, second = pairs
    groups = []
    for a in np.unique(first):
        members = np.flatnonzero(first == a)
        seconds = second[members]
        start = int(seconds[0])
        consecutive = bool(np.array_equal(seconds, np.arange(start, start + seconds.size)))
        columns = slice(start, start + seconds.size) if consecutive else seconds
        groups.append((int(a), members, columns, high[members, None], low[members, None]))
    widest = max((members.size for _, members, _, _, _ in groups), default=0)
    count = np.zeros(first.shape[0], dtype=np.int64)
    for bits in bit_blocks:
        # P[k] = flipped sum of system k over the block's sign vectors, one row per system
        product = np.ascontiguousarray((bits.astype(np.float64) @ scores).T)
        rows = product.shape[1]
        gap_buffer = np.empty((widest, rows))
        reached_buffer = np.empty((widest, rows), dtype=bool)
        below_buffer = np.empty((widest, rows), dtype=bool)
        for a, members, columns, high_a, low_a in groups:
            gap = gap_buffer[: members.size]
            reached = reached_buffer[: members.size]
            below = below_buffer[: members.size]
            np.subtract(product[a], product[columns], out=gap)
            np.greater_equal(gap, high_a, out=reached)
            np.less_equal(gap, low_a, out=below)
            np.logical_or(reached, below, out=reached)
            count[members] += np.add.reduce(reached.view(np.uint8), axis=1, dtype=np.int64)
    return count
