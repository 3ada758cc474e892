"""Pairs chosen from the current ``posterior``: the Thompson-style rule (docs/planning.md,
"Planning for `--tiering posterior`").

Per query, items sorted by score best first, with the covariance ``C`` of the scores,
item variances ``v`` and the build's empirical-Bayes prior
(:mod:`orlbuild.builders.tiering.posterior`):

* ``c_k = 1 - P_same(k - 1, k)`` is the posterior probability of a cut before sorted
  item ``k`` (:func:`~orlbuild.builders.tiering.partition_sampling.cut_probabilities`);
  the query's **value** is ``sum_k c_k (1 - c_k)``, large where cuts are in doubt;
* **settled**: no poorly measured item (compared fewer than :data:`MIN_COMPARISONS`
  times), every boundary of the stated tiers has ``c_k >= STATED_CUT`` and every other gap
  ``c_k <= INNER_CUT`` (the thresholds were chosen on seeded simulations and checked on
  others: docs/planning.md). Nothing is proposed for a settled query. The query's
  ``risk`` is the posterior probability that some gap is stated wrongly,
  ``1 - prod_k (1 - r_k)`` with ``r_k = 1 - c_k`` at a stated boundary and ``c_k`` elsewhere;
* **allocation**: ``1 - uniform_share`` of the budget (all of it by default) goes to the
  open queries in proportion to their value (largest remainders), the rest evenly to open
  queries as uniformly drawn pairs (:data:`UNIFORM_SHARE`);
* **pairs**: in sweeps over all queries at once, each query with budget left draws a
  partition from its posterior by backward sampling
  (:func:`~orlbuild.builders.tiering.partition_sampling.sample_partitions`) and, across each
  pair of neighbouring sampled segments, adds the pair whose variance one more comparison
  cuts most, ``w V^2 / (1 + w V)`` with ``V`` the pair's variance and ``w = p (1 - p)`` its
  Bernoulli information; the covariance gets that comparison's rank-one update before the
  next pick. A draw of one segment adds nothing; what :data:`MAX_SWEEPS` sweeps (or the
  repeat limit) leave of a query's budget goes to uniform pairs of that query.

Drawing the partition instead of aiming at the most uncertain pair keeps judgments
spread over every boundary the posterior finds plausible, in proportion to that
plausibility. Greedy "most uncertain pair" rules concentrate on a few pairs whose
estimated gap is noise and break the error control (docs/planning.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import expit

from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.parameters import PlanSettings
from orlbuild.builders.tiering.partition_sampling import cut_probabilities, sample_partitions
from orlbuild.builders.tiering.posterior import PosteriorPrior, item_variances

__all__ = [
    "INNER_CUT",
    "MAX_SWEEPS",
    "MIN_COMPARISONS",
    "OPEN_CUT",
    "STATED_CUT",
    "UNIFORM_SHARE",
    "PosteriorQueryPlan",
    "posterior_pairs",
    "posterior_status",
]

#: Share of a round spent on uniformly drawn pairs (of open queries). 0: measured on design A
#: (seeds 0-19, checked on 20-39), a quarter spent uniformly cost 3 points of savings over
#: the 40 seeds and kept the mean wrong share only a little lower (0.046 against 0.048;
#: docs/planning.md, "What it buys and what it keeps").
UNIFORM_SHARE = 0.0
#: A settled query's stated boundaries have at least this cut probability ...
STATED_CUT = 0.99
#: ... and its other gaps at most this one.
INNER_CUT = 0.2
#: Least comparisons of every item of a settled query.
MIN_COMPARISONS = 3
#: Sweeps of draws per plan before the rest of a query's budget goes to uniform pairs.
MAX_SWEEPS = 400
#: Partitions drawn per query from one forward pass (one per sweep).
DRAWS = 16
#: Queries of one size stacked per array operation.
CHUNK = 1000
#: Gaps whose cut probability lies in ``[OPEN_CUT, 1 - OPEN_CUT]`` are listed as open.
OPEN_CUT = 0.05


@dataclass(frozen=True)
class PosteriorQueryPlan:
    """One query's posterior status and planned pairs.

    Attributes
    ----------
    order
        Item indices sorted by score, best first.
    cut_probability
        ``c_k`` for the ``n - 1`` gaps of that order.
    value
        ``sum_k c_k (1 - c_k)``.
    risk
        The posterior probability that some gap is stated wrongly (module notes).
    settled
        Settled (see the module notes).
    pairs
        ``(m, 2)`` planned pairs, item indices of the input order.
    sampled
        ``(m,)`` booleans: the pair was chosen across a sampled boundary (else uniformly).
    """

    order: IntArray
    cut_probability: FloatArray
    value: float
    risk: float
    settled: bool
    pairs: IntArray
    sampled: npt.NDArray[np.bool_]


def _sorted_stack(
    scores: FloatArray, cov: FloatArray
) -> tuple[IntArray, FloatArray, FloatArray, FloatArray]:
    """``order, y, v, C`` of a stack ``(Q, n)`` / ``(Q, n, n)``, all in the sorted order."""
    order = np.argsort(-scores, axis=1, kind="stable")
    y = np.take_along_axis(scores, order, axis=1)
    c = np.take_along_axis(np.take_along_axis(cov, order[:, :, None], axis=1), order[:, None], 2)
    diag = np.diagonal(c, axis1=1, axis2=2)
    se = np.sqrt(np.clip(diag[:, :, None] + diag[:, None, :] - 2.0 * c, 0.0, None))
    v = np.stack([item_variances(s) for s in se])
    return order, y, v, np.array(c, dtype=np.float64)


def _stated_gaps(cuts: FloatArray, order: IntArray, tiers: IntArray | None) -> np.ndarray:
    """``(Q, n - 1)``: does the stated tiering put a boundary at each gap of the score order
    (without tiers: the gaps more likely cut than not)."""
    if tiers is None:
        return cuts > 0.5
    ranked = np.take_along_axis(tiers, order, axis=1)
    return ranked[:, 1:] != ranked[:, :-1]


def _status(
    cuts: FloatArray, stated: np.ndarray, comparisons: IntArray | None
) -> tuple[FloatArray, FloatArray, npt.NDArray[np.bool_]]:
    value = (cuts * (1.0 - cuts)).sum(axis=1)
    wrong = np.clip(np.where(stated, 1.0 - cuts, cuts), 0.0, 1.0 - 1e-16)
    risk = 1.0 - np.exp(np.log1p(-wrong).sum(axis=1))
    settled = np.where(stated, cuts >= STATED_CUT, cuts <= INNER_CUT).all(axis=1)
    if comparisons is not None:
        settled &= comparisons.min(axis=1) >= MIN_COMPARISONS
    return value, risk, settled


def posterior_status(
    scores: FloatArray,
    cov: FloatArray,
    prior: PosteriorPrior,
    comparisons: IntArray | None = None,
    tiers: IntArray | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray, npt.NDArray[np.bool_]]:
    """Cut probabilities, value, risk and settled for a stack of queries of one size.

    Parameters
    ----------
    scores, cov
        ``(Q, n)`` scores and ``(Q, n, n)`` their covariances.
    prior
        The empirical-Bayes prior.
    comparisons
        ``(Q, n)`` comparisons of each item, or ``None`` (not checked).
    tiers
        ``(Q, n)`` the stated tiers, or ``None`` (the gaps with ``c_k > 0.5`` count as stated).

    Returns
    -------
    cuts : numpy.ndarray
        ``(Q, n - 1)`` cut probabilities in each query's score order.
    value, risk : numpy.ndarray
        ``(Q,)``, see the module notes.
    settled : numpy.ndarray
        ``(Q,)`` booleans.
    """
    order, y, v, _ = _sorted_stack(np.asarray(scores, np.float64), np.asarray(cov, np.float64))
    cuts = cut_probabilities(y, v, prior)
    return (cuts, *_status(cuts, _stated_gaps(cuts, order, tiers), comparisons))


def _largest_remainder(weights: FloatArray, total: int, cap: IntArray) -> IntArray:
    """``total`` split in proportion to ``weights`` (integers, at most ``cap`` each)."""
    out = np.zeros(len(weights), dtype=np.int64)
    left = min(int(total), int(cap.sum()))
    weights = np.where(cap > 0, np.clip(weights, 0.0, None), 0.0)
    while left > 0:
        room = cap - out
        w = np.where(room > 0, weights, 0.0)
        if w.sum() <= 0:
            w = (room > 0).astype(np.float64)
        share = w / w.sum() * left
        give = np.minimum(np.floor(share).astype(np.int64), room)
        if give.sum() == 0:
            rest = share - np.floor(share)
            pick = np.argsort(-rest, kind="stable")[:left]
            give = np.zeros_like(out)
            give[pick] = np.minimum(1, room[pick])
        out += give
        left -= int(give.sum())
    return out


def _sampled_pairs(
    y: FloatArray,
    v: FloatArray,
    cov: FloatArray,
    prior: PosteriorPrior,
    want: IntArray,
    rng: np.random.Generator,
    repeat_limit: int,
) -> tuple[list[list[tuple[int, int]]], IntArray]:
    """Planned pairs (sorted positions) of a stack, and what each query could not place."""
    q, n = y.shape
    cov = cov.copy()
    left = want.copy()
    asked = np.zeros((q, n, n), dtype=np.int64)
    p = expit(y[:, :, None] - y[:, None, :])
    info = p * (1.0 - p)
    chosen: list[list[tuple[int, int]]] = [[] for _ in range(q)]
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    drawn = np.zeros((q, 0, n - 1), dtype=bool)
    for sweep in range(MAX_SWEEPS):
        live = np.flatnonzero(left > 0)
        if not len(live):
            break
        if sweep % DRAWS == 0:  # one forward pass serves the next DRAWS sweeps
            drawn = np.zeros((q, DRAWS, n - 1), dtype=bool)
            drawn[live] = sample_partitions(y[live], v[live], prior, rng, DRAWS)
        cuts = drawn[live, sweep % DRAWS]
        segment = np.concatenate([np.zeros((len(live), 1), np.int64), cuts.cumsum(1)], axis=1)
        for t in range(int(cuts.sum(axis=1).max(initial=0))):
            act = (left[live] > 0) & (cuts.sum(axis=1) > t)
            if not act.any():
                break
            idx = live[act]
            seg = segment[act]
            across = (seg[:, :, None] == t) & (seg[:, None, :] == t + 1) & upper
            across &= asked[idx] < repeat_limit
            c = cov[idx]
            diag = np.diagonal(c, axis1=1, axis2=2)
            var = np.clip(diag[:, :, None] + diag[:, None, :] - 2.0 * c, 0.0, None)
            w = info[idx]
            gain = np.where(across, w * var**2 / (1.0 + w * var), -np.inf)
            flat = np.argmax(gain.reshape(len(idx), -1), axis=1)
            ok = np.isfinite(gain.reshape(len(idx), -1)[np.arange(len(idx)), flat])
            idx, flat = idx[ok], flat[ok]
            i, j = flat // n, flat % n
            u = cov[idx, :, i] - cov[idx, :, j]  # C u, (m, n)
            wu = info[idx, i, j]
            denom = 1.0 + wu * (u[np.arange(len(idx)), i] - u[np.arange(len(idx)), j])
            cov[idx] -= (wu / denom)[:, None, None] * u[:, :, None] * u[:, None, :]
            asked[idx, i, j] += 1
            left[idx] -= 1
            for r, a, b in zip(idx.tolist(), i.tolist(), j.tolist(), strict=True):
                chosen[r].append((a, b))
    return chosen, left


def _uniform(rng: np.random.Generator, n: int, k: int) -> IntArray:
    a = rng.integers(0, n, k)
    return np.column_stack([a, (a + rng.integers(1, n, k)) % n]).astype(np.int64)


def posterior_pairs(
    queries: Sequence[tuple[FloatArray, FloatArray]],
    budget: int,
    prior: PosteriorPrior,
    *,
    rng: np.random.Generator,
    comparisons: Sequence[IntArray] | None = None,
    tiers: Sequence[IntArray] | None = None,
    uniform_share: float = UNIFORM_SHARE,
    max_per_query: int | None = None,
    repeat_limit: int = PlanSettings.repeat_limit,
) -> list[PosteriorQueryPlan]:
    """Plan ``budget`` comparisons over ``queries`` by the Thompson-style rule.

    Parameters
    ----------
    queries
        Per query, ``(scores, cov)``: scores (higher is better) and their covariance.
    budget
        Comparisons to plan (0: only the status).
    prior
        The build's empirical-Bayes prior (:func:`~orlbuild.builders.tiering.posterior.fit_prior`).
    rng
        Source of the partitions drawn and of the uniform pairs.
    comparisons
        Per query, the comparisons of each item (settled needs :data:`MIN_COMPARISONS`
        each), or ``None``.
    tiers
        Per query, the stated tiers (1 best) that settled is judged on, or ``None`` (the gaps
        with ``c_k > 0.5`` count as stated).
    uniform_share
        Share of the budget spent on uniformly drawn pairs of open queries, in ``[0, 1]``.
    max_per_query
        At most this many comparisons for one query (``None``: no cap).
    repeat_limit
        At most this many planned asks of one pair across sampled boundaries.

    Returns
    -------
    list of PosteriorQueryPlan
        One per query, in the order of ``queries``.
    """
    if not 0.0 <= uniform_share <= 1.0:
        raise ValueError(f"uniform_share must be in [0, 1], got {uniform_share}")
    sizes = np.array([len(s) for s, _ in queries], dtype=np.int64)
    nq = len(queries)
    cuts_of: list[FloatArray] = [np.zeros(0)] * nq
    order_of: list[IntArray] = [np.zeros(0, np.int64)] * nq
    value = np.zeros(nq)
    risk = np.zeros(nq)
    settled = np.ones(nq, dtype=bool)
    stacks: dict[int, tuple[IntArray, IntArray, FloatArray, FloatArray, FloatArray]] = {}
    for n in np.unique(sizes).tolist():
        members = np.flatnonzero(sizes == n)
        if n < 2:
            for k in members.tolist():
                order_of[k] = np.arange(n, dtype=np.int64)
            continue
        for lo in range(0, len(members), CHUNK):
            block = members[lo : lo + CHUNK]
            scores = np.stack([np.asarray(queries[k][0], np.float64) for k in block])
            cov = np.stack([np.asarray(queries[k][1], np.float64) for k in block])
            order, y, v, c = _sorted_stack(scores, cov)
            cuts = cut_probabilities(y, v, prior)
            counts = None if comparisons is None else np.stack([comparisons[k] for k in block])
            stated = None if tiers is None else np.stack([tiers[k] for k in block])
            val, rsk, sett = _status(cuts, _stated_gaps(cuts, order, stated), counts)
            value[block], risk[block], settled[block] = val, rsk, sett
            for r, k in enumerate(block.tolist()):
                cuts_of[k], order_of[k] = cuts[r], order[r]
            stacks[len(stacks)] = (block, order, y, v, c)
    open_ = ~settled & (sizes >= 2)
    cap = np.where(open_, budget if max_per_query is None else max_per_query, 0).astype(np.int64)
    uniform_total = round(uniform_share * budget)
    even = _largest_remainder(np.ones(nq), uniform_total, cap)
    by_value = _largest_remainder(value, budget - int(even.sum()), cap - even)
    planned: list[list[tuple[int, int]]] = [[] for _ in range(nq)]
    extra = even.copy()
    for block, order, y, v, c in stacks.values():
        want = by_value[block]
        if not want.any():
            continue
        chosen, left = _sampled_pairs(y, v, c, prior, want, rng, repeat_limit)
        for r, k in enumerate(block.tolist()):
            planned[k] = [(int(order[r, a]), int(order[r, b])) for a, b in chosen[r]]
        extra[block] += left
    out = []
    for k in range(nq):
        sampled = np.array(planned[k], dtype=np.int64).reshape(-1, 2)
        uniform = _uniform(rng, int(sizes[k]), int(extra[k])) if extra[k] else sampled[:0]
        out.append(
            PosteriorQueryPlan(
                order=order_of[k],
                cut_probability=cuts_of[k],
                value=float(value[k]),
                risk=float(risk[k]),
                settled=bool(settled[k]),
                pairs=np.concatenate([sampled, uniform]),
                sampled=np.r_[np.ones(len(sampled), bool), np.zeros(len(uniform), bool)],
            )
        )
    return out
