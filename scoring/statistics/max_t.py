"""Studentized step-down randomized Tukey HSD: the permutation max-T test.

docs/comparing-systems.md, "Comparing many systems" (``--test max-t``). The permutations are those
of randomized Tukey HSD (:mod:`scoring.statistics.tukey`): under the null
hypothesis that the systems are interchangeable, each of ``B`` permutations
shuffles every query's scores across the systems independently. Two things
change, both from Westfall & Young (1993, *Resampling-based multiple testing*,
algorithm 2.8) and Romano & Wolf (2005, "Exact and approximate stepdown
methods for multiple hypothesis testing", JASA):

* **Studentized.** A pair's statistic is its paired t statistic
  ``|mean(d)| / (sd(d) / sqrt(n))`` over the per-query differences ``d``, not
  the raw difference of means; the statistic of a permutation is the largest
  one over the pairs. A pair whose systems are merely erratic (large
  per-query spread) no longer looks like a large difference, and the real
  differences that the permutations mix into the null distribution are
  scaled away.
* **Step-down.** With the pairs sorted by observed statistic, largest first,
  the ``j``-th pair's p-value is the share of permutations whose largest
  statistic over the pairs ``j, j+1, ..., m`` (those not yet rejected) reaches
  the ``j``-th observed one, made non-decreasing along the order. The first
  step is the single-step max-T test, so the family-wise error when all
  systems are equal is the same; the later steps compare a pair only with the
  pairs not yet rejected, and find more.

Vectorised: a chunk of permutations is one ``(chunk, n_queries, n_systems)``
array shuffled along its last axis; the system sums and the cross products
``X'X`` of every permuted panel (one batched matrix product) give every pair's
sum and sum of squared differences; the running maxima over the pairs in
observed order are one :func:`numpy.maximum.accumulate` over the reversed
pairs. Chunks bound each array to about 2 MiB (smaller chunks stay in the
processor's cache: at 63 systems they are faster than 32 MiB ones, and the
peak memory of the 10,000-permutation benchmark is ~20 MiB over the input).
"""

from __future__ import annotations

from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from scoring.settings import TestSettings
from scoring.statistics.panel import FloatMatrix, FloatVector, IndexVector
from scoring.statistics.randomization import TIE_RTOL, PairIndex
from scoring.statistics.tukey import checked_panel

__all__ = ["max_t_pvalues"]

#: Entries of one chunk's largest array (float64: 2 MiB).
CHUNK_ENTRIES: Final = 1 << 18


class _PairColumns(NamedTuple):
    """Where a pair's terms sit in the system sums and the flattened ``X'X``."""

    first: IndexVector
    second: IndexVector
    first_square: IndexVector
    second_square: IndexVector
    cross: IndexVector


def _pair_columns(first: IndexVector, second: IndexVector, n_systems: int) -> _PairColumns:
    return _PairColumns(
        first,
        second,
        first * (n_systems + 1),
        second * (n_systems + 1),
        first * n_systems + second,
    )


def _squared_pair_t(
    sums: FloatMatrix, products: FloatMatrix, pairs: _PairColumns, n: int
) -> FloatMatrix:
    """Squared paired t statistic of each pair in each permuted panel.

    Parameters
    ----------
    sums
        System sums over the queries, shape ``(n_systems, B)``.
    products
        Flattened cross products ``X'X``, shape ``(n_systems**2, B)``.
    pairs
        Index columns of the pairs (:func:`_pair_columns`).
    n
        Number of queries.

    Returns
    -------
    numpy.ndarray
        ``D**2 / (S - D**2 / n)`` with ``D`` the sum and ``S`` the sum of
        squares of the pair's per-query differences: the paired ``t**2``
        times ``n / (n - 1)``, the same factor for every pair. Shape
        ``(n_pairs, B)``; 0 where every difference is 0, ``inf`` where the
        differences are constant but not 0.
    """
    diff = sums[pairs.first] - sums[pairs.second]
    squared = diff * diff
    sum_squares = products[pairs.first_square] + products[pairs.second_square]
    sum_squares -= 2.0 * products[pairs.cross]
    spread = sum_squares - squared / n
    # float64 rounding: a spread within 1e-10 of the sum of squares is no spread at all
    spread[spread <= TIE_RTOL * np.abs(sum_squares)] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        statistic = squared / spread
    statistic[squared <= TIE_RTOL * np.abs(sum_squares)] = 0.0
    return np.asarray(statistic, dtype=np.float64)


def max_t_pvalues(
    scores: npt.ArrayLike,
    pairs: PairIndex,
    *,
    permutations: int = TestSettings.permutations,
    rng: np.random.Generator | int | None = None,
) -> FloatVector:
    """Family-wise adjusted p-values of the studentized step-down max-T test, one per pair.

    Parameters
    ----------
    scores
        Per-query scores, shape ``(n_queries, n_systems)``, finite.
    pairs
        Column indices ``(a, b)`` of the pairs: the family over which the error
        is controlled (e.g. :attr:`ScorePanel.pair_index`, all pairs).
    permutations
        Number ``B`` of permutations.
    rng
        A :class:`numpy.random.Generator` or a seed for one.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, shape ``(n_pairs,)``: with the pairs sorted by
        observed ``|t|`` (largest first), the ``j``-th is
        ``max_{k <= j} (1 + #{max_{l >= k} |t*_l| >= |t_k|}) / (B + 1)``.

    Notes
    -----
    A permuted statistic within a relative ``1e-9`` of the observed one counts
    as reaching it (float64 rounding), so two identical systems get ``p = 1``.
    """
    matrix = checked_panel(scores, permutations)
    generator = np.random.default_rng(rng)
    # centring each query leaves every difference (and every shuffle) unchanged and
    # keeps the sums of squares small, so that X'X loses no precision
    centred = matrix - matrix.mean(axis=1, keepdims=True)
    n_queries, n_systems = centred.shape
    first, second = (np.asarray(index, dtype=np.intp) for index in pairs)
    n_pairs = first.size
    if n_pairs == 0:
        return np.empty(0, dtype=np.float64)
    observed = _squared_pair_t(
        centred.sum(axis=0)[:, None],
        (centred.T @ centred).reshape(-1, 1),
        _pair_columns(first, second, n_systems),
        n_queries,
    )[:, 0]
    order = np.argsort(-observed, kind="stable")
    columns = _pair_columns(first[order], second[order], n_systems)
    threshold = (observed[order] * (1.0 - 1e-9))[:, None]
    reached = np.zeros(n_pairs, dtype=np.int64)
    chunk = max(1, CHUNK_ENTRIES // max(n_queries * n_systems, n_systems * n_systems, n_pairs))
    for start in range(0, permutations, chunk):
        size = min(chunk, permutations - start)
        shuffled = generator.permuted(
            np.broadcast_to(centred, (size, n_queries, n_systems)), axis=2
        )
        sums = np.ascontiguousarray(shuffled.sum(axis=1).T)
        products = np.matmul(shuffled.transpose(0, 2, 1), shuffled)
        flat = np.ascontiguousarray(products.reshape(size, -1).T)
        statistics = _squared_pair_t(sums, flat, columns, n_queries)
        # largest statistic over the pairs j..m, for every j: a suffix maximum
        suffix_max = np.maximum.accumulate(statistics[::-1], axis=0)[::-1]
        reached += np.count_nonzero(suffix_max >= threshold, axis=1)
    stepwise = np.maximum.accumulate((1.0 + reached) / (permutations + 1.0))
    pvalues = np.empty(n_pairs, dtype=np.float64)
    pvalues[order] = stepwise
    return pvalues
