"""A :class:`~orlbuild.builders.planning.plan_records.Plan` for a build tiered by ``posterior``
(docs/planning.md, "Planning for `--tiering posterior`").

:func:`~orlbuild.builders.planning.planner.plan_comparisons` hands a query set to
:func:`posterior_plan` when it is given the build's empirical-Bayes prior; the pairs come from
:func:`~orlbuild.builders.planning.posterior_pairs.posterior_pairs` (the Thompson-style rule)
and each query's status from its cut probabilities:

* ``open_decisions``: every gap of the score order whose cut probability ``c_k`` lies in
  ``[0.05, 0.95]`` (kind ``boundary``, with the two items either side and ``c_k``), and every
  item compared fewer than 3 times (kind ``item``);
* ``split_risk``: the posterior probability that some gap is stated wrongly (a stated
  boundary not real, or a real one not stated); settled as
  :mod:`~orlbuild.builders.planning.posterior_pairs` defines it, on the build's tiers.

A planned pair serves ``boundary``; its ``decision`` is ``A vs B``, or ``uniform`` for the
share of the round drawn uniformly, and its ``value`` is its query's ``sum_k c_k (1 - c_k)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from orlbuild.builders.arrays import FloatArray
from orlbuild.builders.planning.plan_records import Plan, PlannedPair, QueryEvidence, QueryPlan
from orlbuild.builders.planning.posterior_pairs import (
    MIN_COMPARISONS,
    OPEN_CUT,
    posterior_pairs,
)
from orlbuild.builders.planning.query_status import pair_state_counts
from orlbuild.builders.tiering.posterior import PosteriorPrior, fit_prior
from orlbuild.vocabulary import OpenDecision, QueryStatus

__all__ = ["evidence_prior", "posterior_plan"]


def _se(cov: FloatArray) -> FloatArray:
    d = np.diag(cov)
    return np.sqrt(np.clip(d[:, None] + d[None, :] - 2.0 * cov, 0.0, None))


def evidence_prior(evidence: Sequence[QueryEvidence]) -> PosteriorPrior:
    """The empirical-Bayes prior of the queries the planner sees (their scores and the
    standard errors of their covariances), as a ``posterior`` build fits it."""
    return fit_prior([(ev.scores, _se(ev.cov)) for ev in evidence])


def posterior_plan(
    evidence: list[QueryEvidence],
    budget: int,
    prior: PosteriorPrior,
    *,
    max_per_query: int | None,
    repeat_limit: int,
    seed: int,
    margin: float | None,
) -> Plan:
    """Plan ``budget`` comparisons for a ``posterior`` build (the module notes).

    Parameters
    ----------
    evidence
        One :class:`QueryEvidence` per query.
    budget, max_per_query, repeat_limit, seed
        As :func:`~orlbuild.builders.planning.planner.plan_comparisons`.
    prior
        The build's empirical-Bayes prior.
    margin
        Equivalence margin of the pair states reported per query (``None``: none).

    Returns
    -------
    Plan
        The pairs in a shuffled order, presentation order random, and every query's status.
    """
    rng = np.random.default_rng([seed, 0x706F7374])
    plans = posterior_pairs(
        [(ev.scores, ev.cov) for ev in evidence],
        budget,
        prior,
        rng=rng,
        comparisons=[ev.item_comparisons for ev in evidence],
        tiers=[ev.tiers for ev in evidence],
        max_per_query=max_per_query,
        repeat_limit=repeat_limit,
    )
    states = pair_state_counts(evidence, margin)
    plan = Plan(pairs=[])
    for ev, qp in zip(evidence, plans, strict=True):
        names = ev.items
        decisions: list[dict[str, Any]] = []
        for k in np.flatnonzero(
            (qp.cut_probability >= OPEN_CUT) & (qp.cut_probability <= 1.0 - OPEN_CUT)
        ).tolist():
            decisions.append(
                {
                    "kind": OpenDecision.boundary.value,
                    "pair": [str(names[qp.order[k]]), str(names[qp.order[k + 1]])],
                    "cut_probability": float(qp.cut_probability[k]),
                }
            )
        boundaries = len(decisions)
        for i in np.flatnonzero(ev.item_comparisons < MIN_COMPARISONS).tolist():
            decisions.append(
                {
                    "kind": OpenDecision.item.value,
                    "item": str(names[i]),
                    "comparisons": int(ev.item_comparisons[i]),
                }
            )
        plan.queries[ev.query] = QueryPlan(
            query=ev.query,
            status=(QueryStatus.settled if qp.settled else QueryStatus.open).value,
            open_decisions=decisions,
            open_counts={
                OpenDecision.boundary.value: boundaries,
                OpenDecision.tie.value: 0,
                OpenDecision.item.value: len(decisions) - boundaries,
            },
            split_risk=qp.risk,
            expected_judgments=None,
            planned=len(qp.pairs),
            pair_states=states[ev.query],
        )
        flips = rng.random(len(qp.pairs)) < 0.5
        for (i, j), sampled, flip in zip(qp.pairs.tolist(), qp.sampled, flips, strict=True):
            a, b = (j, i) if flip else (i, j)
            plan.pairs.append(
                PlannedPair(
                    query=ev.query,
                    item_a=str(names[a]),
                    item_b=str(names[b]),
                    serves=OpenDecision.boundary.value,
                    decision=f"{names[i]} vs {names[j]}" if sampled else "uniform",
                    value=qp.value,
                )
            )
    order = rng.permutation(len(plan.pairs))
    plan.pairs = [plan.pairs[k] for k in order]
    return plan
