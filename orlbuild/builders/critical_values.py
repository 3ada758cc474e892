"""Max-t critical values: family-wise error control over every pair of a query.

The ``simultaneous`` tiering separates an item from its tier leader only when
``|d| / se > c``, where ``c`` is chosen so that, if every item of the query
had the same true strength, the largest studentized difference over *all*
``n (n - 1) / 2`` pairs would exceed ``c`` with probability ``sig``
(docs/tiers-and-audit.md, "How tiers are decided and audited"; the single-step max-T of
Westfall & Young 1993, ch. 2). Any split of an all-equal query needs some
pair beyond ``c``, so the share of all-equal queries with a split is at most
``sig`` up to the Monte Carlo error of ``c``.

* :func:`null_draws_from_covariance` - the null distribution is ``N(0, C)``
  with ``C`` the estimated covariance (Fisher or sandwich): one matrix
  product per query turns ``R`` standard normal draws into the ``R x P``
  studentized pairwise differences.
* :func:`null_draws_from_bootstrap` - the studentized bootstrap: the
  replicates centred at the full-data estimate, ``|(d*_ab - d_ab)| / se_ab``.
* :func:`single_step_critical` - ``c`` of the largest statistic;
  :func:`step_down_critical` - the Romano-Wolf refinement (the default of
  ``simultaneous``): ``c`` recomputed over the pairs not yet separated.

Those four hold the whole ``R x P`` null (``P = n (n - 1) / 2`` pairs), about
6 bytes x draws x n^2 at their peak. The builds take the blocked path instead
(docs/reliability.md, "Limits"): :func:`covariance_null` and :func:`bootstrap_null`
describe the null without computing it, and :func:`blocked_single_step_critical`
and :func:`blocked_step_down_critical` compute it a block of pairs at a time
(at most :data:`NULL_BLOCK_BYTES` per block), with the same draws, the same
statistics and the same order statistics, so their critical values are the
full-matrix functions' exactly (``tests/builders/test_critical_values.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from orlbuild.builders.pairwise_data import FloatArray, IntArray

__all__ = [
    "NULL_BLOCK_BYTES",
    "PairNull",
    "blocked_single_step_critical",
    "blocked_step_down_critical",
    "bootstrap_null",
    "covariance_null",
    "max_t_critical_from_covariance",
    "null_draws_from_bootstrap",
    "null_draws_from_covariance",
    "single_step_critical",
    "step_down_critical",
]


def _pairs(se: FloatArray) -> tuple[IntArray, IntArray, FloatArray]:
    """Pairs ``a < b`` with a positive standard error, and those errors."""
    first, second = np.triu_indices(se.shape[0], 1)
    pair_se = se[first, second]
    keep = pair_se > 0
    return first[keep].astype(np.int64), second[keep].astype(np.int64), pair_se[keep]


def _upper_quantile(statistics: npt.NDArray[np.floating], sig: float) -> float:
    """The ``1 - sig`` quantile, rounded up to an order statistic (numpy's ``higher``)."""
    k = int(np.ceil((1.0 - sig) * (len(statistics) - 1)))
    return float(np.partition(statistics, k)[k])


@lru_cache(maxsize=64)
def standard_normal_draws(draws: int, n_items: int, seed: int) -> npt.NDArray[np.float32]:
    """``(draws, n_items)`` standard normals from ``seed``, shared by the queries of a build
    with ``n_items`` items (each query's critical value keeps its own Monte Carlo error;
    drawing once per size keeps the simulation one matrix product per query)."""
    rng = np.random.default_rng([seed, n_items, 0x6D61785F74])
    # single precision: the draws stay cached, at half the memory
    values = rng.standard_normal((draws, n_items), dtype=np.float32)
    values.flags.writeable = False
    return values


def null_draws_from_covariance(
    cov: FloatArray, se: FloatArray, *, draws: int, seed: int
) -> tuple[IntArray, IntArray, npt.NDArray[np.float32]]:
    """``|d_ab| / se_ab`` for every pair under ``d ~ N(0, C)``, ``draws`` times.

    Parameters
    ----------
    cov
        ``(n, n)`` covariance of the scores (may be singular: scores are centred).
    se
        ``(n, n)`` standard errors of the differences (``sqrt(C_aa + C_bb - 2 C_ab)``).
    draws
        Monte Carlo draws ``R``; a critical value's level is ``sig`` up to
        about ``sqrt(sig (1 - sig) / R)``.
    seed
        Seed of the draws (the build's seed; see :func:`standard_normal_draws`).

    Returns
    -------
    first, second : numpy.ndarray
        The pairs ``a < b`` with a positive standard error (the family).
    null : numpy.ndarray
        ``(R, P)`` absolute studentized differences.
    """
    null = covariance_null(cov, se, draws=draws, seed=seed)
    return null.first, null.second, null.columns(np.arange(len(null.first)))


def null_draws_from_bootstrap(
    scores: FloatArray, samples: FloatArray, se: FloatArray
) -> tuple[IntArray, IntArray, npt.NDArray[np.float32]]:
    """Studentized bootstrap replicates ``|(d*_ab - d_ab)| / se_ab`` (centred at the estimate).

    Parameters
    ----------
    scores
        Full-data scores.
    samples
        ``(B, n)`` bootstrap scores.
    se
        ``(n, n)`` bootstrap standard deviations of the differences.

    Returns
    -------
    first, second, null
        As :func:`null_draws_from_covariance`, with ``B`` rows.
    """
    null = bootstrap_null(scores, samples, se)
    return null.first, null.second, null.columns(np.arange(len(null.first)))


def single_step_critical(null: npt.NDArray[np.float32], sig: float) -> float:
    """``c``: the ``1 - sig`` quantile of the largest of the ``P`` statistics (``inf`` if P = 0)."""
    if null.shape[1] == 0:
        return float("inf")
    return _upper_quantile(null.max(axis=1), sig)


def step_down_critical(
    null: npt.NDArray[np.float32], observed: FloatArray, sig: float
) -> FloatArray:
    """Romano-Wolf step-down critical value of every pair.

    Pairs are examined by decreasing observed ``|z|``; pair ``j`` is compared
    with the ``1 - sig`` quantile of the largest null statistic over the pairs
    not yet separated (``j`` and after); the first pair that is not beyond its
    critical value stops the procedure, and it and every later pair keep that
    value. The first critical value is the single-step ``c``, so a query whose
    items are all equal is split exactly when the single-step rule splits it;
    later values are smaller, which is where the power comes from (Romano &
    Wolf 2005, Algorithm 2.1; strong family-wise control under subset pivotality,
    which normal scores have).

    Parameters
    ----------
    null
        ``(R, P)`` absolute null statistics.
    observed
        ``(P,)`` observed ``|z|`` of the same pairs.
    sig
        Family-wise level.

    Returns
    -------
    numpy.ndarray
        ``(P,)`` critical value of each pair (nonincreasing along the examination order).
    """
    order = np.argsort(-observed, kind="stable")
    # tail[j] = largest null statistic over the pairs examined at step j or later;
    # rows are contiguous draws (a row loop beats numpy's strided accumulate here)
    tail = null.T[order]
    for step in range(len(order) - 2, -1, -1):
        np.maximum(tail[step], tail[step + 1], out=tail[step])
    k = int(np.ceil((1.0 - sig) * (tail.shape[1] - 1)))
    by_step = np.partition(tail, k, axis=1)[:, k].astype(np.float64)  # every step's quantile
    return _stopped(order, observed, by_step)


def _stopped(order: IntArray, observed: FloatArray, by_step: FloatArray) -> FloatArray:
    """Each pair's critical value: its step's, up to the first pair not beyond it, then that one."""
    beyond = observed[order] > by_step
    stop = int(np.argmin(beyond)) if not beyond.all() else len(order)
    critical = np.empty(len(order))
    critical[order[:stop]] = by_step[:stop]
    if stop < len(order):
        critical[order[stop:]] = by_step[stop]
    return critical


def max_t_critical_from_covariance(
    cov: FloatArray, se: FloatArray, *, sig: float, draws: int, seed: int
) -> float:
    """Single-step critical value of ``max_ab |d_ab| / se_ab`` when ``d ~ N(0, C)``
    (:func:`null_draws_from_covariance`, :func:`single_step_critical`)."""
    return single_step_critical(null_draws_from_covariance(cov, se, draws=draws, seed=seed)[2], sig)


#: Memory one block of the blocked null may take (bytes): its ``draws x pairs`` statistics
#: and their working copies (docs/reliability.md, "Limits").
NULL_BLOCK_BYTES = 64 * 2**20

#: Bytes per draw of one pair in a block: the two float64 columns gathered and their
#: difference, the float32 statistics, their transposed copy (the step-down's rows) and
#: the partitioned copy of the quantiles.
_BYTES_PER_DRAW_IN_BLOCK = 36


@dataclass(frozen=True)
class PairNull:
    """The null statistics of a query's pair family, computed on demand a block at a time.

    Attributes
    ----------
    first, second
        The pairs ``a < b`` with a positive standard error (the family), ``(P,)``.
    draws
        Rows of the null (Monte Carlo draws or bootstrap replicates).
    columns
        ``columns(pairs)`` -> ``(draws, len(pairs))`` float32 absolute studentized
        differences of those pairs (indices into ``first``/``second``).
    """

    first: IntArray
    second: IntArray
    draws: int
    columns: Callable[[IntArray], npt.NDArray[np.float32]]

    def block_size(self, block_bytes: int | None = None) -> int:
        """Pairs per block so that a block takes at most ``block_bytes`` (default
        :data:`NULL_BLOCK_BYTES`), at least one pair."""
        budget = NULL_BLOCK_BYTES if block_bytes is None else block_bytes
        return max(1, budget // (_BYTES_PER_DRAW_IN_BLOCK * self.draws))

    def blocks(self, pairs: IntArray, block_bytes: int | None = None) -> Iterator[slice]:
        """Consecutive slices of ``pairs``, last block first (the step-down's direction)."""
        size = self.block_size(block_bytes)
        for stop in range(len(pairs), 0, -size):
            yield slice(max(0, stop - size), stop)


def covariance_null(cov: FloatArray, se: FloatArray, *, draws: int, seed: int) -> PairNull:
    """The null of :func:`null_draws_from_covariance`, computed a block of pairs at a time.

    The draws of the scores ``d = root g`` (``cov = root root'``, ``g`` standard
    normal) are held once, ``(R, n)``; a pair's statistic is the difference of
    two of their columns over its standard error, element by element, so a
    pair's values do not depend on which block computes them.
    """
    first, second, pair_se = _pairs(se)
    values, vectors = np.linalg.eigh(cov)
    root = vectors * np.sqrt(np.clip(values, 0.0, None))  # cov = root @ root.T
    scores = standard_normal_draws(draws, cov.shape[0], seed).astype(np.float64) @ root.T

    def columns(pairs: IntArray) -> npt.NDArray[np.float32]:
        return _studentized(scores, first[pairs], second[pairs], pair_se[pairs])

    return PairNull(first, second, draws, columns)


def _studentized(
    scores: FloatArray, first: IntArray, second: IntArray, pair_se: FloatArray
) -> npt.NDArray[np.float32]:
    """``|d_a - d_b| / se_ab`` of every row of ``scores`` and pair, in single precision
    (a quantile needs no more)."""
    null = scores[:, first] - scores[:, second]
    np.abs(null, out=null)
    null /= pair_se
    return null.astype(np.float32)


def bootstrap_null(scores: FloatArray, samples: FloatArray, se: FloatArray) -> PairNull:
    """The null of :func:`null_draws_from_bootstrap`, computed a block of pairs at a time."""
    first, second, pair_se = _pairs(se)
    centred = samples - scores[None, :]

    def columns(pairs: IntArray) -> npt.NDArray[np.float32]:
        return _studentized(centred, first[pairs], second[pairs], pair_se[pairs])

    return PairNull(first, second, samples.shape[0], columns)


def blocked_single_step_critical(
    null: PairNull, sig: float, *, block_bytes: int | None = None
) -> float:
    """:func:`single_step_critical` of ``null``, holding one block of pairs at a time."""
    pairs = np.arange(len(null.first))
    if len(pairs) == 0:
        return float("inf")
    largest = np.full(null.draws, -np.inf, dtype=np.float32)
    for block in null.blocks(pairs, block_bytes):
        np.maximum(largest, null.columns(pairs[block]).max(axis=1), out=largest)
    return _upper_quantile(largest, sig)


def blocked_step_down_critical(
    null: PairNull, observed: FloatArray, sig: float, *, block_bytes: int | None = None
) -> FloatArray:
    """:func:`step_down_critical` of ``null``, holding one block of pairs at a time.

    The running maximum over the pairs examined later is carried from block to
    block (from the last examined pair back to the first), and each step's
    quantile is taken within its block: maxima and order statistics are exact,
    so the values equal the full-matrix ones.
    """
    order = np.argsort(-observed, kind="stable")
    k = int(np.ceil((1.0 - sig) * (null.draws - 1)))
    by_step = np.empty(len(order))
    later: npt.NDArray[np.float32] | None = None
    for block in null.blocks(order, block_bytes):
        tail = np.ascontiguousarray(null.columns(order[block]).T)  # one row per step
        if later is not None:
            np.maximum(tail[-1], later, out=tail[-1])
        for step in range(len(tail) - 2, -1, -1):
            np.maximum(tail[step], tail[step + 1], out=tail[step])
        later = tail[0].copy()
        by_step[block] = np.partition(tail, k, axis=1)[:, k]
        del tail
    return _stopped(order, observed, by_step)
