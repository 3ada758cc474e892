"""The build's posterior pass: one empirical-Bayes prior over all queries, then the
``posterior`` tiers and every query's stated orders on the posterior scale
(docs/tiers-and-audit.md, "The posterior computation").

A build first estimates every query (:mod:`orlbuild.builders.tiering.query_orl`;
each scored query carries a :class:`~orlbuild.records.PosteriorInput` per
connected component), then :func:`fit_build_prior` fits ``(lambda, tau)`` over
every component of two or more items of the build, and :func:`apply_posterior`

* tiers the components of a ``posterior`` build (step 6, in the walk's score
  order; tier ``k`` of a query with several components is the union of their
  tier ``k``, as for every tiering) and records one decision per item after the
  first of each component, against its tier's leader;
* records, whatever the tiering, the query's ``E`` and ``N`` (the posterior
  expected number of wrong stated orders and the number stated, over pairs of
  one component: across components no order is tested, so none is scored), the
  boundary probability of every gap of each component's score order and each
  item's probability of belonging to its component's top segment
  (:class:`~orlbuild.records.QueryPosterior`).

Queries of one size are computed together
(:func:`~orlbuild.builders.tiering.posterior.sorted_posterior`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import numpy as np

from orlbuild.builders.arrays import IntArray
from orlbuild.builders.parameters import BuildParameters
from orlbuild.builders.tiering.equivalence import with_pair_states
from orlbuild.builders.tiering.posterior import (
    PosteriorPrior,
    SortedPosterior,
    fit_prior,
    sorted_posterior,
    stated_order_risk,
)
from orlbuild.builders.tiering.walk import EXACT_TIE
from orlbuild.records import (
    PosteriorBoundary,
    PosteriorInput,
    QueryORL,
    QueryPosterior,
    TieDecision,
)
from orlbuild.vocabulary import TieringProcedure

__all__ = ["apply_posterior", "fit_build_prior", "posterior_rule", "tiers_by_posterior"]

#: Components computed together at most (memory: a few ``(n + 1)^2`` tables each).
_CHUNK = 2048


def tiers_by_posterior(params: BuildParameters) -> bool:
    """Whether the pass decides the tiers: ``--tiering posterior``, unless ``--sig 0`` asks
    for a strict order (as for every procedure)."""
    return params.tiering is TieringProcedure.posterior and params.sig != 0.0


def fit_build_prior(orls: Iterable[QueryORL]) -> PosteriorPrior | None:
    """The empirical-Bayes prior over every component of two or more items of ``orls``;
    ``None`` when no query carries a posterior input (graded and ``direct`` builds)."""
    built = list(orls)
    if not any(orl.posterior_inputs for orl in built):
        return None
    return fit_prior(
        [(i.scores, i.se) for orl in built for i in orl.posterior_inputs if len(i.items) > 1]
    )


def posterior_rule(probability: float, cut: bool, fdr: float) -> str:
    """The rule recorded with a ``posterior`` decision."""
    verdict = "boundary" if cut else "no boundary"
    return (
        f"posterior: {verdict} (P(boundary) {probability:.3f}); "
        f"the finest tiering with E/N <= fdr {fdr:g}"
    )


def _current_tiers(orl: QueryORL, component: PosteriorInput) -> IntArray:
    """The built tiers of a component's items, in its score order."""
    ranks = orl.ranks
    return np.array([ranks[i] for i in component.items], dtype=np.int64)


def _decisions(
    query: str, component: PosteriorInput, tiers: IntArray, gaps: np.ndarray, fdr: float
) -> list[TieDecision]:
    n = len(component.items)
    scores, se, p = component.scores, component.se, component.p_value
    decisions = []
    leader = 0
    for k in range(1, n):
        cut = bool(tiers[k] != tiers[k - 1])
        diff = float(scores[leader] - scores[k])
        pair_se = float(se[leader, k])
        if pair_se > 0:
            z: float | None = diff / pair_se
        else:
            z = None if diff == 0 else float("inf")
        if not cut and diff <= EXACT_TIE:
            rule = "exact score tie"
        else:
            rule = posterior_rule(float(gaps[k - 1]), cut, fdr)
        decisions.append(
            TieDecision(
                query=query,
                leader=component.items[leader],
                item=component.items[k],
                score_leader=float(scores[leader]),
                score_item=float(scores[k]),
                diff=diff,
                se=pair_se,
                p_value=float(p[leader, k]),
                decision="separated" if cut else "tied",
                rule=rule,
                variance=component.variance,
                procedure=TieringProcedure.posterior.value,
                family_size=n - 1,
                z=z,
            )
        )
        if cut:
            leader = k
    return decisions


def _evidence(
    component: PosteriorInput, number: int, result: SortedPosterior, row: int, tiers: IntArray
) -> tuple[float, int, list[PosteriorBoundary], dict[str, float]]:
    expected, stated = stated_order_risk(result.wrong[row], tiers)
    gaps = result.boundary_probability[row]
    items = component.items
    boundaries = [
        PosteriorBoundary(
            component=number,
            position=k,
            above=items[k - 1],
            below=items[k],
            probability=float(gaps[k - 1]),
            stated=bool(tiers[k] != tiers[k - 1]),
        )
        for k in range(1, len(items))
    ]
    top = dict(zip(items, result.same[row, 0].tolist(), strict=True))
    return expected, stated, boundaries, top


def apply_posterior(
    orls: dict[str, QueryORL], params: BuildParameters, prior: PosteriorPrior
) -> dict[str, QueryORL]:
    """Every query of ``orls`` tiered (``posterior`` builds) and its posterior evidence recorded.

    Parameters
    ----------
    orls
        Query -> ORL as the estimation left it (with its posterior inputs).
    params
        The resolved build parameters (``tiering``, ``fdr``, ``margin``).
    prior
        The build's empirical-Bayes prior (:func:`fit_build_prior`).

    Returns
    -------
    dict
        Query -> ORL with ``posterior`` filled in and the inputs dropped, in the
        order of ``orls``; queries without inputs are returned as they are.
    """
    tiering = tiers_by_posterior(params)
    fdr = float(params.fdr) if tiering and params.fdr is not None else None
    slots = [
        (query, number, component)
        for query, orl in orls.items()
        for number, component in enumerate(orl.posterior_inputs, start=1)
        if len(component.items) > 1
    ]
    by_size: dict[int, list[int]] = {}
    for index, (_, _, component) in enumerate(slots):
        by_size.setdefault(len(component.items), []).append(index)
    computed: dict[int, tuple[SortedPosterior, int]] = {}
    for indices in by_size.values():
        for start in range(0, len(indices), _CHUNK):
            chunk = indices[start : start + _CHUNK]
            y = np.stack([slots[i][2].scores for i in chunk])
            se = np.stack([slots[i][2].se for i in chunk])
            result = sorted_posterior(y, se, prior, fdr=fdr)
            for row, i in enumerate(chunk):
                computed[i] = (result, row)
    per_query: dict[str, list[int]] = {}
    for index, (query, _, _) in enumerate(slots):
        per_query.setdefault(query, []).append(index)
    out: dict[str, QueryORL] = {}
    for query, orl in orls.items():
        if not orl.posterior_inputs:
            out[query] = orl
            continue
        parts = [(slots[i], *computed[i]) for i in per_query.get(query, [])]
        out[query] = _finish(orl, parts, params)
    return out


def _finish(
    orl: QueryORL,
    parts: list[tuple[tuple[str, int, PosteriorInput], SortedPosterior, int]],
    params: BuildParameters,
) -> QueryORL:
    tiering = tiers_by_posterior(params)
    several = len(orl.posterior_inputs) > 1
    expected, stated = 0.0, 0
    boundaries: list[PosteriorBoundary] = []
    top: dict[str, float] = {i.items[0]: 1.0 for i in orl.posterior_inputs if len(i.items) == 1}
    k_feas = k_post = 0
    component_tiers: list[tuple[PosteriorInput, IntArray]] = []
    decisions: list[TieDecision] = []
    for (_, number, component), result, row in parts:
        if tiering:
            tiers = result.tiers[row]
            gaps = result.boundary_probability[row]
            made = _decisions(orl.query, component, tiers, gaps, float(params.fdr or 0.0))
            if several:
                total = len(orl.posterior_inputs)
                made = [replace(d, rule=f"{d.rule} (component {number} of {total})") for d in made]
            decisions += made
            component_tiers.append((component, tiers))
        else:
            tiers = _current_tiers(orl, component)
        e, s, b, t = _evidence(component, number, result, row, tiers)
        expected += e
        stated += s
        boundaries += b
        top.update(t)
        k_feas += int(result.k_feasible[row])
        k_post += int(result.k_posterior[row])
    evidence = QueryPosterior(
        expected_wrong=expected,
        stated=stated,
        boundaries=boundaries,
        top_probability=top,
        k_feasible=k_feas if tiering and parts else None,
        k_posterior=k_post if parts else None,
    )
    if not tiering:
        return replace(orl, posterior=evidence, posterior_inputs=[])
    singles = [i for i in orl.posterior_inputs if len(i.items) == 1]
    depth = max([int(t.max()) for _, t in component_tiers] + [1])
    tier_lists: list[list[str]] = [[] for _ in range(depth)]
    for component in singles:
        tier_lists[0].append(component.items[0])
    for component, tiers in component_tiers:
        for item, tier in zip(component.items, tiers.tolist(), strict=True):
            tier_lists[tier - 1].append(item)
    if several:
        tier_lists = [sorted(t) for t in tier_lists]
    built = replace(
        orl, tiers=tier_lists, decisions=decisions, posterior=evidence, posterior_inputs=[]
    )
    if params.margin is not None:
        for component, _ in component_tiers:
            if component.critical is not None:
                items = np.array(component.items, dtype=object)
                built = with_pair_states(built, items, component.critical, params.margin)
    return built
