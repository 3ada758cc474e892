"""Plan the next comparisons: where does one more judgment decide the most (docs/planning.md,
"Planning the next judgments").

Pure computation over what a build knows of each query: the scores ``s``, their
covariance ``C``, the critical value of every pair (the build's max-t
procedure), the current tiers and how often each item was compared. A query
of a build tiered by ``model`` also carries its cuts (:class:`ModelCuts`) and
is planned for them instead: the cuts whose BIC decision and the items whose
group may change when the judgments double (:mod:`orlbuild.builders.planning.model_cuts`;
at the pair level only its poorly measured items count), and it is settled
when that chance is at most :data:`MODEL_SETTLE_RISK`. What follows is the
default's.

**Open decisions** (pairs ``a, b`` of a query):

* ``boundary`` - ``a`` and ``b`` sit in different tiers but the pair is not
  separated: the ORL states an order no test backs;
* ``tie`` - same tier, neither separated nor (with a margin) shown equivalent;
* ``item`` - a pair of an item too poorly measured to place (compared fewer
  than :data:`MIN_ITEM_COMPARISONS` times, or a standard error more than
  :data:`POOR_SE_RATIO` times the query's median), still undecided.

**Chance of a decision.** For an undecided pair with ``z = |d| / se``, the
chance that it is decided once its information doubles, by the preposterior
plug-in (the estimate after more data is ``N(d, V / 2)`` around today's, the
future standard error ``sqrt(V / 2)``): separated with
``Phi(sqrt(2) z - c) + Phi(-sqrt(2) z - c)``, shown equivalent with the
analogous interval probability when a margin is given.

**Boundaries.** A boundary can only sit where every pair across a cut of the
score order is separated, so a pair also weighs by the plausible cuts it
blocks (:func:`_cut_weights`): :data:`CUT_WEIGHT` times the change in the
expected number of backed cuts per relative fall in its variance.

**Value of a comparison.** Comparing ``i`` and ``j`` adds
``w = p (1 - p)`` (``p`` the fitted chance that ``i`` wins) times
``u u^T`` (``u = e_i - e_j``) to the Fisher information, so the covariance
gets the rank-one update ``C - w C u u^T C / (1 + w u^T C u)`` and the
variance of every pair difference ``v`` falls by
``w (v^T C u)^2 / (1 + w u^T C u)``. The value of ``(i, j)`` is the sum over
open pairs of weight times relative variance reduction; the weight is the
pair's chance of a decision (at least :data:`FLOOR_WEIGHT` for boundaries and
poorly measured items, which the ORL must not leave as they are) plus its
boundary weight. Picks are
greedy with the rank-one update after each, in sweeps over all queries at
once (queries with the same number of items are stacked, so a sweep is a few
array operations): each sweep gives one comparison to every open query whose
best value is at least :data:`SWEEP_SHARE` of the best value of any query, so
the budget goes to queries by value, not evenly. A pair whose projected
variance makes it decided stops counting (diminishing returns).

**Settled.** A query is settled when every boundary is backed (every pair
across it separated), no poorly measured item has an undecided pair, and the
chance that some tie of a tier is split when the judgments double,
``1 - prod(1 - Phi(sqrt(2) z - c) - ...)`` over undecided same-tier pairs, is at
most :data:`SETTLE_RISK`. Ties shown equivalent never count. Nothing is
proposed for a settled query.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.special import expit, ndtr

from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.parameters import PlanSettings
from orlbuild.builders.planning.model_cuts import (
    MODEL_SETTLE_RISK,
    OPEN_CHANCE,
    ModelCuts,
    ModelStack,
    cut_chances,
    kept_chance,
    moved_chance,
    place_variances,
    placement_chances,
    stack_model_cuts,
)
from orlbuild.builders.tiering.equivalence import EQUIVALENT, SEPARATED, UNDECIDED, pair_state_codes
from orlbuild.builders.tiering.posterior import PosteriorPrior
from orlbuild.errors import ConfigError
from orlbuild.vocabulary import OpenDecision, PairState, PlanObjective, QueryStatus

__all__ = [
    "CUT_WEIGHT",
    "FLOOR_WEIGHT",
    "MIN_ITEM_COMPARISONS",
    "POOR_SE_RATIO",
    "REPEAT_LIMIT",
    "SETTLE_RISK",
    "SWEEP_SHARE",
    "Plan",
    "PlannedPair",
    "QueryEvidence",
    "QueryPlan",
    "check_plan_options",
    "pair_state_counts",
    "plan_comparisons",
]

#: An item compared fewer times than this is too poorly measured to place.
MIN_ITEM_COMPARISONS = 3
#: ... as is an item whose score's standard error exceeds this multiple of the query's median.
POOR_SE_RATIO = 2.0
#: Least weight of a boundary pair or a poorly measured item's pair.
FLOOR_WEIGHT = 0.5
#: A query is settled when the chance that doubling its judgments splits a tie is at most this.
SETTLE_RISK = 0.5
#: A sweep serves every open query whose best value is at least this share of the best.
SWEEP_SHARE = 0.5
#: Information multiple the chance of a decision looks ahead to (2: the judgments double).
HORIZON = 2.0
#: Open ties listed per query (the most likely to be decided first).
LISTED_TIES = 10
#: A query needing more than this multiple of its judgments gets no estimate.
MAX_FACTOR = 100.0
#: Default most asks of one pair in one plan (``--repeat-limit``; :class:`PlanSettings`).
REPEAT_LIMIT = PlanSettings.repeat_limit
#: Weight of the expected number of backed boundaries against the expected pair decisions
#: (chosen on seeded simulations, docs/planning.md "What planning buys").
CUT_WEIGHT = 2.0
#: Variance multiple of the finite difference behind a pair's sensitivity.
CUT_STEP = 0.8
#: Weight of an item's chance to move across a ``model`` boundary against a cut's uncertainty.
PLACE_WEIGHT = 4.0
#: Information multiple the ``model`` weights look ahead to.
MODEL_HORIZON = 2.0
#: Information multiples the ``model`` query's expected judgments are searched over.
_FACTORS = np.geomspace(1.0, MAX_FACTOR, 49)
#: Queries stacked per array operation (bounds memory: ``chunk * P^2`` floats).
CHUNK_ENTRIES = 4_000_000

_KINDS = (OpenDecision.boundary, OpenDecision.tie, OpenDecision.item)
_BOUNDARY, _TIE, _ITEM = 0, 1, 2


@dataclass(frozen=True)
class QueryEvidence:
    """What the planner needs to know about one query of a build.

    Attributes
    ----------
    query
        Query id.
    items
        Item ids, aligned with every array below.
    scores
        Scores (log-strengths; higher is better).
    cov
        ``(n, n)`` covariance of the scores.
    critical
        ``(n, n)`` critical value each pair is separated with (``inf`` on the diagonal).
    single
        The single-step max-t critical value (width of the simultaneous intervals).
    tiers
        Tier number of each item (1 best).
    item_comparisons
        Comparisons each item took part in.
    judgments
        Judgments of the query.
    model
        The ``model`` tiering's cuts when the build was tiered by ``model``
        (:mod:`orlbuild.builders.planning.model_cuts`): the planner then targets
        them instead of the max-t decisions; ``None`` otherwise.
    """

    query: str
    items: npt.NDArray[np.object_]
    scores: FloatArray
    cov: FloatArray
    critical: FloatArray
    single: float
    tiers: IntArray
    item_comparisons: IntArray
    judgments: int
    model: ModelCuts | None = None


@dataclass(frozen=True)
class PlannedPair:
    """One proposed comparison and the open decision it serves."""

    query: str
    item_a: str
    item_b: str
    serves: str
    decision: str
    value: float

    def to_json(self) -> dict[str, Any]:
        """``query, item_a, item_b, serves, decision, value``."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class QueryPlan:
    """A query's status and open decisions before the plan, and what the plan gives it.

    Attributes
    ----------
    query
        Query id.
    status
        ``settled`` or ``open``.
    open_decisions
        Unbacked boundaries (with their weakest crossing pair), poorly measured
        items, and the ties most likely to be decided (at most :data:`LISTED_TIES`).
    open_counts
        Number of open decisions of each kind (every open tie pair counted).
    split_risk
        Chance that doubling the judgments splits a tie (plug-in).
    expected_judgments
        Judgments expected to settle the query on top of today's (plug-in,
        spread as today's; ``None`` when more than :data:`MAX_FACTOR` times
        today's or no decision can be reached by more data).
    planned
        Comparisons this plan proposes for the query.
    pair_states
        How many pairs of the query are separated, equivalent, undecided.
    expected_decided
        Open pairs this plan's comparisons are expected to decide (plug-in
        preposterior, with the information the planned pairs add).
    """

    query: str
    status: str
    open_decisions: list[dict[str, Any]]
    open_counts: dict[str, int]
    split_risk: float
    expected_judgments: int | None
    planned: int = 0
    pair_states: dict[str, int] = field(default_factory=dict)
    expected_decided: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """JSON-ready mapping: every field but ``query`` (the key it is listed under)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "query"}


@dataclass
class Plan:
    """Proposed comparisons (queries mixed) and every query's status."""

    pairs: list[PlannedPair]
    queries: dict[str, QueryPlan] = field(default_factory=dict)


def _resolve_chance(
    absd: FloatArray,
    var: FloatArray,
    crit: FloatArray,
    single: FloatArray,
    margin: float | None,
    horizon: float | FloatArray = HORIZON,
) -> tuple[FloatArray, FloatArray]:
    """Chance of being separated, and of being shown equivalent, once the information grows
    ``horizon`` times (the future estimate is ``N(d, V - V')`` with ``V' = V / horizon``)."""
    future = np.sqrt(var / horizon)  # future standard error
    spread = np.sqrt(var - var / horizon)  # spread of the future estimate around today's
    with np.errstate(divide="ignore", invalid="ignore"):
        p_sep = ndtr((absd - crit * future) / spread) + ndtr((-absd - crit * future) / spread)
        if margin is None:
            p_eq = np.zeros_like(p_sep)
        else:
            half = margin - single * future
            p_eq = np.where(
                half > 0, ndtr((half - absd) / spread) - ndtr((-half - absd) / spread), 0.0
            )
    return np.nan_to_num(p_sep), np.nan_to_num(np.clip(p_eq, 0.0, 1.0))


@dataclass
class _Group:
    """Queries with the same number of items, stacked."""

    evidence: list[QueryEvidence]
    first: IntArray
    second: IntArray
    scores: FloatArray  # (Q, n)
    cov: FloatArray  # (Q, n, n), updated as pairs are planned
    critical: FloatArray  # (Q, P)
    single: FloatArray  # (Q,)
    tiers: IntArray  # (Q, n)
    counts: FloatArray  # (Q, n), planned comparisons added
    scope: npt.NDArray[np.bool_]  # (Q, P)
    weight_w: FloatArray  # (Q, P): p (1 - p) of each candidate pair
    asked: IntArray  # (Q, P) planned so far
    open_query: npt.NDArray[np.bool_]  # (Q,)
    planned: IntArray  # (Q,)
    kind: npt.NDArray[np.int8] | None = None  # (Q, P) kind of each pair before the plan
    before: _PairView | None = None  # every pair before the plan
    top_only: bool = False  # objective top: cuts count by how much they shrink the top tier
    model: ModelStack | None = None  # the model tiering's cuts and placements
    model_before: tuple[FloatArray, FloatArray] | None = None  # their chances of changing


def _stack(evidence: list[QueryEvidence], objective: PlanObjective) -> _Group:
    n = len(evidence[0].items)
    first, second = (x.astype(np.int64) for x in np.triu_indices(n, 1))
    scores = np.stack([e.scores for e in evidence])
    cov = np.stack([e.cov for e in evidence]).astype(np.float64, copy=True)
    critical = np.stack([e.critical[first, second] for e in evidence])
    single = np.array([e.single for e in evidence], dtype=np.float64)
    tiers = np.stack([e.tiers for e in evidence]).astype(np.int64)
    counts = np.stack([e.item_comparisons for e in evidence]).astype(np.float64)
    if objective is PlanObjective.top:
        top = tiers == 1
        se = np.sqrt(np.clip(np.diagonal(cov, axis1=1, axis2=2), 0.0, None))
        lowest_top = np.where(top, scores, np.inf).min(axis=1, keepdims=True)
        reaches = scores + single[:, None] * se >= lowest_top
        involved = top | reaches
        scope = involved[:, first] | involved[:, second]
    else:
        scope = np.ones((len(evidence), len(first)), dtype=bool)
    p = expit(scores[:, first] - scores[:, second])
    cuts = [e.model for e in evidence]
    model = None if all(c is None for c in cuts) else stack_model_cuts(cuts, cov, scores)
    return _Group(
        evidence=evidence,
        first=first,
        second=second,
        scores=scores,
        cov=cov,
        critical=critical,
        single=single,
        tiers=tiers,
        counts=counts,
        scope=scope,
        weight_w=p * (1.0 - p),
        asked=np.zeros((len(evidence), len(first)), dtype=np.int64),
        open_query=np.ones(len(evidence), dtype=bool),
        planned=np.zeros(len(evidence), dtype=np.int64),
        top_only=objective is PlanObjective.top,
        model=model,
    )


@dataclass
class _PairView:
    """Every pair's evidence in a block of stacked queries."""

    absd: FloatArray
    var: FloatArray
    codes: npt.NDArray[np.int8]
    kind: npt.NDArray[np.int8]
    p_sep: FloatArray
    p_eq: FloatArray
    weight: FloatArray  # planning weight of each open pair (0 when not open)
    poor: npt.NDArray[np.bool_]  # (Q, n)


def _pair_view(g: _Group, rows: slice | IntArray, margin: float | None) -> _PairView:
    a, b = g.first, g.second
    cov = g.cov[rows]
    diag = np.diagonal(cov, axis1=1, axis2=2)
    var = np.maximum(diag[:, a] + diag[:, b] - 2.0 * cov[:, a, b], 1e-300)
    absd = np.abs(g.scores[rows][:, a] - g.scores[rows][:, b])
    critical, single = g.critical[rows], g.single[rows][:, None]
    codes = pair_state_codes(absd, np.sqrt(var), critical, single, margin)
    se_item = np.sqrt(np.clip(diag, 0.0, None))
    median = np.median(se_item, axis=1, keepdims=True)
    poor = (g.counts[rows] < MIN_ITEM_COMPARISONS) | (se_item > POOR_SE_RATIO * median)
    tiers = g.tiers[rows]
    cross = tiers[:, a] != tiers[:, b]
    kind = np.where(poor[:, a] | poor[:, b], _ITEM, np.where(cross, _BOUNDARY, _TIE))
    p_sep, p_eq = _resolve_chance(absd, var, critical, single, margin)
    chance = np.clip(p_sep + p_eq, 0.0, 1.0)
    open_pair = (codes == UNDECIDED) & g.scope[rows]
    weight = np.where(kind == _TIE, chance, np.maximum(chance, FLOOR_WEIGHT))
    if g.model is not None:
        # a model query's decisions are its cuts; at the pair level only its poorly measured
        # items count, each item's pairs together as much as one boundary pair
        share = np.where(kind == _ITEM, weight / max(1, tiers.shape[1] - 1), 0.0)
        weight = np.where(g.model.active[rows][:, None], share, weight)
    return _PairView(
        absd=absd,
        var=var,
        codes=codes,
        kind=kind.astype(np.int8),
        p_sep=p_sep,
        p_eq=p_eq,
        weight=np.where(open_pair, weight, 0.0),
        poor=poor,
    )


def _cut_weights(g: _Group, rows: IntArray, view: _PairView) -> FloatArray:
    """Planning weight of each pair from the boundaries it blocks.

    A boundary can only sit at a cut of the score order across which every
    pair of well-measured items is separated (docs/tiers-and-audit.md, "How tiers
    are decided and audited"). With ``p_v`` the chance that pair ``v`` is
    separated once its information doubles, the chance that cut ``k`` is
    backed is about ``P_k = prod p_v`` over the undecided pairs crossing it,
    and the expected number of backed cuts ``E = sum_k value_k P_k`` changes
    with a relative fall ``r_v`` in the variance of pair ``v`` by
    ``sum_v r_v g_v sum_{k crossed by v} value_k P_k``, where
    ``g_v = -d log p_v / d log V_v`` (a finite difference). ``value_k`` is 1
    (objective ``tiers``: one more boundary) or the share of the top tier the
    cut removes (``top``). The weight is that coefficient, so pairs that
    block a plausible cut - usually the few closest pairs across a visible
    gap - count most, and a cut already backed counts no more.
    """
    scores = g.scores[rows]
    n = scores.shape[1]
    order = np.argsort(-scores, axis=1, kind="stable")
    position = np.empty_like(order)
    np.put_along_axis(position, order, np.arange(n)[None, :], axis=1)
    pa, pb = position[:, g.first], position[:, g.second]
    lo, hi = np.minimum(pa, pb), np.maximum(pa, pb)
    cuts = np.arange(1, n)  # cut k: positions < k above, >= k below
    crossing = (lo[:, :, None] < cuts) & (hi[:, :, None] >= cuts)  # (Q, P, n - 1)
    blocking = (view.codes == UNDECIDED) & ~(view.poor[:, g.first] | view.poor[:, g.second])
    critical, single = g.critical[rows], g.single[rows][:, None]
    p_now, _ = _resolve_chance(view.absd, view.var, critical, single, None)
    p_less, _ = _resolve_chance(view.absd, view.var * CUT_STEP, critical, single, None)
    with np.errstate(divide="ignore"):
        log_p = np.log(np.clip(p_now, 1e-300, 1.0))
        sensitivity = np.clip((np.log(np.clip(p_less, 1e-300, 1.0)) - log_p), 0.0, None)
    sensitivity /= -np.log(CUT_STEP)
    log_p = np.where(blocking, log_p, 0.0)
    log_cut = np.einsum("qpk,qp->qk", crossing, log_p)
    cut_value = np.ones_like(log_cut)
    if g.top_only:
        top = (g.tiers[rows] == 1).sum(axis=1, keepdims=True).astype(np.float64)
        cut_value = np.clip(top - cuts[None, :], 0.0, None) / np.maximum(top, 1.0)
    backed = np.exp(log_cut) * cut_value * (log_cut < 0)  # a backed cut gains nothing
    weight = np.einsum("qpk,qk->qp", crossing, backed) * sensitivity
    if g.model is not None:  # the max-t cuts do not decide a model query's tiers
        blocking &= ~g.model.active[rows][:, None]
    return np.where(blocking & g.scope[rows], weight, 0.0)


def _model_weights(
    g: _Group, rows: IntArray, cov: FloatArray
) -> tuple[ModelStack, FloatArray, FloatArray]:
    """Planning weights (per unit of relative variance) of the model cuts and placements."""
    assert g.model is not None
    stack = g.model.take(rows)
    kept, cut_var = cut_chances(stack, cov, MODEL_HORIZON)
    unsure = np.minimum(kept, 1.0 - kept) * stack.cut_value(g.tiers[rows], g.top_only)
    moved, place_var = placement_chances(stack, cov, MODEL_HORIZON)
    moved = np.where(stack.place_scope(g.top_only), moved, 0.0)
    return stack, unsure / cut_var, PLACE_WEIGHT * moved / place_var


def _best_candidates(
    g: _Group,
    rows: IntArray,
    margin: float | None,
    repeat_limit: int,
) -> tuple[FloatArray, IntArray, IntArray]:
    """Best pair of each query in ``rows``: value, pair index, and the open pair it serves most.

    ``sum_v weight_v / V_v (v^T C u)^2 = u^T C W C u`` with
    ``W = sum_v weight_v / V_v v v^T``, so every candidate's gain comes from
    one ``(n, n)`` matrix per query.
    """
    view = _pair_view(g, rows, margin)
    a, b = g.first, g.second
    cov = g.cov[rows]
    k = len(rows)
    n = cov.shape[1]
    c = (view.weight + CUT_WEIGHT * _cut_weights(g, rows, view)) / view.var
    contrasts = np.zeros((len(a), n))  # E: row v is e_a - e_b
    contrasts[np.arange(len(a)), a] = 1.0
    contrasts[np.arange(len(a)), b] = -1.0
    weighted = (contrasts.T[None, :, :] * c[:, None, :]) @ contrasts  # W = E^T diag(c) E
    if g.model is not None:
        stack, cut_w, place_w = _model_weights(g, rows, cov)
        weighted += np.einsum("qkn,qk,qkm->qnm", stack.cuts, cut_w, stack.cuts)
        weighted += np.einsum("qin,qi,qim->qnm", stack.place, place_w, stack.place)
    m = cov @ weighted @ cov
    gain = m[:, a, a] + m[:, b, b] - 2.0 * m[:, a, b]
    diag = np.diagonal(cov, axis1=1, axis2=2)
    var_u = diag[:, a] + diag[:, b] - 2.0 * cov[:, a, b]
    w = g.weight_w[rows]
    value = w / (1.0 + w * var_u) * gain
    value = np.where(g.asked[rows] >= repeat_limit, -np.inf, value)
    best = np.argmax(value, axis=1)
    picked = np.arange(k)
    cov_u = cov[picked, :, a[best]] - cov[picked, :, b[best]]  # (k, n): C u of the best pair
    contribution = c * (cov_u[:, a] - cov_u[:, b]) ** 2
    if g.model is not None:  # served: a pair, else cut P + k - 1, else placement P + n - 1 + i
        contribution = np.concatenate(
            [
                contribution,
                cut_w * np.einsum("qkn,qn->qk", stack.cuts, cov_u) ** 2,
                place_w * np.einsum("qin,qn->qi", stack.place, cov_u) ** 2,
            ],
            axis=1,
        )
    return value[picked, best], best.astype(np.int64), np.argmax(contribution, axis=1)


def _update(g: _Group, row: IntArray, pair: IntArray) -> None:
    """Rank-one update of the covariance of each ``row`` for one comparison of ``pair``."""
    a, b = g.first[pair], g.second[pair]
    cov = g.cov[row]
    cov_u = cov[np.arange(len(row)), :, a] - cov[np.arange(len(row)), :, b]  # (k, n)
    var_u = cov_u[np.arange(len(row)), a] - cov_u[np.arange(len(row)), b]
    w = g.weight_w[row, pair]
    scale = w / (1.0 + w * var_u)
    g.cov[row] = cov - scale[:, None, None] * cov_u[:, :, None] * cov_u[:, None, :]
    np.add.at(g.counts, (row, a), 1.0)
    np.add.at(g.counts, (row, b), 1.0)
    np.add.at(g.asked, (row, pair), 1)
    np.add.at(g.planned, row, 1)


def _chunks(g: _Group, rows: IntArray) -> list[IntArray]:
    per = max(1, CHUNK_ENTRIES // max(1, len(g.first) ** 2))
    return [rows[k : k + per] for k in range(0, len(rows), per)]


_BOUNDARY_WORD, _TIE_WORD, _ITEM_WORD = (k.value for k in _KINDS)
_STATE_WORDS = (PairState.undecided.value, PairState.separated.value, PairState.equivalent.value)


def _status(g: _Group, margin: float | None) -> list[QueryPlan]:
    """Status of every query of the group before anything is planned (vectorised over the
    group; the per-query loop only spells out the open decisions)."""
    n_queries = len(g.evidence)
    view = _pair_view(g, np.arange(n_queries), margin)
    g.kind = view.kind
    g.before = view
    a, b = g.first, g.second
    tallies = np.stack([(view.codes == code).sum(axis=1) for code in range(3)], axis=1)
    undecided = (view.codes == UNDECIDED) & g.scope
    ties = undecided & (view.kind == _TIE)
    boundary = undecided & (view.kind == _BOUNDARY)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.sqrt(view.absd**2 / view.var)
        log_keep = np.where(ties, np.log1p(-np.clip(view.p_sep, 0.0, 1.0 - 1e-16)), 0.0)
    split_risk = 1.0 - np.exp(log_keep.sum(axis=1))
    incidence = np.zeros((len(a), len(g.scores[0])))
    incidence[np.arange(len(a)), a] = 1.0
    incidence[np.arange(len(a)), b] = 1.0
    touched = (undecided.astype(np.float64) @ incidence) > 0
    poor_open = view.poor & touched
    tie_open = split_risk > SETTLE_RISK
    if margin is not None:
        tie_open |= ties.any(axis=1)
    settled = ~boundary.any(axis=1) & ~poor_open.any(axis=1) & ~tie_open
    expected = _expected_judgments(g, z, view, undecided, ties, margin)
    model = None
    if g.model is not None:
        model = _model_status(g)
        active = g.model.active
        settled = np.where(
            active, ~poor_open.any(axis=1) & (model.risk <= MODEL_SETTLE_RISK), settled
        )
        split_risk = np.where(active, model.risk, split_risk)
        expected = np.where(
            active, np.maximum(model.expected, np.where(poor_open.any(axis=1), 1.0, 0.0)), expected
        )
    g.open_query[:] = ~settled
    chance = view.p_sep + view.p_eq
    listed = np.argsort(-np.where(ties, chance, -1.0), axis=1, kind="stable")[:, :LISTED_TIES]
    lo_tier = np.minimum(g.tiers[:, a], g.tiers[:, b])
    hi_tier = np.maximum(g.tiers[:, a], g.tiers[:, b])
    plans = []
    for q, ev in enumerate(g.evidence):
        decisions: list[dict[str, Any]] = []
        n_boundaries = 0
        counts = None
        if model is not None and model.stack.active[q]:
            decisions, counts = model.decisions(q, ev, poor_open[q], bool(settled[q]))
        elif not settled[q]:
            names = ev.items
            crossing = undecided[q] & (view.kind[q] != _TIE)
            for t in range(1, int(g.tiers[q].max())):
                across = crossing & (lo_tier[q] <= t) & (hi_tier[q] > t)
                if across.any():
                    n_boundaries += 1
                    k = int(np.flatnonzero(across)[np.argmin((z[q] - g.critical[q])[across])])
                    decisions.append(
                        {
                            "kind": _BOUNDARY_WORD,
                            "tiers": [t, t + 1],
                            "weakest_pair": [str(names[a[k]]), str(names[b[k]])],
                            "z": float(z[q, k]),
                            "critical": float(g.critical[q, k]),
                        }
                    )
            for i in np.flatnonzero(poor_open[q]).tolist():
                decisions.append(
                    {
                        "kind": _ITEM_WORD,
                        "item": str(names[i]),
                        "comparisons": int(ev.item_comparisons[i]),
                        "se": float(np.sqrt(max(ev.cov[i, i], 0.0))),
                    }
                )
            if tie_open[q]:
                for k in listed[q][ties[q, listed[q]]].tolist():
                    decisions.append(
                        {
                            "kind": _TIE_WORD,
                            "pair": [str(names[a[k]]), str(names[b[k]])],
                            "z": float(z[q, k]),
                            "chance_decided_if_doubled": float(chance[q, k]),
                        }
                    )
        plans.append(
            QueryPlan(
                query=ev.query,
                status=_SETTLED if settled[q] else _OPEN,
                open_decisions=decisions,
                open_counts=counts
                or {
                    _BOUNDARY_WORD: n_boundaries,
                    _TIE_WORD: int(ties[q].sum()) if tie_open[q] else 0,
                    _ITEM_WORD: int(poor_open[q].sum()),
                },
                split_risk=float(split_risk[q]),
                expected_judgments=None if settled[q] else _judgments(ev, expected[q]),
                pair_states={_STATE_WORDS[c]: int(tallies[q, c]) for c in range(3)},
            )
        )
    return plans


_SETTLED, _OPEN = QueryStatus.settled.value, QueryStatus.open.value


@dataclass
class _ModelStatus:
    """The ``model`` cuts and placements of a group before the plan."""

    stack: ModelStack
    kept: FloatArray  # (Q, n - 1) chance each cut is kept once the judgments double
    moved: FloatArray  # (Q, n) chance each item moves across to its neighbour group
    change: FloatArray  # (Q, n - 1) chance each cut's decision changes
    risk: FloatArray  # (Q,) chance that some cut changes or some item moves
    expected: FloatArray  # (Q,) information multiple that settles the query (plug-in)
    variance: FloatArray  # (Q, n - 1) variance of each cut's contrast

    def decisions(
        self, q: int, ev: QueryEvidence, poor: npt.NDArray[np.bool_], settled: bool
    ) -> tuple[list[dict[str, Any]], dict[str, int]]:
        """Query ``q``'s open cuts (kept: ``boundary``, rejected: ``tie``) and items."""
        st = self.stack
        names = ev.items
        order = st.order[q]
        boundaries: list[dict[str, Any]] = []
        ties: list[tuple[float, dict[str, Any]]] = []
        items: list[dict[str, Any]] = []
        if settled:
            return [], {_BOUNDARY_WORD: 0, _TIE_WORD: 0, _ITEM_WORD: 0}
        z = st.effect[q] / np.sqrt(np.maximum(self.variance[q], 1e-300))
        for j in np.flatnonzero(st.valid[q] & (self.change[q] >= OPEN_CHANCE)).tolist():
            pair = [str(names[order[j]]), str(names[order[j + 1]])]
            entry = {
                "z": float(z[j]),
                "threshold": float(st.threshold_now[q]),
                "threshold_if_doubled": float(st.threshold[q]),
            }
            chance = float(self.change[q, j])
            if st.kept[q, j]:
                tier = int(st.labels[q, order[j]]) + 1
                boundaries.append(
                    {"kind": _BOUNDARY_WORD, "tiers": [tier, tier + 1], "weakest_pair": pair,
                     **entry, "chance_changed_if_doubled": chance}
                )  # fmt: skip
            else:
                ties.append(
                    (chance, {"kind": _TIE_WORD, "pair": pair, **entry,
                              "chance_decided_if_doubled": chance})
                )  # fmt: skip
        ties.sort(key=lambda t: -t[0])
        moving = st.place_valid[q] & (self.moved[q] >= OPEN_CHANCE)
        for i in np.flatnonzero(poor | moving).tolist():
            item: dict[str, Any] = {
                "kind": _ITEM_WORD,
                "item": str(names[i]),
                "comparisons": int(ev.item_comparisons[i]),
                "se": float(np.sqrt(max(ev.cov[i, i], 0.0))),
            }
            if moving[i]:
                item["chance_moved_if_doubled"] = float(self.moved[q, i])
            items.append(item)
        counts = {
            _BOUNDARY_WORD: len(boundaries),
            _TIE_WORD: len(ties),
            _ITEM_WORD: len(items),
        }
        return boundaries + items + [t for _, t in ties[:LISTED_TIES]], counts


def _model_status(g: _Group) -> _ModelStatus:
    """Chances that doubling the judgments changes a ``model`` query's tiers (plug-in), and the
    information multiple after which that chance falls to :data:`MODEL_SETTLE_RISK`."""
    assert g.model is not None
    st = g.model
    kept, variance = cut_chances(st, g.cov)
    moved, _ = placement_chances(st, g.cov)
    change = np.where(st.valid, np.where(st.kept, 1.0 - kept, kept), 0.0)
    log_keep = np.log1p(-np.clip(change, 0.0, 1.0 - 1e-16)).sum(axis=1)
    log_keep += np.log1p(-np.clip(moved, 0.0, 1.0 - 1e-16)).sum(axis=1)
    risk = 1.0 - np.exp(log_keep)
    # at information h the plug-in decision of a cut is its most likely one: it may change
    # with chance min(p, 1 - p); h is the first multiple at which the query would be settled
    needed = np.full(len(risk), np.inf)
    place_var = place_variances(st, g.cov)
    for h in _FACTORS[::-1]:  # h times the information: every variance over h
        p = kept_chance(st, variance / h)
        m = moved_chance(st, place_var / h)
        # the placement contrast's value is today's: its z grows like sqrt(h)
        at = 1.0 - np.exp(
            np.log1p(-np.clip(np.minimum(p, 1.0 - p), 0.0, 1.0 - 1e-16)).sum(axis=1)
            + np.log1p(-np.clip(m, 0.0, 1.0 - 1e-16)).sum(axis=1)
        )
        needed = np.where(at <= MODEL_SETTLE_RISK, h, needed)
    expected = np.where(risk <= MODEL_SETTLE_RISK, 0.0, needed)
    g.model_before = (np.minimum(kept, 1.0 - kept), moved)
    return _ModelStatus(st, kept, moved, change, risk, expected, variance)


def _expected_judgments(
    g: _Group,
    z: FloatArray,
    view: _PairView,
    undecided: npt.NDArray[np.bool_],
    ties: npt.NDArray[np.bool_],
    margin: float | None,
) -> FloatArray:
    """Per query, the information multiple every open decision needs (``0``: none open)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(z > 0, (g.critical / z) ** 2, np.inf)
        if margin is not None:
            room = margin - view.absd
            eq = np.where(room > 0, (g.single[:, None] * np.sqrt(view.var) / room) ** 2, np.inf)
            factor = np.minimum(factor, eq)
    # ties only count when more judgments can plausibly decide them
    counted = undecided & (~ties | (view.p_sep + view.p_eq >= 0.05))
    return np.where(counted, factor, 0.0).max(axis=1, initial=0.0)


def _judgments(ev: QueryEvidence, needed: float) -> int | None:
    """Judgments to add (spread as today's) to reach ``needed`` times today's information."""
    if not np.isfinite(needed) or needed > MAX_FACTOR:
        return None
    return int(np.ceil(ev.judgments * max(needed - 1.0, 0.0)))


def check_plan_options(budget: int, max_per_query: int | None, repeat_limit: int) -> None:
    """Raise :class:`ConfigError` for a negative budget, or a cap or repeat limit below 1
    (``orlbuild plan`` and the pipeline's ``[plan]`` table check with this)."""
    if budget < 0:
        raise ConfigError(f"--budget must be >= 0, got {budget}")
    if max_per_query is not None and max_per_query < 1:
        raise ConfigError(f"--max-per-query must be >= 1, got {max_per_query}")
    if repeat_limit < 1:
        raise ConfigError(f"--repeat-limit must be >= 1, got {repeat_limit}")


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
                ev.query, QueryStatus.settled.value, [], {k.value: 0 for k in _KINDS}, 0.0, None
            )
        else:
            by_size.setdefault(len(ev.items), []).append(ev)
    groups = [_stack(evs, goal) for _, evs in sorted(by_size.items())]
    for g in groups:
        for qp in _status(g, margin):
            plan.queries[qp.query] = qp
    cap = budget if max_per_query is None else max_per_query
    remaining = budget
    picks: list[tuple[int, int, int, int, float]] = []  # group, row, pair, served, value
    while remaining > 0:
        found = []  # columns: value, jitter, group, row, pair, served
        for gi, g in enumerate(groups):
            rows = np.flatnonzero(g.open_query & (g.planned < cap))
            for block in _chunks(g, rows):
                gains, best, serving = _best_candidates(g, block, margin, repeat_limit)
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
                _update(g, mine[:, 3].astype(np.int64), mine[:, 4].astype(np.int64))
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


def _expected_decisions(g: _Group, margin: float | None, plan: Plan) -> None:
    """Per query, the open pairs the planned comparisons are expected to decide."""
    assert g.before is not None
    rows = np.flatnonzero(g.planned > 0)
    if not len(rows):
        return
    after = _pair_view(g, rows, margin)
    before = g.before
    open_pair = (before.codes[rows] == UNDECIDED) & g.scope[rows]
    horizon = before.var[rows] / np.maximum(after.var, 1e-300)
    p_sep, p_eq = _resolve_chance(
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


def _model_decided(g: _Group, rows: IntArray) -> FloatArray:
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


def _serves(g: _Group, row: int, served: int) -> str:
    """Kind of the open decision ``served`` of query ``row`` was (before the plan): a pair's,
    or for a ``model`` query a cut's (kept: ``boundary``, rejected: ``tie``) or an item's."""
    assert g.kind is not None
    pairs = len(g.first)
    if served < pairs:
        return _KINDS[int(g.kind[row, served])].value
    assert g.model is not None
    cut = served - pairs
    if cut < len(g.model.kept[row]):
        return _BOUNDARY_WORD if g.model.kept[row, cut] else _TIE_WORD
    return _ITEM_WORD


def _decision_text(g: _Group, row: int, served: int) -> str:
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


def pair_state_counts(
    evidence: list[QueryEvidence], margin: float | None = None
) -> dict[str, dict[str, int]]:
    """Query -> how many of its pairs are separated, equivalent (within ``margin``), undecided.

    Separated with the build's critical value of each pair, equivalent by the
    simultaneous interval (:mod:`orlbuild.builders.tiering.equivalence`).
    """
    counts = {}
    for ev in evidence:
        first, second = np.triu_indices(len(ev.items), 1)
        diag = np.diag(ev.cov)
        var = np.maximum(diag[first] + diag[second] - 2.0 * ev.cov[first, second], 0.0)
        codes = pair_state_codes(
            ev.scores[first] - ev.scores[second],
            np.sqrt(var),
            ev.critical[first, second],
            ev.single,
            margin,
        )
        tally = np.bincount(codes, minlength=3)
        counts[ev.query] = {
            PairState.separated.value: int(tally[SEPARATED]),
            PairState.equivalent.value: int(tally[EQUIVALENT]),
            PairState.undecided.value: int(tally[UNDECIDED]),
        }
    return counts
