"""The planner's value of one more comparison, over stacked queries (docs/planning.md,
"Planning the next judgments").

**Chance of a decision.** For an undecided pair with ``z = |d| / se``, the
chance that it is decided once its information doubles, by the preposterior
plug-in (the estimate after more data is ``N(d, V / 2)`` around today's, the
future standard error ``sqrt(V / 2)``): separated with
``Phi(sqrt(2) z - c) + Phi(-sqrt(2) z - c)``, shown equivalent with the
analogous interval probability when a margin is given (:func:`resolve_chance`).

**Boundaries.** A boundary can only sit where every pair across a cut of the
score order is separated, so a pair also weighs by the plausible cuts it
blocks (:func:`cut_weights`): :data:`CUT_WEIGHT` times the change in the
expected number of backed cuts per relative fall in its variance.

**Value of a comparison.** Comparing ``i`` and ``j`` adds
``w = p (1 - p)`` (``p`` the fitted chance that ``i`` wins) times
``u u^T`` (``u = e_i - e_j``) to the Fisher information, so the covariance
gets the rank-one update ``C - w C u u^T C / (1 + w u^T C u)``
(:func:`add_comparisons`) and the variance of every pair difference ``v`` falls by
``w (v^T C u)^2 / (1 + w u^T C u)``. The value of ``(i, j)`` is the sum over
open pairs of weight times relative variance reduction; the weight is the
pair's chance of a decision (at least :data:`FLOOR_WEIGHT` for boundaries and
poorly measured items, which the ORL must not leave as they are) plus its
boundary weight (:func:`best_candidates`). Queries with the same number of items are
stacked (:class:`QueryGroup`), so every step is a few array operations over them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import expit, ndtr

from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.planning.model_cuts import (
    ModelStack,
    cut_chances,
    placement_chances,
    stack_model_cuts,
)
from orlbuild.builders.planning.plan_records import QueryEvidence
from orlbuild.builders.tiering.equivalence import UNDECIDED, pair_state_codes
from orlbuild.vocabulary import OpenDecision, PlanObjective

__all__ = [
    "BOUNDARY",
    "CUT_WEIGHT",
    "FLOOR_WEIGHT",
    "HORIZON",
    "ITEM",
    "KINDS",
    "MIN_ITEM_COMPARISONS",
    "POOR_SE_RATIO",
    "TIE",
    "PairView",
    "QueryGroup",
    "add_comparisons",
    "best_candidates",
    "chunks",
    "cut_weights",
    "model_weights",
    "pair_view",
    "resolve_chance",
    "stack_group",
]

#: An item compared fewer times than this is too poorly measured to place.
MIN_ITEM_COMPARISONS = 3
#: ... as is an item whose score's standard error exceeds this multiple of the query's median.
POOR_SE_RATIO = 2.0
#: Least weight of a boundary pair or a poorly measured item's pair.
FLOOR_WEIGHT = 0.5
#: Information multiple the chance of a decision looks ahead to (2: the judgments double).
HORIZON = 2.0
#: (chosen on seeded simulations, docs/planning.md "What planning buys").
CUT_WEIGHT = 2.0
#: Variance multiple of the finite difference behind a pair's sensitivity.
CUT_STEP = 0.8
#: Weight of an item's chance to move across a ``model`` boundary against a cut's uncertainty.
PLACE_WEIGHT = 4.0
#: Information multiple the ``model`` weights look ahead to.
MODEL_HORIZON = 2.0
#: Queries stacked per array operation (bounds memory: ``chunk * P^2`` floats).
CHUNK_ENTRIES = 4_000_000

#: The kinds of open decision, in the order of their codes :data:`BOUNDARY`, :data:`TIE`,
#: :data:`ITEM`.
KINDS = (OpenDecision.boundary, OpenDecision.tie, OpenDecision.item)
BOUNDARY, TIE, ITEM = 0, 1, 2


def resolve_chance(
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
class QueryGroup:
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
    before: PairView | None = None  # every pair before the plan
    top_only: bool = False  # objective top: cuts count by how much they shrink the top tier
    model: ModelStack | None = None  # the model tiering's cuts and placements
    model_before: tuple[FloatArray, FloatArray] | None = None  # their chances of changing


def stack_group(evidence: list[QueryEvidence], objective: PlanObjective) -> QueryGroup:
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
    return QueryGroup(
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
class PairView:
    """Every pair's evidence in a block of stacked queries."""

    absd: FloatArray
    var: FloatArray
    codes: npt.NDArray[np.int8]
    kind: npt.NDArray[np.int8]
    p_sep: FloatArray
    p_eq: FloatArray
    weight: FloatArray  # planning weight of each open pair (0 when not open)
    poor: npt.NDArray[np.bool_]  # (Q, n)


def pair_view(g: QueryGroup, rows: slice | IntArray, margin: float | None) -> PairView:
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
    kind = np.where(poor[:, a] | poor[:, b], ITEM, np.where(cross, BOUNDARY, TIE))
    p_sep, p_eq = resolve_chance(absd, var, critical, single, margin)
    chance = np.clip(p_sep + p_eq, 0.0, 1.0)
    open_pair = (codes == UNDECIDED) & g.scope[rows]
    weight = np.where(kind == TIE, chance, np.maximum(chance, FLOOR_WEIGHT))
    if g.model is not None:
        # a model query's decisions are its cuts; at the pair level only its poorly measured
        # items count, each item's pairs together as much as one boundary pair
        share = np.where(kind == ITEM, weight / max(1, tiers.shape[1] - 1), 0.0)
        weight = np.where(g.model.active[rows][:, None], share, weight)
    return PairView(
        absd=absd,
        var=var,
        codes=codes,
        kind=kind.astype(np.int8),
        p_sep=p_sep,
        p_eq=p_eq,
        weight=np.where(open_pair, weight, 0.0),
        poor=poor,
    )


def cut_weights(g: QueryGroup, rows: IntArray, view: PairView) -> FloatArray:
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
    p_now, _ = resolve_chance(view.absd, view.var, critical, single, None)
    p_less, _ = resolve_chance(view.absd, view.var * CUT_STEP, critical, single, None)
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


def model_weights(
    g: QueryGroup, rows: IntArray, cov: FloatArray
) -> tuple[ModelStack, FloatArray, FloatArray]:
    """Planning weights (per unit of relative variance) of the model cuts and placements."""
    assert g.model is not None
    stack = g.model.take(rows)
    kept, cut_var = cut_chances(stack, cov, MODEL_HORIZON)
    unsure = np.minimum(kept, 1.0 - kept) * stack.cut_value(g.tiers[rows], g.top_only)
    moved, place_var = placement_chances(stack, cov, MODEL_HORIZON)
    moved = np.where(stack.place_scope(g.top_only), moved, 0.0)
    return stack, unsure / cut_var, PLACE_WEIGHT * moved / place_var


def best_candidates(
    g: QueryGroup,
    rows: IntArray,
    margin: float | None,
    repeat_limit: int,
) -> tuple[FloatArray, IntArray, IntArray]:
    """Best pair of each query in ``rows``: value, pair index, and the open pair it serves most.

    ``sum_v weight_v / V_v (v^T C u)^2 = u^T C W C u`` with
    ``W = sum_v weight_v / V_v v v^T``, so every candidate's gain comes from
    one ``(n, n)`` matrix per query.
    """
    view = pair_view(g, rows, margin)
    a, b = g.first, g.second
    cov = g.cov[rows]
    k = len(rows)
    n = cov.shape[1]
    c = (view.weight + CUT_WEIGHT * cut_weights(g, rows, view)) / view.var
    contrasts = np.zeros((len(a), n))  # E: row v is e_a - e_b
    contrasts[np.arange(len(a)), a] = 1.0
    contrasts[np.arange(len(a)), b] = -1.0
    weighted = (contrasts.T[None, :, :] * c[:, None, :]) @ contrasts  # W = E^T diag(c) E
    if g.model is not None:
        stack, cut_w, place_w = model_weights(g, rows, cov)
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


def add_comparisons(g: QueryGroup, row: IntArray, pair: IntArray) -> None:
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


def chunks(g: QueryGroup, rows: IntArray) -> list[IntArray]:
    per = max(1, CHUNK_ENTRIES // max(1, len(g.first) ** 2))
    return [rows[k : k + per] for k in range(0, len(rows), per)]
