"""Max-t critical values: family-wise error control over every pair of a query.

The ``simultaneous`` tiering separates an item from its tier leader only when
``|d| / se > c``, where ``c`` is chosen so that, if every item of the query
had the same true strength, the largest studentized difference over *all*
``n (n - 1) / 2`` pairs would exceed ``c`` with probability ``sig``
(docs/tiers-and-audit.md, "How tiers are decided and audited"; the single-step max-T of
Westfall & Young 1993, ch. 2). Any split of an all-equal query needs some
pair beyond ``c``, so the share of all-equal queries with a split is at most
``sig`` up to the Monte Carlo error of ``c``.

The null distribution of the studentized pairwise differences is ``N(0, C)``
with ``C`` the estimated covariance (Fisher or sandwich; :func:`covariance_null`),
or the studentized bootstrap, the replicates centred at the full-data estimate,
``|(d*_ab - d_ab)| / se_ab`` (:func:`bootstrap_null`). Both describe the null
without computing it: :func:`blocked_single_step_critical` (``c`` of the largest
statistic) and :func:`blocked_step_down_critical` (the Romano-Wolf refinement,
the default of ``simultaneous``: ``c`` recomputed over the pairs not yet
separated) compute it a block of pairs at a time (at most
:data:`NULL_BLOCK_BYTES` per block; docs/reliability.md, "Limits"). The
full-matrix versions, which hold the whole ``R x P`` null (``P = n (n - 1) / 2``
pairs, about 6 bytes x draws x n^2), are kept in ``tests/max_t_oracle.py`` as
oracles: the blocked functions give their critical values exactly
(``tests/builders/test_critical_values.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from orlbuild.builders.arrays import FloatArray, IntArray

__all__ = [
    "NULL_BLOCK_BYTES",
    "PairNull",
    "blocked_single_step_critical",
    "blocked_step_down_critical",
    "bootstrap_null",
    "covariance_null",
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


def _stopped(order: IntArray, observed: FloatArray, by_step: FloatArray) -> FloatArray:
    """Each pair's critical value: its step's, up to the first pair not beyond it, then that one."""
    beyond = observed[order] > by_step
    stop = int(np.argmin(beyond)) if not beyond.all() else len(order)
    critical = np.empty(len(order))
    critical[order[:stop]] = by_step[:stop]
    if stop < len(order):
        critical[order[stop:]] = by_step[stop]
    return critical


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
    """The null ``|d_ab| / se_ab`` under ``d ~ N(0, C)``, computed a block of pairs at a time.

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
    """The studentized bootstrap null ``|(d*_ab - d_ab)| / se_ab``, a block of pairs at a time."""
    first, second, pair_se = _pairs(se)
    centred = samples - scores[None, :]

    def columns(pairs: IntArray) -> npt.NDArray[np.float32]:
        return _studentized(centred, first[pairs], second[pairs], pair_se[pairs])

    return PairNull(first, second, samples.shape[0], columns)


def blocked_single_step_critical(
    null: PairNull, sig: float, *, block_bytes: int | None = None
) -> float:
    """``c``: the ``1 - sig`` quantile of the largest statistic, one block of pairs at a time."""
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
    """Romano-Wolf step-down critical value of every pair, one block of pairs at a time.

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
