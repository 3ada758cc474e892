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
   ``--tiering`` procedure (:mod:`orlbuild.builders.tiering.deciding`).

Every scored query also carries, per component, what the build's posterior pass
needs (:class:`~orlbuild.records.PosteriorInput`): the pass fits the
empirical-Bayes prior over all the build's queries, then tiers the
``posterior`` queries and scores every query's stated orders on the posterior
scale (:mod:`orlbuild.builders.tiering.posterior_pass`). A ``posterior`` query
leaves this module in one provisional tier; given the build's ``prior``
(:func:`orl_from_model`), it is tiered here at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from orlbuild.builders.arrays import IntArray
from orlbuild.builders.comparison_graph import comparison_components, never_compared_items
from orlbuild.builders.estimation.strength_models import StrengthModel
from orlbuild.builders.estimation.uncertainty import (
    ScoreUncertainty,
    bootstrap_samples,
    bootstrap_uncertainty,
    ep_uncertainty,
    fisher_uncertainty,
    sandwich_uncertainty,
)
from orlbuild.builders.parameters import BuildParameters
from orlbuild.builders.tiering.backed_orders import (
    boundary_evidence,
    stated_order_counts,
)
from orlbuild.builders.tiering.deciding import (
    TIERING_PROCEDURES,
    TieringCase,
    TieringEvidence,
    tiering_evidence,
)
from orlbuild.builders.tiering.equivalence import with_pair_states
from orlbuild.builders.tiering.posterior import PosteriorPrior
from orlbuild.builders.tiering.posterior_pass import apply_posterior, tiers_by_posterior
from orlbuild.builders.tiering.walk import score_order, tiers_from_scores
from orlbuild.records import (
    EstimationError,
    PosteriorInput,
    QueryBuildError,
    QueryORL,
    TieDecision,
)
from orlbuild.vocabulary import TieringProcedure

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
    samples = bootstrap_samples(
        model.fit,
        clusters,
        resamples=params.bootstrap,
        rng=rng,
        unit_sizes=model.unit_sizes,
        quiet=bool(getattr(model, "fits_guarded", False)),
        fit_many=getattr(model, "fit_many", None),
    )
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
    posterior = tiers_by_posterior(params)
    names = [str(i) for i in items]
    try:
        if params.tiering is TieringProcedure.posterior and params.margin is None:
            # no family-wise test is needed
            evidence = TieringEvidence(None, None, np.ones(len(items), dtype=bool))
        else:
            evidence = tiering_evidence(unc, params)
        if posterior:  # one provisional tier, tiered by the build's posterior pass
            order = score_order(items, unc.scores)
            tiers, decisions = [[names[k] for k in order]], []
        elif params.tiering is TieringProcedure.posterior:  # --sig 0: a strict order
            tiers, decisions = tiers_from_scores(query, items, unc, sig=0.0)
        else:
            procedure = TIERING_PROCEDURES[str(params.tiering)]
            tiers, decisions = procedure(TieringCase(query, items, unc, model, params, evidence))
    except EstimationError as exc:
        raise QueryBuildError(query, str(exc)) from exc
    orl = QueryORL(
        query=query,
        tiers=tiers,
        scores=dict(zip(names, unc.scores.tolist(), strict=True)),
        intervals={
            n: (lo, hi)
            for n, lo, hi in zip(names, unc.low.tolist(), unc.high.tolist(), strict=True)
        },
        decisions=decisions,
        posterior_inputs=[_posterior_input(items, unc, evidence)],
    )
    if posterior:
        return orl
    return with_pair_states(
        _with_backing(orl, items, evidence), items, evidence.critical, params.margin
    )


def _posterior_input(
    items: npt.NDArray[np.object_], unc: ScoreUncertainty, evidence: TieringEvidence
) -> PosteriorInput:
    order = score_order(items, unc.scores)
    block = np.ix_(order, order)
    return PosteriorInput(
        items=tuple(str(items[k]) for k in order),
        scores=np.asarray(unc.scores[order], dtype=np.float64),
        se=np.asarray(unc.se[block], dtype=np.float64),
        p_value=np.asarray(unc.p_value[block], dtype=np.float64),
        variance=unc.variance,
        critical=None if evidence.critical is None else evidence.critical[block],
    )


def _with_backing(
    orl: QueryORL, items: npt.NDArray[np.object_], evidence: TieringEvidence
) -> QueryORL:
    """Record, per boundary, its weakest crossing pair, and which stated orders no test backs."""
    if evidence.separations is None:
        return orl
    position = {str(item): k for k, item in enumerate(items)}
    tier_members = [np.array([position[i] for i in tier], dtype=np.int64) for tier in orl.tiers]
    opens = {item: k for k, tier in enumerate(orl.tiers) if k > 0 for item in tier}
    decisions = []
    for decision in orl.decisions:
        k = opens.get(decision.item)
        if decision.decision == "separated" and k is not None:
            above = np.concatenate(tier_members[:k])
            below = np.concatenate(tier_members[k:])
            ev = boundary_evidence(items, above, below, evidence.separations, evidence.measured)
            decision = replace(
                decision,
                weakest_above=ev.above,
                weakest_below=ev.below,
                weakest_z=ev.z,
                weakest_critical=ev.critical,
                crossing_pairs=ev.crossing,
                unbacked_pairs=ev.unbacked,
            )
        decisions.append(decision)
    stated, unbacked = stated_order_counts(tier_members, evidence.separations, evidence.measured)
    flagged = sorted(str(items[k]) for k in np.flatnonzero(~evidence.measured))
    warnings = list(orl.warnings)  # the counts are fields, rendered at the edges
    if flagged:
        warnings.append(
            f"under-judged item(s) placed by their estimates, their orders not backed: "
            f"{', '.join(flagged)} (docs/tiers-and-audit.md, 'How tiers are decided and audited')"
        )
    return replace(
        orl,
        decisions=decisions,
        warnings=warnings,
        under_judged=flagged,
        stated_orders=stated,
        unbacked_orders=unbacked,
    )


def _total(values: list[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


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
    sizes = [len(t) for t in tiers]
    stated = (sum(sizes) ** 2 - sum(x * x for x in sizes)) // 2
    within = _total([p.stated_orders for p in parts])
    # orders across components are stated by the union of tiers but never tested
    unbacked = _total([p.unbacked_orders for p in parts])
    if within is not None and unbacked is not None:
        unbacked += stated - within
    return QueryORL(
        query=query,
        tiers=tiers,
        scores={k: v for p in parts for k, v in p.scores.items()},
        intervals={k: v for p in parts for k, v in p.intervals.items()},
        decisions=decisions,
        components=components,
        under_judged=sorted(i for p in parts for i in p.under_judged),
        posterior_inputs=[i for p in parts for i in p.posterior_inputs],
        stated_orders=stated if within is not None else None,
        unbacked_orders=unbacked,
        warnings=[w for p in parts for w in p.warnings]
        + [
            f"comparison graph has {len(parts)} components ordered separately "
            f"(tier k = union of each component's tier k): {listed}"
        ],
    )


def orl_from_model(
    query: str,
    model: StrengthModel,
    params: BuildParameters,
    rng: np.random.Generator,
    prior: PosteriorPrior | None = None,
) -> QueryORL:
    """Build the ORL of one query from a score model.

    Parameters
    ----------
    query
        Query id (named in every error and decision).
    model
        The method's model of the query's data
        (:mod:`orlbuild.builders.estimation.strength_models`).
    params
        Resolved build parameters (sig, uncertainty, reg, disconnected, ...).
    rng
        Random generator of this query (bootstrap).
    prior
        The build's empirical-Bayes prior: the query is tiered (``posterior``)
        and its orders scored at once, as the build's posterior pass does;
        ``None``: left to the pass (:class:`~orlbuild.records.PosteriorInput`).

    Returns
    -------
    QueryORL

    Raises
    ------
    QueryBuildError
        For never-compared items, a disconnected graph (policy ``fail``), a
        failed fit or non-convergence, naming the query and the cause.
    """
    orl = _orl_from_model(query, model, params, rng)
    if prior is None:
        return orl
    return apply_posterior({query: orl}, params, prior)[query]


def _orl_from_model(
    query: str, model: StrengthModel, params: BuildParameters, rng: np.random.Generator
) -> QueryORL:
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
