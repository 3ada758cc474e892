"""The open decisions of the ``model`` tiering, for the planner (docs/planning.md, "Planning for
`--tiering model`").

The ``model`` tiering partitions the score-sorted items into contiguous groups
by BIC (docs/tiers-and-audit.md, "How tiers are decided and audited"). Its
decisions are the ``n - 1`` **cuts** of the score order: a boundary is kept
before sorted position ``k`` when twice the log-likelihood gain of having it,
``T_k = 2 gain_k`` (recorded in the audit), exceeds the penalty of one more
group ``pen``; a rejected cut is a tie. Nothing in it is "undecided": every
cut is decided, and the open question is whether the decision would change
with more judgments. So for ``model`` the planner targets the cuts and items
whose *placement* is uncertain, not the max-t tests of the default tiering.

**A cut as a contrast.** Cut ``k`` compares two blocks of items: the two
groups either side of a kept boundary, or the two halves of a group split at
``k``. Its contrast ``v_k`` is the precision-weighted mean score of the upper
block minus that of the lower (weights ``1 / C_ii``, the grouped fit's
weighting to first order), with variance ``V_k = v_k^T C v_k``. Its
studentized size is taken from the recorded statistic, ``z_k = sqrt(T_k)``,
so the effect ``d_k = z_k sqrt(V_k)`` is the one the model saw.

**Chance of a change.** With the preposterior plug-in of
:mod:`orlbuild.builders.planning.planner` (the estimate after the information grows
twofold is ``N(d, V / 2)`` around today's) the chance that the cut is kept
after doubling is ``p_k = Phi(sqrt(2) z_k - t') + Phi(-sqrt(2) z_k - t')``
with ``t' = sqrt(pen')``, ``pen'`` the penalty at twice the judgments
(``max(log 2N, q_n)``). A kept boundary changes with chance ``1 - p_k``, a
rejected cut with chance ``p_k``; the planner weighs a cut by
``min(p_k, 1 - p_k)``, largest at the threshold and falling as more data are
projected onto it.

**Placement.** An item sits in a group next to a neighbouring group (the
nearer one by score); it belongs with the other one if its score is past the
midpoint of the two groups' means. Its contrast is ``e_i - (m_g + m_h) / 2``
with ``c_i`` today's value, and the chance that doubling moves it across is
``Phi(-|c_i| / sqrt(Var(c_i) / 2))`` (``1/2`` of the preposterior spread).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import ndtr

from orlbuild.builders.arrays import FloatArray, IntArray

__all__ = [
    "MODEL_SETTLE_RISK",
    "OPEN_CHANCE",
    "ModelCuts",
    "ModelStack",
    "cut_chances",
    "cut_variances",
    "kept_chance",
    "moved_chance",
    "place_variances",
    "placement_chances",
    "stack_model_cuts",
]

#: A ``model`` query is settled when the chance that doubling its judgments changes a cut or
#: moves an item across a boundary (plug-in) is at most this (docs/planning.md, "Settled").
MODEL_SETTLE_RISK = 0.2
#: A cut or placement whose chance of changing is below this is not listed as open.
OPEN_CHANCE = 0.05


@dataclass(frozen=True)
class ModelCuts:
    """The ``model`` tiering's decisions of one query, read from its audit.

    Attributes
    ----------
    order
        Item indices best first (the score order the partition cuts).
    gain2
        ``(n - 1,)``: twice the log-likelihood gain of a boundary before sorted
        position ``k`` (``k = 1 .. n - 1``), ``nan`` for an exact score tie
        (never cut).
    kept
        ``(n - 1,)``: whether that boundary is in the partition.
    penalty
        Penalty of one more group today.
    future_penalty
        The penalty once the judgments double.
    """

    order: IntArray
    gain2: FloatArray
    kept: npt.NDArray[np.bool_]
    penalty: float
    future_penalty: float


@dataclass
class ModelStack:
    """Cut and placement contrasts of queries with the same number of items, stacked.

    ``active`` marks the queries tiered by ``model``; every array is zero elsewhere.
    """

    active: npt.NDArray[np.bool_]  # (Q,)
    cuts: FloatArray  # (Q, n - 1, n) contrast of each cut
    effect: FloatArray  # (Q, n - 1) |d_k|
    kept: npt.NDArray[np.bool_]  # (Q, n - 1)
    valid: npt.NDArray[np.bool_]  # (Q, n - 1) a cut the model can toggle
    threshold: FloatArray  # (Q,) sqrt of the future penalty
    threshold_now: FloatArray  # (Q,) sqrt of today's penalty
    place: FloatArray  # (Q, n, n) placement contrast of each item
    place_value: FloatArray  # (Q, n) today's value of the placement contrast
    place_valid: npt.NDArray[np.bool_]  # (Q, n) an item next to another group
    labels: IntArray  # (Q, n) group (0 = best) of each item
    position: IntArray  # (Q, n) sorted position of each item
    order: IntArray  # (Q, n) item at each sorted position

    def take(self, rows: slice | IntArray) -> ModelStack:
        """The queries ``rows`` only."""
        return ModelStack(**{name: getattr(self, name)[rows] for name in self.__dataclass_fields__})

    def cut_value(self, tiers: IntArray, top_only: bool) -> FloatArray:
        """How much each cut counts: 1 (objective ``tiers``), or with objective ``top`` the
        share of the top tier a rejected cut inside it would remove, 1 for the kept boundary
        below the top tier and 0 below it."""
        if not top_only:
            return self.valid.astype(np.float64)
        top = (tiers == 1).sum(axis=1, keepdims=True).astype(np.float64)
        ks = np.arange(1, self.valid.shape[1] + 1)[None, :]
        inside = np.clip(top - ks, 0.0, None) / np.maximum(top, 1.0)
        return np.where(self.valid, np.where(ks == top, 1.0, inside), 0.0)

    def place_scope(self, top_only: bool) -> npt.NDArray[np.bool_]:
        """Items whose placement counts (objective ``top``: items of the first two groups)."""
        return self.place_valid & (self.labels <= 1) if top_only else self.place_valid


def stack_model_cuts(
    cuts: list[ModelCuts | None], cov: FloatArray, scores: FloatArray
) -> ModelStack:
    """Contrasts of every cut and placement of the queries (``None``: not a ``model`` query).

    Parameters
    ----------
    cuts
        Per query its :class:`ModelCuts`, or ``None``.
    cov
        ``(Q, n, n)`` covariance of the scores.
    scores
        ``(Q, n)`` scores.
    """
    q, n = scores.shape
    active = np.array([c is not None for c in cuts], dtype=bool)
    order = np.stack([c.order if c is not None else np.argsort(-s, kind="stable")
                      for c, s in zip(cuts, scores, strict=True)]).astype(np.int64)  # fmt: skip
    kept = np.stack(
        [c.kept if c is not None else np.zeros(n - 1, dtype=bool) for c in cuts]
    ).astype(bool)
    gain2 = np.stack([c.gain2 if c is not None else np.full(n - 1, np.nan) for c in cuts])
    threshold = np.array([np.sqrt(c.future_penalty) if c is not None else np.inf for c in cuts])
    threshold_now = np.array([np.sqrt(c.penalty) if c is not None else np.inf for c in cuts])
    position = np.empty_like(order)
    np.put_along_axis(position, order, np.arange(n)[None, :], axis=1)
    # group of each sorted position, and of each item
    label_pos = np.concatenate([np.zeros((q, 1), dtype=np.int64), np.cumsum(kept, axis=1)], axis=1)
    labels = np.take_along_axis(label_pos, position, axis=1)
    diag = np.clip(np.diagonal(cov, axis1=1, axis2=2), 1e-12, None)
    precision = np.take_along_axis(1.0 / diag, order, axis=1)  # by sorted position
    ks = np.arange(1, n)
    pos = np.arange(n)
    above_label = label_pos[:, ks - 1]  # (Q, n - 1)
    below_label = label_pos[:, ks]
    same = label_pos[:, None, :]
    # kept cut: the two groups either side; rejected cut: the group split at k
    upper = np.where(
        kept[:, :, None],
        same == above_label[:, :, None],
        (same == below_label[:, :, None]) & (pos[None, None, :] < ks[None, :, None]),
    )
    lower = (same == below_label[:, :, None]) & (pos[None, None, :] >= ks[None, :, None])
    contrast_pos = _block_means(upper, precision) - _block_means(lower, precision)
    contrast = np.take_along_axis(contrast_pos, position[:, None, :], axis=2)
    variance = np.einsum("qkn,qnm,qkm->qk", contrast, cov, contrast)
    valid = active[:, None] & np.isfinite(gain2)
    z = np.sqrt(np.clip(np.nan_to_num(gain2), 0.0, None))
    effect = np.where(valid, z * np.sqrt(np.clip(variance, 0.0, None)), 0.0)
    place, place_value, place_valid = _placements(labels, scores, precision, label_pos, position)
    place_valid &= active[:, None]
    return ModelStack(
        active=active,
        cuts=np.where(valid[:, :, None], contrast, 0.0),
        effect=effect,
        kept=kept,
        valid=valid,
        threshold=threshold,
        threshold_now=threshold_now,
        place=np.where(place_valid[:, :, None], place, 0.0),
        place_value=place_value,
        place_valid=place_valid,
        labels=labels,
        position=position,
        order=order,
    )


def _block_means(mask: npt.NDArray[np.bool_], precision: FloatArray) -> FloatArray:
    """Precision-weighted mean over the positions of each block: ``(Q, K, n)`` weights."""
    weights = mask * precision[:, None, :]
    total = weights.sum(axis=2, keepdims=True)
    return np.where(total > 0, weights / np.where(total > 0, total, 1.0), 0.0)


def _placements(
    labels: IntArray,
    scores: FloatArray,
    precision: FloatArray,
    label_pos: IntArray,
    position: IntArray,
) -> tuple[FloatArray, FloatArray, npt.NDArray[np.bool_]]:
    """Each item's contrast against the midpoint of its group and the nearer neighbour group."""
    q, n = labels.shape
    groups = int(labels.max()) + 1 if labels.size else 1
    member = label_pos[:, None, :] == np.arange(groups)[None, :, None]  # (Q, G, n) by position
    means_pos = _block_means(member, precision)  # (Q, G, n) weights by position
    means = np.take_along_axis(means_pos, position[:, None, :], axis=2)  # by item
    group_score = np.einsum("qgn,qn->qg", means, scores)
    count = labels.max(axis=1) + 1  # groups of each query
    own = labels
    up, down = own - 1, own + 1
    has_up, has_down = up >= 0, down < count[:, None]
    score_up = np.take_along_axis(group_score, np.clip(up, 0, groups - 1), axis=1)
    score_down = np.take_along_axis(group_score, np.clip(down, 0, groups - 1), axis=1)
    dist_up = np.where(has_up, np.abs(score_up - scores), np.inf)
    dist_down = np.where(has_down, np.abs(score_down - scores), np.inf)
    other = np.where(dist_up <= dist_down, up, down)
    valid = has_up | has_down
    other = np.clip(other, 0, groups - 1)
    rows = np.arange(q)[:, None]
    mid = 0.5 * (means[rows, own] + means[rows, other])  # (Q, n, n)
    place = np.eye(n)[None, :, :] - mid
    value = np.einsum("qin,qn->qi", place, scores)
    return place, value, valid


def cut_variances(stack: ModelStack, cov: FloatArray) -> FloatArray:
    """``V_k = v_k^T C v_k`` of every cut, ``(Q, n - 1)`` (at least ``1e-300``)."""
    return np.maximum(np.einsum("qkn,qnm,qkm->qk", stack.cuts, cov, stack.cuts), 1e-300)


def place_variances(stack: ModelStack, cov: FloatArray) -> FloatArray:
    """The variance of every item's placement contrast, ``(Q, n)`` (at least ``1e-300``)."""
    return np.maximum(np.einsum("qin,qnm,qim->qi", stack.place, cov, stack.place), 1e-300)


def kept_chance(stack: ModelStack, variance: FloatArray, horizon: float = 2.0) -> FloatArray:
    """Chance each cut is kept once the information behind ``variance`` grows ``horizon``
    times (0 for a cut the model cannot toggle)."""
    future = np.sqrt(variance / horizon)
    spread = np.sqrt(variance - variance / horizon)
    t = stack.threshold[:, None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        kept = ndtr((stack.effect - t * future) / spread) + ndtr(
            (-stack.effect - t * future) / spread
        )
    return np.where(stack.valid, np.nan_to_num(kept), 0.0)


def moved_chance(stack: ModelStack, variance: FloatArray, horizon: float = 2.0) -> FloatArray:
    """Chance each item crosses to its neighbour group once the information behind
    ``variance`` grows ``horizon`` times (0 for an item of a query with one group)."""
    spread = np.sqrt(variance - variance / horizon)
    with np.errstate(divide="ignore", invalid="ignore"):
        moved = ndtr(-np.abs(stack.place_value) / spread)
    return np.where(stack.place_valid, np.nan_to_num(moved), 0.0)


def cut_chances(
    stack: ModelStack, cov: FloatArray, horizon: float = 2.0
) -> tuple[FloatArray, FloatArray]:
    """Per cut: the chance it is kept once the information grows ``horizon`` times from ``cov``,
    and its current variance (``(Q, n - 1)`` each; 0 for invalid cuts)."""
    variance = cut_variances(stack, cov)
    return kept_chance(stack, variance, horizon), variance


def placement_chances(
    stack: ModelStack, cov: FloatArray, horizon: float = 2.0
) -> tuple[FloatArray, FloatArray]:
    """Per item: the chance doubling the information moves it past the midpoint to the neighbour
    group, and its placement contrast's current variance (``(Q, n)`` each)."""
    variance = place_variances(stack, cov)
    return moved_chance(stack, variance, horizon), variance
