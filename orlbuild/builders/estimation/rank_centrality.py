"""Rank Centrality scores (Negahban, Oh & Shah, "Rank Centrality: ranking from
pairwise comparisons", Operations Research 2017).

The scores are the log of the stationary distribution of the comparison
Markov chain, which moves from ``i`` to ``j`` at the rate of the share of
``i``-``j`` comparisons that ``j`` won. The chain is built as
:func:`choix.rank_centrality` builds it and solved as choix's
:func:`choix.utils.statdist` solves it (through
:func:`orlbuild.builders.estimation.lsr_dense.statdist`, the same LAPACK calls without
SciPy's per-call wrapper overhead, bit-identical: tested in
``tests/builders/test_rank_centrality.py``), with one deliberate difference in the
regularisation. choix adds ``alpha`` to every count before taking shares, so
a pair that was never compared gets rate 1/2 each way - the weight of a real,
evenly split pair - which in a sparse design lets an item that never wins sit
next to the best item it was never compared with. Here the regularisation is
a uniform "teleport" as in PageRank: every ordered pair gets ``alpha / 2`` on
top of its win share. It keeps the chain irreducible when an item never wins,
never loses, or (in a bootstrap resample) lost all its comparisons, while its
weight stays ``alpha / 2`` against about ``1/2`` per compared pair. With
``alpha = 0`` the result equals ``choix.rank_centrality`` (tested).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from orlbuild.builders.arrays import FloatArray
from orlbuild.builders.estimation.guarded_fit import fitted_scores
from orlbuild.builders.estimation.lsr_dense import statdist

__all__ = ["rank_centrality_many", "rank_centrality_pairwise"]


def rank_centrality_pairwise(counts: FloatArray, *, alpha: float) -> FloatArray:
    """Rank Centrality scores (centred log stationary probabilities).

    Parameters
    ----------
    counts
        ``counts[i, j]`` = number of times item ``i`` beat item ``j``.
    alpha
        Teleport rate: ``alpha / 2`` is added to every transition (``c / n_items``).

    Returns
    -------
    numpy.ndarray
        One score per item, mean zero; higher is better.

    Raises
    ------
    EstimationError
        When the chain has no unique stationary distribution or a score is not
        finite (an item that never wins or never loses with ``alpha = 0``).
    """
    n = counts.shape[0]
    if n == 1:
        return np.zeros(1)
    pairs = counts + counts.T
    compared = pairs > 0
    # chain[i, j]: rate of moving from i to j = share of i-j comparisons j won
    chain = np.where(compared, counts.T / np.where(compared, pairs, 1), 0.0) + alpha / 2
    diagonal = np.arange(n) * (n + 1)
    chain.flat[diagonal] = 0.0
    # chain -= np.diag(chain.sum(axis=1)): off the diagonal that subtracts 0.0
    chain.flat[diagonal] -= chain.sum(axis=1)
    return fitted_scores("Rank Centrality", lambda: np.log(statdist(chain)))


def rank_centrality_many(counts: FloatArray, *, alpha: float) -> Iterator[FloatArray]:
    """:func:`rank_centrality_pairwise` of each matrix of ``counts`` (``(B, n, n)``), in order.

    The chains are built for all matrices at once (the same element-wise
    operations and row sums, so bit-identical; tested), then solved one by
    one: a bootstrap's resamples without the per-resample NumPy call overhead.
    A failed fit raises when its scores are reached, after those before it.
    """
    resamples, n = counts.shape[0], counts.shape[1]
    if n == 1:
        for _ in range(resamples):
            yield np.zeros(1)
        return
    counts_t = counts.transpose(0, 2, 1)
    pairs = counts + counts_t
    compared = pairs > 0
    chains = np.where(compared, counts_t / np.where(compared, pairs, 1), 0.0) + alpha / 2
    diagonal = np.arange(n)
    chains[:, diagonal, diagonal] = 0.0
    chains[:, diagonal, diagonal] -= chains.sum(axis=2)
    for chain in chains:
        yield fitted_scores("Rank Centrality", lambda: np.log(statdist(chain)))  # noqa: B023
