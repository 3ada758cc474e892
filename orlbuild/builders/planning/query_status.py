"""Each query's status before a plan: its open decisions, whether it is settled, and the
judgments expected to settle it (docs/planning.md, "Planning the next judgments").

**Open decisions** (pairs ``a, b`` of a query):

* ``boundary`` - ``a`` and ``b`` sit in different tiers but the pair is not
  separated: the ORL states an order no test backs;
* ``tie`` - same tier, neither separated nor (with a margin) shown equivalent;
* ``item`` - a pair of an item too poorly measured to place (compared fewer
  than :data:`~orlbuild.builders.planning.pair_values.MIN_ITEM_COMPARISONS` times, or a
  standard error more than :data:`~orlbuild.builders.planning.pair_values.POOR_SE_RATIO`
  times the query's median), still undecided.

**Settled.** A query is settled when every boundary is backed (every pair
across it separated), no poorly measured item has an undecided pair, and the
chance that some tie of a tier is split when the judgments double,
``1 - prod(1 - Phi(sqrt(2) z - c) - ...)`` over undecided same-tier pairs, is at
most :data:`SETTLE_RISK`. Ties shown equivalent never count. A query of a build tiered by
``model`` is settled on its cuts instead (:class:`ModelStatus`,
:data:`~orlbuild.builders.planning.model_cuts.MODEL_SETTLE_RISK`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.planning.model_cuts import (
    MODEL_SETTLE_RISK,
    OPEN_CHANCE,
    ModelStack,
    cut_chances,
    kept_chance,
    moved_chance,
    place_variances,
    placement_chances,
)
from orlbuild.builders.planning.pair_values import (
    BOUNDARY,
    KINDS,
    TIE,
    PairView,
    QueryGroup,
    pair_view,
)
from orlbuild.builders.planning.plan_records import QueryEvidence, QueryPlan
from orlbuild.builders.tiering.equivalence import EQUIVALENT, SEPARATED, UNDECIDED, pair_state_codes
from orlbuild.vocabulary import PairState, QueryStatus

__all__ = [
    "LISTED_TIES",
    "MAX_FACTOR",
    "SETTLE_RISK",
    "ModelStatus",
    "expected_judgments",
    "group_status",
    "judgments_to_add",
    "model_status",
    "pair_state_counts",
]

#: A query is settled when the chance that doubling its judgments splits a tie is at most this.
SETTLE_RISK = 0.5
#: Open ties listed per query (the most likely to be decided first).
LISTED_TIES = 10
#: A query needing more than this multiple of its judgments gets no estimate.
MAX_FACTOR = 100.0
#: Information multiples the ``model`` query's expected judgments are searched over.
FACTORS = np.geomspace(1.0, MAX_FACTOR, 49)

_BOUNDARY_WORD, _TIE_WORD, _ITEM_WORD = (k.value for k in KINDS)
_STATE_WORDS = (PairState.undecided.value, PairState.separated.value, PairState.equivalent.value)
_SETTLED, _OPEN = QueryStatus.settled.value, QueryStatus.open.value


@dataclass
class _GroupState:
    """Every query's pair decisions and status in a group, before the plan."""

    view: PairView
    z: FloatArray  # (Q, P) |d| / se
    undecided: npt.NDArray[np.bool_]  # (Q, P) in scope and neither separated nor equivalent
    ties: npt.NDArray[np.bool_]  # (Q, P) undecided pairs of one tier
    poor_open: npt.NDArray[np.bool_]  # (Q, n) poorly measured items with an undecided pair
    tie_open: npt.NDArray[np.bool_]  # (Q,) a tie may still be split or shown equivalent
    settled: npt.NDArray[np.bool_]  # (Q,)
    split_risk: FloatArray  # (Q,)
    expected: FloatArray  # (Q,) information multiple every open decision needs
    tallies: IntArray  # (Q, 3) undecided, separated, equivalent pairs


def _group_state(g: QueryGroup, margin: float | None) -> _GroupState:
    """The max-t decisions of every query of ``g`` at once (the default's status)."""
    view = pair_view(g, np.arange(len(g.evidence)), margin)
    a, b = g.first, g.second
    tallies = np.stack([(view.codes == code).sum(axis=1) for code in range(3)], axis=1)
    undecided = (view.codes == UNDECIDED) & g.scope
    ties = undecided & (view.kind == TIE)
    boundary = undecided & (view.kind == BOUNDARY)
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
    expected = expected_judgments(g, z, view, undecided, ties, margin)
    return _GroupState(
        view, z, undecided, ties, poor_open, tie_open, settled, split_risk, expected, tallies
    )


def _max_t_decisions(
    g: QueryGroup, st: _GroupState, q: int
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Query ``q``'s open decisions spelt out: each unbacked boundary with its weakest crossing
    pair, each poorly measured item, and the ties most likely to be decided."""
    ev = g.evidence[q]
    if st.settled[q]:
        return [], {_BOUNDARY_WORD: 0, _TIE_WORD: 0, _ITEM_WORD: int(st.poor_open[q].sum())}
    a, b, names = g.first, g.second, ev.items
    lo_tier = np.minimum(g.tiers[q, a], g.tiers[q, b])
    hi_tier = np.maximum(g.tiers[q, a], g.tiers[q, b])
    crossing = st.undecided[q] & (st.view.kind[q] != TIE)
    decisions: list[dict[str, Any]] = []
    for t in range(1, int(g.tiers[q].max())):
        across = crossing & (lo_tier <= t) & (hi_tier > t)
        if across.any():
            k = int(np.flatnonzero(across)[np.argmin((st.z[q] - g.critical[q])[across])])
            decisions.append(
                {
                    "kind": _BOUNDARY_WORD,
                    "tiers": [t, t + 1],
                    "weakest_pair": [str(names[a[k]]), str(names[b[k]])],
                    "z": float(st.z[q, k]),
                    "critical": float(g.critical[q, k]),
                }
            )
    n_boundaries = len(decisions)
    for i in np.flatnonzero(st.poor_open[q]).tolist():
        decisions.append(
            {
                "kind": _ITEM_WORD,
                "item": str(names[i]),
                "comparisons": int(ev.item_comparisons[i]),
                "se": float(np.sqrt(max(ev.cov[i, i], 0.0))),
            }
        )
    if st.tie_open[q]:
        chance = st.view.p_sep[q] + st.view.p_eq[q]
        listed = np.argsort(-np.where(st.ties[q], chance, -1.0), kind="stable")[:LISTED_TIES]
        for k in listed[st.ties[q, listed]].tolist():
            decisions.append(
                {
                    "kind": _TIE_WORD,
                    "pair": [str(names[a[k]]), str(names[b[k]])],
                    "z": float(st.z[q, k]),
                    "chance_decided_if_doubled": float(chance[k]),
                }
            )
    counts = {
        _BOUNDARY_WORD: n_boundaries,
        _TIE_WORD: int(st.ties[q].sum()) if st.tie_open[q] else 0,
        _ITEM_WORD: int(st.poor_open[q].sum()),
    }
    return decisions, counts


def group_status(g: QueryGroup, margin: float | None) -> list[QueryPlan]:
    """Status of every query of the group before anything is planned (vectorised over the
    group; the per-query loop only spells out the open decisions). Records the pairs' state
    before the plan on ``g`` (``kind``, ``before``) and marks its open queries."""
    st = _group_state(g, margin)
    g.kind = st.view.kind
    g.before = st.view
    settled, split_risk, expected = st.settled, st.split_risk, st.expected
    model = None
    if g.model is not None:
        model = model_status(g)
        active = g.model.active
        any_poor = st.poor_open.any(axis=1)
        settled = np.where(active, ~any_poor & (model.risk <= MODEL_SETTLE_RISK), settled)
        split_risk = np.where(active, model.risk, split_risk)
        expected = np.where(active, np.maximum(model.expected, any_poor * 1.0), expected)
    g.open_query[:] = ~settled
    plans = []
    for q, ev in enumerate(g.evidence):
        if model is not None and model.stack.active[q]:
            decisions, counts = model.decisions(q, ev, st.poor_open[q], bool(settled[q]))
        else:
            decisions, counts = _max_t_decisions(g, st, q)
        plans.append(
            QueryPlan(
                query=ev.query,
                status=_SETTLED if settled[q] else _OPEN,
                open_decisions=decisions,
                open_counts=counts,
                split_risk=float(split_risk[q]),
                expected_judgments=None if settled[q] else judgments_to_add(ev, expected[q]),
                pair_states={_STATE_WORDS[c]: int(st.tallies[q, c]) for c in range(3)},
            )
        )
    return plans


@dataclass
class ModelStatus:
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


def model_status(g: QueryGroup) -> ModelStatus:
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
    for h in FACTORS[::-1]:  # h times the information: every variance over h
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
    return ModelStatus(st, kept, moved, change, risk, expected, variance)


def expected_judgments(
    g: QueryGroup,
    z: FloatArray,
    view: PairView,
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


def judgments_to_add(ev: QueryEvidence, needed: float) -> int | None:
    """Judgments to add (spread as today's) to reach ``needed`` times today's information."""
    if not np.isfinite(needed) or needed > MAX_FACTOR:
        return None
    return int(np.ceil(ev.judgments * max(needed - 1.0, 0.0)))


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
