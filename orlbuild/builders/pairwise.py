"""The pairwise route (docs/tiers-and-audit.md, "Build routes"): ``bt`` or ``rank-centrality``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from orlbuild.builders.pairwise_data import PairwiseComparisons
from orlbuild.builders.parameters import BuildParameters
from orlbuild.builders.strength_models import BradleyTerryModel, RankCentralityModel, StrengthModel
from orlbuild.builders.tiered_orl import orl_from_model
from orlbuild.records import QueryORL

__all__ = ["PAIRWISE_MODELS", "pairwise_query_orl"]

#: Method name -> score model of a query's comparisons.
PAIRWISE_MODELS: dict[str, Callable[[PairwiseComparisons, BuildParameters], StrengthModel]] = {
    "bt": lambda comps, p: BradleyTerryModel(comps, p.reg, str(p.solver)),
    "rank-centrality": lambda comps, p: RankCentralityModel(comps, p.reg),
}


def pairwise_query_orl(
    query: str,
    comparisons: PairwiseComparisons,
    params: BuildParameters,
    rng: np.random.Generator,
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

    Raises
    ------
    QueryBuildError
        Never-compared items, disconnected graph, failed fit; names the query.
    """
    return orl_from_model(
        query, PAIRWISE_MODELS[str(params.method)](comparisons, params), params, rng
    )
