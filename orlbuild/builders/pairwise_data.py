"""Comparisons of one query as index arrays, the shape every estimator consumes.

Every comparison carries a weight, so that ties and counted rows need no
expansion (docs/tiers-and-audit.md, "Build routes"):

* a recorded tie between ``a`` and ``b`` is half a win for each side: one
  comparison each way, ``(a, b)`` and ``(b, a)``, of weight ``1/2`` each (the
  convention of LMArena and evalica). Together they are one unit of evidence:
  the pair's count in the Fisher information is ``1/2 + 1/2 = 1``, not 2. Both
  halves keep the *unit* of the raw row they came from, so that a bootstrap
  resamples the tie as one observation, and they are marked as ties, so that
  ``--ties davidson`` can model them instead;
* a row with ``count = k`` is ``k`` identical outcomes: its comparisons weigh
  ``k`` times as much and its unit has size ``k`` (a bootstrap draws the ``k``
  outcomes one by one, :func:`~orlbuild.builders.estimation.uncertainty.bootstrap_samples`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from orlbuild.builders.arrays import FloatArray, IntArray

__all__ = [
    "ListCodes",
    "PairwiseComparisons",
    "comparisons_from_arrays",
    "comparisons_from_lists",
    "comparisons_from_pairwise",
    "factorize_ids",
    "group_positions",
    "pair_arrays",
    "query_blocks",
    "row_counts",
]


@dataclass(frozen=True)
class PairwiseComparisons:
    """Pairwise comparisons of one query over locally indexed items.

    Attributes
    ----------
    items
        Item ids; position ``i`` is local index ``i`` (sorted, so builds repeat).
    winners, losers
        Local indices of each comparison's winner and loser.
    units
        Resampling unit of each comparison (the raw row, or the implied pair).
    annotators
        Annotator code (``0..G-1``) of each comparison.
    annotator_names
        Annotator ids, position ``g`` is code ``g``.
    weights
        Weight of each comparison per outcome of its unit: 1 for a preference,
        1/2 for each half of a tie (``None``: all 1).
    unit_sizes
        Number of outcomes of each unit (a row's ``count``; ``None``: all 1).
    ties
        Whether each comparison is half of a recorded tie (``None``: none is).
    """

    items: npt.NDArray[np.object_]
    winners: IntArray
    losers: IntArray
    units: IntArray
    annotators: IntArray
    annotator_names: npt.NDArray[np.object_]
    weights: FloatArray | None = None
    unit_sizes: FloatArray | None = None
    ties: npt.NDArray[np.bool_] | None = None

    @property
    def n_items(self) -> int:
        """Number of items."""
        return len(self.items)

    @property
    def n_units(self) -> int:
        """Number of resampling units (0 when there are no comparisons)."""
        return int(self.units.max()) + 1 if len(self.units) else 0

    @property
    def sizes(self) -> FloatArray:
        """Outcomes of each unit (all 1 without counts)."""
        if self.unit_sizes is None:
            return np.ones(self.n_units)
        return self.unit_sizes

    @property
    def n_outcomes(self) -> float:
        """Total number of outcomes (rows weighted by their counts)."""
        return float(self.sizes.sum())

    def tie_mask(self) -> npt.NDArray[np.bool_]:
        """Whether each comparison is half of a tie."""
        return np.zeros(len(self.winners), dtype=bool) if self.ties is None else self.ties

    def comparison_weights(self, unit_weights: FloatArray | None = None) -> FloatArray | None:
        """Weight of each comparison: its per-outcome weight times its unit's outcomes.

        Parameters
        ----------
        unit_weights
            Outcomes of each unit in a bootstrap draw; ``None``: the data's counts.
        """
        per_unit = self.unit_sizes if unit_weights is None else unit_weights
        if per_unit is None:
            return self.weights
        scaled = per_unit[self.units]
        return scaled if self.weights is None else scaled * self.weights

    def count_matrix(self, unit_weights: FloatArray | None = None) -> FloatArray:
        """``C[i, j]`` = (weighted) number of times ``i`` beat ``j`` (a tie: 1/2 each way).

        Parameters
        ----------
        unit_weights
            Outcomes of each unit (a bootstrap draw); ``None`` means the data's counts.
        """
        n = self.n_items
        weights = self.comparison_weights(unit_weights)
        flat = np.bincount(self.winners * n + self.losers, weights=weights, minlength=n * n)
        return flat.reshape(n, n).astype(np.float64, copy=False)

    def count_matrices(self, unit_weights: FloatArray) -> FloatArray:
        """``count_matrix(w)`` for every row ``w`` of ``unit_weights``, as ``(B, n, n)``.

        One ``bincount`` over all rows: each cell sums its comparisons in the
        same order as :meth:`count_matrix` does, so every matrix is bit-identical
        to it (tested in ``tests/builders/test_rank_centrality.py``).
        """
        n = self.n_items
        resamples = unit_weights.shape[0]
        weights = unit_weights[:, self.units]
        if self.weights is not None:
            weights = weights * self.weights
        cells = np.arange(resamples, dtype=np.int64)[:, None] * (n * n) + (
            self.winners * n + self.losers
        )
        flat = np.bincount(cells.ravel(), weights=weights.ravel(), minlength=resamples * n * n)
        return flat.reshape(resamples, n, n).astype(np.float64, copy=False)

    def subset(self, members: IntArray) -> PairwiseComparisons:
        """The comparisons among ``members`` (local indices), re-indexed from 0."""
        mapping = np.full(self.n_items, -1, dtype=np.int64)
        mapping[members] = np.arange(len(members))
        keep = (mapping[self.winners] >= 0) & (mapping[self.losers] >= 0)
        kept_units, units = np.unique(self.units[keep], return_inverse=True)
        return PairwiseComparisons(
            items=self.items[members],
            winners=mapping[self.winners[keep]],
            losers=mapping[self.losers[keep]],
            units=units.astype(np.int64),
            annotators=self.annotators[keep],
            annotator_names=self.annotator_names,
            weights=None if self.weights is None else self.weights[keep],
            unit_sizes=None if self.unit_sizes is None else self.unit_sizes[kept_units],
            ties=None if self.ties is None else self.ties[keep],
        )


def factorize_ids(
    values: pd.Series | npt.NDArray[np.object_],
) -> tuple[IntArray, npt.NDArray[np.object_]]:
    """Sorted-unique factorisation of string ids: (codes, unique ids)."""
    uniques, codes = np.unique(np.asarray(values, dtype=object).astype(str), return_inverse=True)
    return codes.astype(np.int64), uniques.astype(object)


def group_positions(codes: IntArray, *, within: IntArray | None = None) -> list[IntArray]:
    """Row positions of each group of equal ``codes``, groups in code order.

    Rows keep their order inside a group, or follow ``within`` when given.
    """
    order = np.lexsort((codes,) if within is None else (within, codes))
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    return [block for block in np.split(order, bounds) if len(block)]


def query_blocks(queries: pd.Series) -> Iterator[tuple[str, IntArray]]:
    """(query, row positions) for every query, in sorted query order."""
    codes, names = pd.factorize(queries.astype(str), sort=True)
    for block in group_positions(codes.astype(np.int64)):
        yield str(names[codes[block[0]]]), block


def pair_arrays(
    frame: pd.DataFrame,
) -> tuple[
    npt.NDArray[np.object_], npt.NDArray[np.object_], npt.NDArray[np.bool_], npt.NDArray[np.object_]
]:
    """The ``winner``, ``loser``, ``tie`` (all ``False`` when absent) and ``annotator``
    columns of a checked pairwise frame, as the arrays :func:`comparisons_from_arrays` takes."""
    ties = (
        frame["tie"].fillna(0).to_numpy().astype(bool)
        if "tie" in frame.columns
        else np.zeros(len(frame), dtype=bool)
    )
    return (
        frame["winner"].to_numpy(dtype=object),
        frame["loser"].to_numpy(dtype=object),
        ties,
        frame["annotator"].to_numpy(dtype=object),
    )


def comparisons_from_pairwise(
    frame: pd.DataFrame, *, items: npt.ArrayLike | None = None
) -> PairwiseComparisons:
    """Index the pairwise rows of one query.

    Parameters
    ----------
    frame
        Columns ``winner``, ``loser``, ``annotator``, ``tie`` (0/1) and
        ``count`` (a positive integer, default 1) - the last three optional.
    items
        The query's full item set when it is larger than the items that appear
        in comparisons (so that never-compared items can be reported).

    Returns
    -------
    PairwiseComparisons
        One comparison per preference row, two (one each way, weight 1/2) per
        tie row, weighted by the row's count.
    """
    n = len(frame)
    tie = frame["tie"].fillna(0).to_numpy() if "tie" in frame.columns else np.zeros(n)
    annotators = frame["annotator"] if "annotator" in frame.columns else np.full(n, "_")
    return comparisons_from_arrays(
        frame["winner"].to_numpy(dtype=object),
        frame["loser"].to_numpy(dtype=object),
        np.asarray(tie).astype(bool),
        np.asarray(annotators, dtype=object),
        items=items,
        counts=row_counts(frame),
    )


def row_counts(frame: pd.DataFrame) -> FloatArray | None:
    """The ``count`` column as floats (``None`` when absent: every row is one outcome)."""
    if "count" not in frame.columns:
        return None
    return frame["count"].fillna(1).to_numpy(dtype=np.float64)


def comparisons_from_arrays(
    winner_ids: npt.NDArray[np.object_],
    loser_ids: npt.NDArray[np.object_],
    tie: npt.NDArray[np.bool_],
    annotator_ids: npt.NDArray[np.object_],
    *,
    items: npt.ArrayLike | None = None,
    counts: FloatArray | None = None,
) -> PairwiseComparisons:
    """Array form of :func:`comparisons_from_pairwise` (the build's fast path).

    ``counts`` gives each row's number of outcomes (``None``: one each).
    """
    universe = np.concatenate([winner_ids, loser_ids])
    if items is not None:
        universe = np.concatenate([universe, np.asarray(items, dtype=object)])
    names = np.unique(universe.astype(str)).astype(object)
    winners = np.searchsorted(names, winner_ids.astype(str)).astype(np.int64)
    losers = np.searchsorted(names, loser_ids.astype(str)).astype(np.int64)
    annotators, annotator_names = factorize_ids(annotator_ids)
    units = np.arange(len(winners), dtype=np.int64)
    has_ties = bool(tie.any())
    half = np.where(tie, 0.5, 1.0)
    return PairwiseComparisons(
        items=names,
        winners=np.concatenate([winners, losers[tie]]),
        losers=np.concatenate([losers, winners[tie]]),
        units=np.concatenate([units, units[tie]]),
        annotators=np.concatenate([annotators, annotators[tie]]),
        annotator_names=annotator_names,
        weights=np.concatenate([half, half[tie]]) if has_ties else None,
        unit_sizes=None if counts is None else np.asarray(counts, dtype=np.float64),
        ties=np.concatenate([tie, tie[tie]]) if has_ties else None,
    )


@dataclass(frozen=True)
class ListCodes:
    """The listwise judgments of one query as codes (what its lists and their implied
    preferences are indexed from).

    Attributes
    ----------
    items, item_names
        Item code of each row, and the sorted item ids the codes index.
    annotators, annotator_names
        Annotator code of each row, and the sorted annotator ids.
    ranks
        Rank of each row within its annotator's list (1 best, ties allowed).
    """

    items: IntArray
    item_names: npt.NDArray[np.object_]
    annotators: IntArray
    annotator_names: npt.NDArray[np.object_]
    ranks: IntArray

    @classmethod
    def of(cls, frame: pd.DataFrame) -> ListCodes:
        """Code the columns ``annotator``, ``item`` and ``rank`` of ``frame``."""
        items, item_names = factorize_ids(frame["item"])
        annotators, annotator_names = factorize_ids(frame["annotator"])
        ranks = frame["rank"].to_numpy(dtype=np.int64)
        return cls(items, item_names, annotators, annotator_names, ranks)


def comparisons_from_lists(frame: pd.DataFrame) -> PairwiseComparisons:
    """Expand the listwise judgments of one query into implied preferences.

    Every pair of items in one annotator's list with different tiers becomes
    one comparison (better tier wins); items in the same tier imply no
    preference (docs/tiers-and-audit.md, "Build routes"). Each implied pair is its own
    resampling unit; the annotator is kept for clustering.

    Parameters
    ----------
    frame
        Columns ``annotator``, ``item``, ``rank``.
    """
    codes = ListCodes.of(frame)
    item_codes, annotator_codes, ranks = codes.items, codes.annotators, codes.ranks
    winners: list[IntArray] = []
    losers: list[IntArray] = []
    annotators: list[IntArray] = []
    for block in group_positions(annotator_codes):
        r = ranks[block]
        better, worse = np.nonzero(r[:, None] < r[None, :])
        winners.append(item_codes[block][better])
        losers.append(item_codes[block][worse])
        annotators.append(np.full(len(better), annotator_codes[block[0]], dtype=np.int64))
    w = np.concatenate(winners) if winners else np.zeros(0, dtype=np.int64)
    return PairwiseComparisons(
        items=codes.item_names,
        winners=w,
        losers=np.concatenate(losers) if losers else np.zeros(0, dtype=np.int64),
        units=np.arange(len(w), dtype=np.int64),
        annotators=np.concatenate(annotators) if annotators else np.zeros(0, dtype=np.int64),
        annotator_names=codes.annotator_names,
    )
