"""Strength models of one query: the data a method fits for item strengths, and how to refit it.

Every scored method (Bradley-Terry, Rank Centrality, Plackett-Luce, Borda)
is a small class with the same surface, so that the comparison-graph checks,
the uncertainty estimators and the tiering are written once
(:mod:`orlbuild.builders.tiering.query_orl`):

* ``comparisons``: the implied pairwise comparisons (graph checks, quality);
* ``fit(unit_weights)``: scores for a (re)weighted data set;
* ``information(scores)``: observed Fisher information, ``None`` when the
  method has no likelihood;
* ``unit_annotators``: the annotator of each resampling unit;
* ``unit_sizes``: the outcomes of each unit (a counted row), ``None`` for one each;
* ``likelihood()``: the log-likelihood the ``model`` tiering partitions
  (Bradley-Terry on the comparisons, Plackett-Luce on rankings);
* ``subset(members)``: the model restricted to a connected component.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

import numpy as np
import numpy.typing as npt

from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.estimation.bradley_terry import (
    bradley_terry_information,
    bradley_terry_pairwise,
    regularisation_information,
)
from orlbuild.builders.estimation.davidson import (
    davidson_counts,
    davidson_fit,
    davidson_information,
)
from orlbuild.builders.estimation.likelihoods import (
    ItemLikelihood,
    PairwiseLikelihood,
    RankingLikelihood,
)
from orlbuild.builders.estimation.plackett_luce import (
    plackett_luce_information,
    plackett_luce_rankings,
)
from orlbuild.builders.estimation.rank_centrality import (
    rank_centrality_many,
    rank_centrality_pairwise,
)
from orlbuild.builders.pairwise_data import PairwiseComparisons

__all__ = [
    "BordaModel",
    "BradleyTerryModel",
    "DavidsonModel",
    "PlackettLuceModel",
    "RankCentralityModel",
    "StrengthModel",
]


class StrengthModel(Protocol):
    """What :func:`~orlbuild.builders.tiering.query_orl.orl_from_model` needs from a method."""

    @property
    def comparisons(self) -> PairwiseComparisons: ...

    @property
    def unit_annotators(self) -> IntArray: ...

    @property
    def unit_sizes(self) -> FloatArray | None: ...

    def fit(self, unit_weights: FloatArray | None = None) -> FloatArray: ...

    def information(self, scores: FloatArray) -> FloatArray | None: ...

    def likelihood(self) -> ItemLikelihood: ...

    def subset(self, members: IntArray) -> StrengthModel: ...


#: Memory a block of bootstrap count matrices may take in :meth:`RankCentralityModel.fit_many`
#: (bytes; the chains and their temporaries take a few times as much).
FIT_BLOCK_BYTES = 4 * 2**20


def _alpha(reg: float, n_items: int) -> float:
    """choix's ``alpha`` for regularisation strength ``reg`` (``c / n_items``)."""
    return reg / n_items


def _pair_unit_annotators(comparisons: PairwiseComparisons) -> IntArray:
    out = np.zeros(comparisons.n_units, dtype=np.int64)
    out[comparisons.units] = comparisons.annotators
    return out


@dataclass(frozen=True)
class _PairwiseModel:
    """What every model of pairwise comparisons shares: the rows, the penalty, the likelihood."""

    comparisons: PairwiseComparisons
    reg: float

    @property
    def unit_annotators(self) -> IntArray:
        """Annotator of each raw row."""
        return _pair_unit_annotators(self.comparisons)

    @property
    def unit_sizes(self) -> FloatArray | None:
        """Outcomes of each raw row (its ``count``)."""
        return self.comparisons.unit_sizes

    @property
    def alpha(self) -> float:
        """Ridge penalty ``alpha * ||s||^2`` handed to choix (``c / n_items``)."""
        return _alpha(self.reg, self.comparisons.n_items)

    def likelihood(self) -> PairwiseLikelihood:
        """Bradley-Terry likelihood of the comparisons, ties at 1/2 (the ``model`` tiering's
        partitions; Rank Centrality has no likelihood of its own)."""
        return PairwiseLikelihood(self.comparisons.count_matrix())


@dataclass(frozen=True)
class BradleyTerryModel(_PairwiseModel):
    """Bradley-Terry on pairwise comparisons (ties entered once each way)."""

    solver: str = "ilsr"

    @property
    def fits_guarded(self) -> bool:
        """Whether every step of :meth:`fit` that may warn runs inside ``fitted_scores``
        (``ilsr``: yes; ``opt`` checks its gradient outside), so a bootstrap may set
        the fits' warning filters once for all resamples."""
        return self.solver == "ilsr"

    def fit(self, unit_weights: FloatArray | None = None) -> FloatArray:
        """Bradley-Terry scores."""
        counts = self.comparisons.count_matrix(unit_weights)
        return bradley_terry_pairwise(counts, alpha=self.alpha, solver=self.solver)

    def information(self, scores: FloatArray) -> FloatArray:
        """Observed information of the data plus the regularisation."""
        counts = self.comparisons.count_matrix()
        return bradley_terry_information(scores, counts + counts.T) + regularisation_information(
            scores, alpha=self.alpha, solver=self.solver
        )

    def subset(self, members: IntArray) -> BradleyTerryModel:
        """The model on one component."""
        return BradleyTerryModel(self.comparisons.subset(members), self.reg, self.solver)


@dataclass(frozen=True)
class DavidsonModel(_PairwiseModel):
    """Bradley-Terry with Davidson's (1970) tie parameter per query (``--ties davidson``).

    Ties are modelled instead of counted as half a win each way
    (:mod:`orlbuild.builders.estimation.davidson`); a query without ties is plain
    Bradley-Terry with the same ridge penalty.
    """

    def fit(self, unit_weights: FloatArray | None = None) -> FloatArray:
        """Davidson scores."""
        wins, ties = davidson_counts(self.comparisons, unit_weights)
        return davidson_fit(wins, ties, alpha=self.alpha).scores

    def information(self, scores: FloatArray) -> FloatArray:
        """Information of the scores with the tie parameter profiled out, plus the penalty."""
        wins, ties = davidson_counts(self.comparisons, None)
        fitted = davidson_fit(wins, ties, alpha=self.alpha)
        return davidson_information(fitted, wins, ties) + 2.0 * self.alpha * np.eye(len(scores))

    def subset(self, members: IntArray) -> DavidsonModel:
        """The model on one component."""
        return DavidsonModel(self.comparisons.subset(members), self.reg)


@dataclass(frozen=True)
class RankCentralityModel(_PairwiseModel):
    """Rank Centrality on pairwise comparisons; no likelihood, so bootstrap only."""

    #: Every step of :meth:`fit` that may warn runs inside ``fitted_scores`` (the count
    #: matrix and the chain's guarded divisions do not warn): a bootstrap may set the
    #: fits' warning filters once for all resamples.
    fits_guarded: ClassVar[bool] = True

    def fit(self, unit_weights: FloatArray | None = None) -> FloatArray:
        """Rank Centrality scores."""
        counts = self.comparisons.count_matrix(unit_weights)
        return rank_centrality_pairwise(counts, alpha=self.alpha)

    def fit_many(self, unit_weights: FloatArray) -> Iterator[FloatArray]:
        """``fit(w)`` for each row ``w`` of ``unit_weights`` (bootstrap draws), in order.

        The count matrices and chains of a block of rows are made at once
        (bit-identical to :meth:`fit`'s, tested); a block's matrices take at
        most about :data:`FIT_BLOCK_BYTES`.
        """
        n = self.comparisons.n_items
        alpha = self.alpha
        rows = max(1, FIT_BLOCK_BYTES // (8 * n * n))
        for start in range(0, unit_weights.shape[0], rows):
            counts = self.comparisons.count_matrices(unit_weights[start : start + rows])
            yield from rank_centrality_many(counts, alpha=alpha)

    def information(self, scores: FloatArray) -> None:
        """Rank Centrality has no likelihood."""
        return None

    def subset(self, members: IntArray) -> RankCentralityModel:
        """The model on one component."""
        return RankCentralityModel(self.comparisons.subset(members), self.reg)


@dataclass(frozen=True)
class RankedLists:
    """Listwise judgments of one query as local indices; each list is a unit.

    Attributes
    ----------
    items
        Item ids (local index = position).
    lists
        Per list: item indices and their tier ranks, best first.
    annotators
        Annotator code of each list.
    comparisons
        The implied pairwise comparisons (graph checks and quality).
    """

    items: npt.NDArray[np.object_]
    lists: list[tuple[IntArray, IntArray]]
    annotators: IntArray
    comparisons: PairwiseComparisons = field(repr=False)

    def subset(self, members: IntArray) -> RankedLists:
        """Lists restricted to ``members`` (lists left with no item are dropped)."""
        mapping = np.full(len(self.items), -1, dtype=np.int64)
        mapping[members] = np.arange(len(members))
        lists, annotators = [], []
        for (idx, ranks), annotator in zip(self.lists, self.annotators.tolist(), strict=True):
            keep = mapping[idx] >= 0
            if keep.any():
                lists.append((mapping[idx[keep]], ranks[keep]))
                annotators.append(annotator)
        return RankedLists(
            self.items[members],
            lists,
            np.asarray(annotators, dtype=np.int64),
            self.comparisons.subset(members),
        )

    def repeated(self, unit_weights: FloatArray | None) -> list[tuple[IntArray, IntArray]]:
        """The lists, each repeated by its (integer) bootstrap multiplicity."""
        if unit_weights is None:
            return self.lists
        counts = np.rint(unit_weights).astype(np.int64).tolist()
        return [lst for lst, k in zip(self.lists, counts, strict=True) for _ in range(k)]


@dataclass(frozen=True)
class _ListsModel:
    """What every model of ranked lists shares: the lists, each one unit of resampling."""

    data: RankedLists

    @property
    def comparisons(self) -> PairwiseComparisons:
        """The implied pairwise comparisons."""
        return self.data.comparisons

    @property
    def unit_annotators(self) -> IntArray:
        """Annotator of each list."""
        return self.data.annotators

    @property
    def unit_sizes(self) -> None:
        """Each list is one unit."""
        return None


@dataclass(frozen=True)
class PlackettLuceModel(_ListsModel):
    """Plackett-Luce on strict rankings (lists of one item carry no information)."""

    reg: float
    solver: str = "ilsr"

    @property
    def alpha(self) -> float:
        """The ``alpha`` handed to choix."""
        return _alpha(self.reg, len(self.data.items))

    def _rankings(self, unit_weights: FloatArray | None) -> list[tuple[int, ...]]:
        return [
            tuple(idx[np.argsort(ranks, kind="stable")].tolist())
            for idx, ranks in self.data.repeated(unit_weights)
            if len(idx) > 1
        ]

    def fit(self, unit_weights: FloatArray | None = None) -> FloatArray:
        """Plackett-Luce scores."""
        return plackett_luce_rankings(
            len(self.data.items), self._rankings(unit_weights), alpha=self.alpha, solver=self.solver
        )

    def information(self, scores: FloatArray) -> FloatArray:
        """Observed Plackett-Luce information plus the regularisation."""
        return plackett_luce_information(scores, self._rankings(None)) + regularisation_information(
            scores, alpha=self.alpha, solver=self.solver
        )

    def likelihood(self) -> RankingLikelihood:
        """Plackett-Luce likelihood of the rankings."""
        return RankingLikelihood(len(self.data.items), self._rankings(None))

    def subset(self, members: IntArray) -> PlackettLuceModel:
        """The model on one component."""
        return PlackettLuceModel(self.data.subset(members), self.reg, self.solver)


@dataclass(frozen=True)
class BordaModel(_ListsModel):
    """Borda: one minus the mean normalised rank over the lists holding the item.

    A list with ``T`` tiers gives tier ``r`` the normalised rank
    ``(r - 1) / (T - 1)`` (0 best, 1 worst; a one-tier list gives 0), so lists
    of different lengths weigh the same.
    """

    def fit(self, unit_weights: FloatArray | None = None) -> FloatArray:
        """Borda scores (items absent from a resample keep their full-data score)."""
        n = len(self.data.items)
        weights = np.ones(len(self.data.lists)) if unit_weights is None else unit_weights
        total, count = np.zeros(n), np.zeros(n)
        for (idx, ranks), w in zip(self.data.lists, weights.tolist(), strict=True):
            top = ranks.max()
            norm = (ranks - 1) / (top - 1) if top > 1 else np.zeros(len(ranks))
            np.add.at(total, idx, w * norm)
            np.add.at(count, idx, w)
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = 1.0 - total / count
        if unit_weights is not None and np.any(count == 0):
            scores = np.where(count > 0, scores, self.fit(None))
        return np.asarray(scores, dtype=np.float64)

    def information(self, scores: FloatArray) -> None:
        """Borda has no likelihood."""
        return None

    def likelihood(self) -> PairwiseLikelihood:
        """Bradley-Terry likelihood of the implied pairs (Borda has none)."""
        return PairwiseLikelihood(self.comparisons.count_matrix())

    def subset(self, members: IntArray) -> BordaModel:
        """The model on one component."""
        return BordaModel(self.data.subset(members))
