"""Plan the next comparisons: where does one more judgment decide the most (docs/planning.md,
"Planning the next judgments").

Pure computation over what a build knows of each query
(:class:`~orlbuild.builders.planning.plan_records.QueryEvidence`): the scores ``s``, their
covariance ``C``, the critical value of every pair (the build's max-t
procedure), the current tiers and how often each item was compared. Each query's status
and open decisions come from :mod:`orlbuild.builders.planning.query_status`, the value of
a comparison from :mod:`orlbuild.builders.planning.pair_values`. A query of a build tiered
by ``model`` also carries its cuts and is planned for them instead: the cuts whose BIC
decision and the items whose group may change when the judgments double
(:mod:`orlbuild.builders.planning.model_cuts`; at the pair level only its poorly measured
items count). A build tiered by ``posterior`` is planned by
:mod:`orlbuild.builders.planning.posterior_plan`. What follows is the
default's.

**Sweeps.** Picks are greedy with the rank-one update after each, in sweeps over all
queries at once: each sweep gives one comparison to every open query whose
best value is at least :data:`SWEEP_SHARE` of the best value of any query, so
the budget goes to queries by value, not evenly. A pair whose projected
variance makes it decided stops counting (diminishing returns). Nothing is proposed for a
settled query.
"""

from __future__ import annotations

import numpy as np

from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.parameters import PlanSettings
from orlbuild.builders.planning.model_cuts import (
    OPEN_CHANCE,
    cut_chances,
    placement_chances,
)
from orlbuild.builders.planning.pair_values import (
    KINDS,
    QueryGroup,
    add_comparisons,
    best_candidates,
    chunks,
    pair_view,
    resolve_chance,
    stack_group,
)
from orlbuild.builders.planning.plan_options import check_plan_options
from orlbuild.builders.planning.plan_records import Plan, PlannedPair, QueryEvidence, QueryPlan
from orlbuild.builders.planning.query_status import group_status
from orlbuild.builders.tiering.equivalence import UNDECIDED
from orlbuild.builders.tiering.posterior import PosteriorPrior
from orlbuild.vocabulary import PlanObjective, QueryStatus

__all__ = ["REPEAT_LIMIT", "SWEEP_SHARE", "plan_comparisons"]

#: A sweep serves every open query whose best value is at least this share of the best.
SWEEP_SHARE = 0.5
#: Default most asks of one pair in one plan (``--repeat-limit``; :class:`PlanSettings`).
REPEAT_LIMIT = PlanSettings.repeat_limit

_BOUNDARY_WORD, _TIE_WORD, _ITEM_WORD = (k.value for k in KINDS)


def plan_comparisons(
    evidence: list[QueryEvidence],
    budget: int,
    *,
    max_per_query: int | None = None,
    repeat_limit: int = REPEAT_LIMIT,
    seed: int = 0,
    objective: PlanObjective | str = PlanObjective.tiers,
    margin: float | None = None,
    prior: PosteriorPrior | None = None,
) -> Plan:
    """Propose ``budget`` comparisons over the queries of ``evidence``.

    Parameters
    ----------
    evidence
        One :class:`QueryEvidence` per query of the build.
    budget
        Comparisons to propose (0: only the status).
    max_per_query
        At most this many comparisons for one query (``None``: no cap).
    repeat_limit
        At most this many proposals of one pair in the plan.
    seed
        Seed of the presentation order (which item is ``item_a``), of the
        order of the pairs (queries mixed) and of breaking exact value ties.
    objective
        ``tiers`` (every open decision) or ``top`` (decisions of the top tier).
    margin
        Equivalence margin (log-strength), or ``None``.
    prior
        The empirical-Bayes prior of a build tiered by ``posterior``: the queries are then
        planned by the Thompson-style rule of
        :mod:`orlbuild.builders.planning.posterior_plan` (``objective`` is not used);
        ``None``: the max-t decisions (or a ``model`` query's cuts) described above.

    Returns
    -------
    Plan
        The pairs in a shuffled order, and every query's status.

    Raises
    ------
    ConfigError
        A negative budget, a cap or repeat limit below 1.
    """
    check_plan_options(budget, max_per_query, repeat_limit)
    goal = PlanObjective(objective)
    if prior is not None:
        from orlbuild.builders.planning.posterior_plan import posterior_plan

        return posterior_plan(
            evidence,
            budget,
            prior,
            max_per_query=max_per_query,
            repeat_limit=repeat_limit,
            seed=seed,
            margin=margin,
        )
    rng = np.random.default_rng([seed, 0x706C616E])
    by_size: dict[int, list[QueryEvidence]] = {}
    plan = Plan(pairs=[])
    for ev in evidence:
        if len(ev.items) < 2:
            plan.queries[ev.query] = QueryPlan(
                ev.query, QueryStatus.settled.value, [], {k.value: 0 for k in KINDS}, 0.0, None
            )
        else:
            by_size.setdefault(len(ev.items), []).append(ev)
    groups = [stack_group(evs, goal) for _, evs in sorted(by_size.items())]
    for g in groups:
        for qp in group_status(g, margin):
            plan.queries[qp.query] = qp
    cap = budget if max_per_query is None else max_per_query
    remaining = budget
    picks: list[tuple[int, int, int, int, float]] = []  # group, row, pair, served, value
    while remaining > 0:
        found = []  # columns: value, jitter, group, row, pair, served
        for gi, g in enumerate(groups):
            rows = np.flatnonzero(g.open_query & (g.planned < cap))
            for block in chunks(g, rows):
                gains, best, serving = best_candidates(g, block, margin, repeat_limit)
                keep = np.isfinite(gains) & (gains > 0)
                found.append(
                    np.column_stack(
                        [
                            gains[keep],
                            rng.random(len(block))[keep],
                            np.full(int(keep.sum()), gi),
                            block[keep],
                            best[keep],
                            serving[keep],
                        ]
                    )
                )
        table = np.concatenate(found) if found else np.empty((0, 6))
        if not len(table):
            break
        table = table[np.lexsort((table[:, 1], -table[:, 0]))]
        chosen = table[table[:, 0] >= SWEEP_SHARE * table[0, 0]][:remaining]
        for gi, g in enumerate(groups):
            mine = chosen[chosen[:, 2] == gi]
            if len(mine):
                add_comparisons(g, mine[:, 3].astype(np.int64), mine[:, 4].astype(np.int64))
        picks += [(int(f[2]), int(f[3]), int(f[4]), int(f[5]), float(f[0])) for f in chosen]
        remaining -= len(chosen)
    for g in groups:
        _expected_decisions(g, margin, plan)
    swap = rng.random(len(picks)) < 0.5
    for (gi, row, pair, served, value), flip in zip(picks, swap, strict=True):
        g = groups[gi]
        ev = g.evidence[row]
        i, j = int(g.first[pair]), int(g.second[pair])
        if flip:
            i, j = j, i
        plan.pairs.append(
            PlannedPair(
                query=ev.query,
                item_a=str(ev.items[i]),
                item_b=str(ev.items[j]),
                serves=_serves(g, row, served),
                decision=_decision_text(g, row, served),
                value=value,
            )
        )
        plan.queries[ev.query].planned += 1
    order = rng.permutation(len(plan.pairs))
    plan.pairs = [plan.pairs[k] for k in order]
    return plan


def _expected_decisions(g: QueryGroup, margin: float | None, plan: Plan) -> None:
    """Per query, the open pairs the planned comparisons are expected to decide."""
    assert g.before is not None
    rows = np.flatnonzero(g.planned > 0)
    if not len(rows):
        return
    after = pair_view(g, rows, margin)
    before = g.before
    open_pair = (before.codes[rows] == UNDECIDED) & g.scope[rows]
    horizon = before.var[rows] / np.maximum(after.var, 1e-300)
    p_sep, p_eq = resolve_chance(
        before.absd[rows],
        before.var[rows],
        g.critical[rows],
        g.single[rows][:, None],
        margin,
        np.maximum(horizon, 1.0),
    )
    expected = np.where(open_pair, np.clip(p_sep + p_eq, 0.0, 1.0), 0.0).sum(axis=1)
    if g.model is not None and g.model_before is not None:
        expected = np.where(g.model.active[rows], _model_decided(g, rows), expected)
    for row, value in zip(rows.tolist(), expected.tolist(), strict=True):
        plan.queries[g.evidence[row].query].expected_decided = float(value)


def _model_decided(g: QueryGroup, rows: IntArray) -> FloatArray:
    """Per ``model`` query: the open cuts and placements the planned pairs are expected to
    settle, as the share of each one's chance of changing they remove, summed."""
    assert g.model is not None and g.model_before is not None
    stack = g.model.take(rows)
    kept, _ = cut_chances(stack, g.cov[rows])
    moved, _ = placement_chances(stack, g.cov[rows])
    unsure_before, moved_before = (x[rows] for x in g.model_before)
    total = np.zeros(len(rows))
    for before, after in ((unsure_before, np.minimum(kept, 1.0 - kept)), (moved_before, moved)):
        open_ = before >= OPEN_CHANCE
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.clip(1.0 - after / before, 0.0, 1.0)
        total += np.where(open_, share, 0.0).sum(axis=1)
    return total


def _serves(g: QueryGroup, row: int, served: int) -> str:
    """Kind of the open decision ``served`` of query ``row`` was (before the plan): a pair's,
    or for a ``model`` query a cut's (kept: ``boundary``, rejected: ``tie``) or an item's."""
    assert g.kind is not None
    pairs = len(g.first)
    if served < pairs:
        return KINDS[int(g.kind[row, served])].value
    assert g.model is not None
    cut = served - pairs
    if cut < len(g.model.kept[row]):
        return _BOUNDARY_WORD if g.model.kept[row, cut] else _TIE_WORD
    return _ITEM_WORD


def _decision_text(g: QueryGroup, row: int, served: int) -> str:
    """``A vs B`` for a pair, ``A | B`` for the cut between two items adjacent in the score
    order, the item's id for a placement."""
    items = g.evidence[row].items
    pairs = len(g.first)
    if served < pairs:
        return f"{items[g.first[served]]} vs {items[g.second[served]]}"
    assert g.model is not None
    order = g.model.order[row]
    cut = served - pairs
    if cut < len(order) - 1:
        return f"{items[order[cut]]} | {items[order[cut + 1]]}"
    return str(items[cut - (len(order) - 1)])
