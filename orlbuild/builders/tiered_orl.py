"""From a score model of one query to its tiered ORL, with every failure explicit.

The steps (docs/tiers-and-audit.md, "Build routes" and "How tiers are decided and audited"):

1. items that appear in no comparison fail the query;
2. a disconnected comparison graph fails the query listing its components,
   unless ``disconnected="tiers"``: then each component is fitted and tiered
   on its own and tier ``k`` of the ORL is the union of every component's
   tier ``k`` (items that cannot be ordered against each other share a rank,
   the cautious choice); the components are listed in the query's warnings
   and each decision's rule names its component;
3. fit (choix), estimate the uncertainty, decide the tiers with the
   ``--tiering`` procedure (:mod:`orlbuild.builders.tier_procedures`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from orlbuild.builders.comparison_graph import comparison_components, never_compared_items
from orlbuild.builders.pairwise_data import IntArray
from orlbuild.builders.parameters import BuildParameters
from orlbuild.builders.strength_models import StrengthModel
from orlbuild.builders.tier_procedures import TIERING_PROCEDURES
from orlbuild.builders.uncertainty import (
    ScoreUncertainty,
    bootstrap_samples,
    bootstrap_uncertainty,
    ep_uncertainty,
    fisher_uncertainty,
    sandwich_uncertainty,
)
from orlbuild.records import EstimationError, QueryBuildError, QueryORL, TieDecision

__all__ = ["UNCERTAINTY_ESTIMATORS", "orl_from_model", "score_uncertainty"]


def score_uncertainty(
    model: StrengthModel, params: BuildParameters, rng: np.random.Generator
) -> ScoreUncertainty:
    """Fit ``model`` and estimate the uncertainty ``params`` ask for.

    Raises
    ------
    EstimationError
        When a fit fails or the estimator does not apply.
    """
    return UNCERTAINTY_ESTIMATORS[str(params.uncertainty)](model, params, rng)


def _bootstrap(
    model: StrengthModel, params: BuildParameters, rng: np.random.Generator
) -> ScoreUncertainty:
    if params.resample == "annotators":
        clusters = model.unit_annotators
    else:
        clusters = np.arange(len(model.unit_annotators), dtype=np.int64)
    samples = bootstrap_samples(model.fit, clusters, resamples=params.bootstrap, rng=rng)
    label = f"bootstrap({params.resample}, B={params.bootstrap})"
    return bootstrap_uncertainty(model.fit(), samples, variance=label)


def _fisher(
    model: StrengthModel, params: BuildParameters, rng: np.random.Generator
) -> ScoreUncertainty:
    scores = model.fit()
    information = model.information(scores)
    if information is None:
        raise EstimationError("--uncertainty fisher needs a likelihood model")
    if params.cluster == "annotators":
        if len(np.unique(model.comparisons.annotators)) >= 2:
            return sandwich_uncertainty(scores, information, model.comparisons)
        if params.source == "listwise":
            # the default for lists; a query judged by one list has nothing to cluster
            return fisher_uncertainty(scores, information, variance="fisher (one annotator)")
        return sandwich_uncertainty(scores, information, model.comparisons)  # explains itself
    return fisher_uncertainty(scores, information)


def _expectation_propagation(
    model: StrengthModel, params: BuildParameters, rng: np.random.Generator
) -> ScoreUncertainty:
    alpha = params.reg / model.comparisons.n_items
    return ep_uncertainty(model.comparisons.count_matrix(), alpha=alpha)


#: ``--uncertainty`` name -> estimator (which methods allow which is decided by
#: :func:`~orlbuild.builders.parameters.resolve_parameters`).
UNCERTAINTY_ESTIMATORS: dict[
    str, Callable[[StrengthModel, BuildParameters, np.random.Generator], ScoreUncertainty]
] = {
    "fisher": _fisher,
    "bootstrap": _bootstrap,
    "ep": _expectation_propagation,
}


def _single_item(query: str, item: str) -> QueryORL:
    return QueryORL(query, [[item]], {item: 0.0}, {item: None}, [])


def _component_orl(
    query: str, model: StrengthModel, params: BuildParameters, rng: np.random.Generator
) -> QueryORL:
    items = model.comparisons.items
    if len(items) == 1:
        return _single_item(query, str(items[0]))
    try:
        unc = score_uncertainty(model, params, rng)
    except EstimationError as exc:
        raise QueryBuildError(query, str(exc)) from exc
    procedure = TIERING_PROCEDURES[str(params.tiering)]
    try:
        tiers, decisions = procedure(query, items, unc, model, params, rng)
    except EstimationError as exc:
        raise QueryBuildError(query, str(exc)) from exc
    names = [str(i) for i in items]
    return QueryORL(
        query=query,
        tiers=tiers,
        scores=dict(zip(names, unc.scores.tolist(), strict=True)),
        intervals={
            n: (lo, hi)
            for n, lo, hi in zip(names, unc.low.tolist(), unc.high.tolist(), strict=True)
        },
        decisions=decisions,
    )


def _merge_components(query: str, parts: list[QueryORL], components: list[list[str]]) -> QueryORL:
    depth = max(len(p.tiers) for p in parts)
    tiers = [sorted(i for p in parts if k < len(p.tiers) for i in p.tiers[k]) for k in range(depth)]
    decisions: list[TieDecision] = []
    for number, part in enumerate(parts, start=1):
        decisions += [
            replace(d, rule=f"{d.rule} (component {number} of {len(parts)})")
            for d in part.decisions
        ]
    listed = "; ".join(f"{k}: {', '.join(c)}" for k, c in enumerate(components, start=1))
    return QueryORL(
        query=query,
        tiers=tiers,
        scores={k: v for p in parts for k, v in p.scores.items()},
        intervals={k: v for p in parts for k, v in p.intervals.items()},
        decisions=decisions,
        components=components,
        warnings=[
            f"comparison graph has {len(parts)} components ordered separately "
            f"(tier k = union of each component's tier k): {listed}"
        ],
    )


def orl_from_model(
    query: str, model: StrengthModel, params: BuildParameters, rng: np.random.Generator
) -> QueryORL:
    """Build the ORL of one query from a score model.

    Parameters
    ----------
    query
        Query id (named in every error and decision).
    model
        The method's model of the query's data (:mod:`orlbuild.builders.strength_models`).
    params
        Resolved build parameters (sig, uncertainty, reg, disconnected, ...).
    rng
        Random generator of this query (bootstrap).

    Returns
    -------
    QueryORL

    Raises
    ------
    QueryBuildError
        For never-compared items, a disconnected graph (policy ``fail``), a
        failed fit or non-convergence, naming the query and the cause.
    """
    comparisons = model.comparisons
    if comparisons.n_items == 1:
        return _single_item(query, str(comparisons.items[0]))
    lonely = never_compared_items(comparisons)
    if lonely:
        raise QueryBuildError(query, f"item(s) never compared: {', '.join(lonely)}")
    parts: list[IntArray] = comparison_components(comparisons)
    if len(parts) == 1:
        return _component_orl(query, model, params, rng)
    components = [[str(i) for i in comparisons.items[p]] for p in parts]
    if params.disconnected != "tiers":
        listed = " | ".join(", ".join(c) for c in components)
        raise QueryBuildError(
            query,
            f"comparison graph is disconnected into {len(parts)} components "
            f"({listed}); items in different components cannot be ordered; "
            "add comparisons or use --disconnected tiers",
        )
    orls = [_component_orl(query, model.subset(p), params, rng) for p in parts]
    return _merge_components(query, orls, components)
