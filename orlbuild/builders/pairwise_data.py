"""Comparisons of one query as index arrays, the shape every estimator consumes.

choix has no tie model: a recorded tie between ``a`` and ``b`` is entered as
one comparison each way, ``(a, b)`` and ``(b, a)``, the workaround its
maintainer recommends (docs/tiers-and-audit.md, "Build routes"). Both halves keep the *unit*
of the raw row they came from, so that a bootstrap resamples the tie as one
observation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = [
    "PairwiseComparisons",
    "comparisons_from_arrays",
    "comparisons_from_lists",
    "comparisons_from_pairwise",
    "factorize_ids",
    "group_positions",
]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


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
    """

    items: npt.NDArray[np.object_]
    winners: IntArray
    losers: IntArray
    units: IntArray
    annotators: IntArray
    annotator_names: npt.NDArray[np.object_]

    @property
    def n_items(self) -> int:
        """Number of items."""
        return len(self.items)

    @property
    def n_units(self) -> int:
        """Number of resampling units (0 when there are no comparisons)."""
        return int(self.units.max()) + 1 if len(self.units) else 0

    def count_matrix(self, unit_weights: FloatArray | None = None) -> FloatArray:
        """``C[i, j]`` = (weighted) number of times ``i`` beat ``j``.

        Parameters
        ----------
        unit_weights
            Multiplicity of each unit (a bootstrap draw); ``None`` means one each.
        """
        n = self.n_items
        weights = None if unit_weights is None else unit_weights[self.units]
        flat = np.bincount(self.winners * n + self.losers, weights=weights, minlength=n * n)
        return flat.reshape(n, n).astype(np.float64, copy=False)

    def subset(self, members: IntArray) -> PairwiseComparisons:
        """The comparisons among ``members`` (local indices), re-indexed from 0."""
        mapping = np.full(self.n_items, -1, dtype=np.int64)
        mapping[members] = np.arange(len(members))
        keep = (mapping[self.winners] >= 0) & (mapping[self.losers] >= 0)
        _, units = np.unique(self.units[keep], return_inverse=True)
        return PairwiseComparisons(
            items=self.items[members],
            winners=mapping[self.winners[keep]],
            losers=mapping[self.losers[keep]],
            units=units.astype(np.int64),
            annotators=self.annotators[keep],
            annotator_names=self.annotator_names,
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


def comparisons_from_pairwise(
    frame: pd.DataFrame, *, items: npt.ArrayLike | None = None
) -> PairwiseComparisons:
    """Index the pairwise rows of one query.

    Parameters
    ----------
    frame
        Columns ``winner``, ``loser``, ``annotator`` and ``tie`` (0/1) - the
        last two optional.
    items
        The query's full item set when it is larger than the items that appear
        in comparisons (so that never-compared items can be reported).

    Returns
    -------
    PairwiseComparisons
        One comparison per preference row, two (one each way) per tie row.
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
    )


def comparisons_from_arrays(
    winner_ids: npt.NDArray[np.object_],
    loser_ids: npt.NDArray[np.object_],
    tie: npt.NDArray[np.bool_],
    annotator_ids: npt.NDArray[np.object_],
    *,
    items: npt.ArrayLike | None = None,
) -> PairwiseComparisons:
    """Array form of :func:`comparisons_from_pairwise` (the build's fast path)."""
    universe = np.concatenate([winner_ids, loser_ids])
    if items is not None:
        universe = np.concatenate([universe, np.asarray(items, dtype=object)])
    names = np.unique(universe.astype(str)).astype(object)
    winners = np.searchsorted(names, winner_ids.astype(str)).astype(np.int64)
    losers = np.searchsorted(names, loser_ids.astype(str)).astype(np.int64)
    annotators, annotator_names = factorize_ids(annotator_ids)
    units = np.arange(len(winners), dtype=np.int64)
    return PairwiseComparisons(
        items=names,
        winners=np.concatenate([winners, losers[tie]]),
        losers=np.concatenate([losers, winners[tie]]),
        units=np.concatenate([units, units[tie]]),
        annotators=np.concatenate([annotators, annotators[tie]]),
        annotator_names=annotator_names,
    )


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
    item_codes, names = factorize_ids(frame["item"])
    annotator_codes, annotator_names = factorize_ids(frame["annotator"])
    ranks = frame["rank"].to_numpy(dtype=np.int64)
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
        items=names,
        winners=w,
        losers=np.concatenate(losers) if losers else np.zeros(0, dtype=np.int64),
        units=np.arange(len(w), dtype=np.int64),
        annotators=np.concatenate(annotators) if annotators else np.zeros(0, dtype=np.int64),
        annotator_names=annotator_names,
    )
