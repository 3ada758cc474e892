"""The pairwise route (docs/tiers-and-audit.md, "Build routes"): ``bt`` or ``rank-centrality``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from orlbuild.builders.estimation.crowd_bt import CrowdBTModel, ReliabilityFit
from orlbuild.builders.estimation.strength_models import (
    BradleyTerryModel,
    DavidsonModel,
    RankCentralityModel,
    StrengthModel,
)
from orlbuild.builders.pairwise_data import PairwiseComparisons
from orlbuild.builders.parameters import BuildParameters
from orlbuild.builders.tiering.query_orl import orl_from_model
from orlbuild.records import QueryORL

__all__ = ["PAIRWISE_MODELS", "pairwise_model", "pairwise_query_orl"]


def _bt(comps: PairwiseComparisons, p: BuildParameters) -> StrengthModel:
    if p.ties == "davidson":
        return DavidsonModel(comps, p.reg)
    return BradleyTerryModel(comps, p.reg, str(p.solver))


#: Method name -> score model of a query's comparisons (``--annotators equal``).
PAIRWISE_MODELS: dict[str, Callable[[PairwiseComparisons, BuildParameters], StrengthModel]] = {
    "bt": _bt,
    "rank-centrality": lambda comps, p: RankCentralityModel(comps, p.reg),
}


def pairwise_model(
    comparisons: PairwiseComparisons,
    params: BuildParameters,
    reliabilities: ReliabilityFit | None = None,
) -> StrengthModel:
    """The score model of one query: the method's, or Crowd-BT with the build's reliabilities."""
    if params.annotators == "reliability":
        if reliabilities is None:
            raise ValueError("--annotators reliability needs the build's fitted reliabilities")
        return CrowdBTModel(comparisons, params.reg, reliabilities)
    return PAIRWISE_MODELS[str(params.method)](comparisons, params)


def pairwise_query_orl(
    query: str,
    comparisons: PairwiseComparisons,
    params: BuildParameters,
    rng: np.random.Generator,
    reliabilities: ReliabilityFit | None = None,
) -> QueryORL:
    """Build the ORL of one query from its pairwise comparisons.

    Parameters
    ----------
    query
        Query id.
    comparisons
        The query's comparisons
        (:func:`~orlbuild.builders.pairwise_data.comparisons_from_pairwise`).
    params
        Resolved parameters (method ``bt`` or ``rank-centrality``).
    rng
        Random generator of the query (bootstrap).
    reliabilities
        ``--annotators reliability``: the build's fitted reliabilities.

    Raises
    ------
    QueryBuildError
        Never-compared items, disconnected graph, failed fit; names the query.
    """
    return orl_from_model(query, pairwise_model(comparisons, params, reliabilities), params, rng)
