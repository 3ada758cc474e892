"""Tiers from a tie-aware posterior over contiguous partitions: the ``posterior`` tiering
(docs/tiers-and-audit.md, "How tiers are decided and audited").

Per query, the items are sorted by score best first and every contiguous
partition of that order is a hypothesis "these segments are the true tiers".
With item variances ``v_i`` (:func:`item_variances`), a cut prior
``rho = min(0.5, lambda / (n - 1))`` per gap and, inside a segment, scores
``y_i ~ N(gamma, v_i)`` with ``gamma ~ N(m0, tau^2)`` (``m0`` the query's mean
score), each segment has a closed-form log marginal likelihood
(:func:`segment_log_marginals`). A forward-backward pass over segment ends
gives ``P_same(i, j)``, the posterior probability that no cut lies between
sorted items ``i`` and ``j`` (:func:`same_segment_probability`). The prior
``(lambda, tau)`` is chosen by empirical Bayes over all the build's queries
(:func:`fit_prior`).

Stating ``i > j`` is wrong with probability
``w_ij = P_same(i, j) + (1 - P_same(i, j)) Phi(-z_ij)`` (:func:`wrong_order_probability`).
For every number of tiers ``K`` the contiguous partition maximising the sum of
``fdr - w_ij`` over the pairs it states is found by dynamic programming
(:func:`best_partitions`); the kept tiering has ``min(K_feas, K_post)`` tiers,
``K_feas`` the largest ``K`` whose stated pairs have ``sum (w_ij - fdr) <= 0``
and ``K_post`` the rounded posterior expected number of tiers
(:func:`posterior_tiers`). Exactly equal scores (within ``EXACT_TIE``, the
round-off iterative solvers leave) are never cut.

What it states: under the Bradley-Terry tier model with the build's
empirical-Bayes prior, each query's posterior expected share of wrong stated
orders is at most ``fdr``. That is a Bayesian false-discovery statement, not a
frequentist worst case; its calibration (predicted ``E / N`` against the
realised share) is measured by the seeded simulations in
tests/builders/test_posterior.py.

Two readings where the specification leaves room:

* The per-segment term ``log rho + (|S| - 1) log(1 - rho)`` sums to
  ``K log rho + (n - K) log(1 - rho)`` over a partition of ``K`` segments, one
  ``log rho`` more than the prior probability of the partition
  (``K - 1`` cuts). The constant does not change ``P_same``, but it would bias
  the empirical Bayes towards large ``lambda``; :func:`log_evidence` removes it,
  so ``fit_prior`` maximises the proper marginal likelihood.
* ``fdr = 0`` states no order (one tier): no finite evidence makes a stated
  order wrong with probability zero, and a ``w_ij`` that underflows to ``0.0``
  must not pass as such.
* ``K`` is searched up to ``K_post`` only, and the kept tiering has the largest
  feasible ``K <= K_post``: that is ``min(K_feas, K_post)`` whenever the
  feasible ``K`` are ``1..K_feas``; where they are not, the literal rule would
  keep an infeasible ``K_post`` and break the per-query bound. ``K_feas`` is
  reported as found in that range. (The programme is then ``O(n^2 K_post)``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.parameters import DEFAULT_FDR
from orlbuild.builders.tiering.walk import EXACT_TIE

__all__ = [
    "VARIANCE_FLOOR",
    "PosteriorPrior",
    "PosteriorTiers",
    "SegmentStatistics",
    "SortedPosterior",
    "best_partitions",
    "check_fdr",
    "fit_prior",
    "item_variances",
    "item_variances_batch",
    "log_evidence",
    "posterior_tiers",
    "same_segment_probability",
    "segment_log_marginals",
    "sorted_posterior",
    "stated_order_risk",
    "wrong_order_probability",
]

#: Smallest item variance (step 1 of the specification).
VARIANCE_FLOOR = 1e-6
#: Bounds of the empirical-Bayes search, wide on purpose: a narrower grid
#: ({0.25..4} x {0.5..4}) put the DL21 optimum at its edge.
LAMBDA_BOUNDS = (1e-3, 1e3)
TAU_BOUNDS = (1e-3, 1e2)
_GRID_SIZE = 7
#: Queries the starting grid of :func:`fit_prior` evaluates at most (every k-th of each size).
_GRID_QUERIES = 500
#: Segment tables ``(n + 1)^2`` evaluated at once by :func:`fit_prior` (memory bound).
_CELLS = 2_000_000


@dataclass(frozen=True)
class PosteriorPrior:
    """The empirical-Bayes prior of a build.

    Attributes
    ----------
    lam
        Expected number of cuts per query (``rho = min(0.5, lam / (n - 1))``).
    tau
        Prior standard deviation of a segment's strength around the query mean.
    """

    lam: float
    tau: float


@dataclass(frozen=True)
class PosteriorTiers:
    """One query's ``posterior`` tiering and its evidence, items in input order.

    Attributes
    ----------
    tiers
        Tier of each item (1 best).
    expected_wrong
        ``E``: the sum of ``w_ij`` over the stated orders.
    stated
        ``N``: the number of stated orders (pairs in different tiers).
    boundary_probability
        Per adjacent gap of the score order (``n - 1`` values, best first), the
        posterior probability ``1 - P_same(k - 1, k)`` that a boundary lies there.
    top_probability
        Per item, the posterior probability that it is in the best item's segment.
    k_feasible, k_posterior
        ``K_feas`` and ``K_post`` of step 6.
    """

    tiers: IntArray
    expected_wrong: float
    stated: int
    boundary_probability: FloatArray
    top_probability: FloatArray
    k_feasible: int
    k_posterior: int

    @property
    def wrong_share(self) -> float:
        """``E / N``; 0.0 when no order is stated."""
        return self.expected_wrong / self.stated if self.stated else 0.0


def item_variances(se: FloatArray) -> FloatArray:
    """Item variances ``v`` with ``v_i + v_j`` closest to ``se_ij^2`` (least squares).

    Parameters
    ----------
    se
        ``(n, n)`` standard errors of the pairwise differences.

    Returns
    -------
    numpy.ndarray
        ``v`` floored at :data:`VARIANCE_FLOOR`; ``se^2 / 2`` each for two items.

    Notes
    -----
    The normal equations of ``v_i + v_j = b_ij`` over all pairs are
    ``((n - 2) I + 1 1^T) v = r`` with ``r_i = sum_j b_ij``, whose solution is
    ``v = (r - sum(r) / (2n - 2)) / (n - 2)``.
    """
    n = se.shape[0]
    if n == 1:
        return np.full(1, VARIANCE_FLOOR)
    b = np.square(se, dtype=np.float64)
    np.fill_diagonal(b, 0.0)
    if n == 2:
        v = np.full(2, b[0, 1] / 2.0)
    else:
        r = b.sum(axis=1)
        v = (r - r.sum() / (2.0 * n - 2.0)) / (n - 2.0)
    return np.maximum(v, VARIANCE_FLOOR)


def _cut_prior(n: int, lam: FloatArray) -> FloatArray:
    return np.minimum(0.5, lam / max(n - 1, 1))


@dataclass(frozen=True)
class SegmentStatistics:
    """The prior-free parts of every segment's marginal likelihood, for one or many queries.

    Computed once per query set (:meth:`of`) and reused for every prior the
    empirical Bayes tries (:meth:`log_marginals`). Arrays are ``(..., n + 1, n + 1)``
    indexed ``[s, e]`` for the segment ``[s, e)`` (meaningful for ``s < e``).

    Attributes
    ----------
    base
        ``-1/2 sum log(2 pi v_i) - 1/2 (sum y_i^2 / v_i - P ybar^2)``.
    precision
        ``P = sum 1 / v_i``.
    offset2
        ``(ybar - m0)^2``.
    length
        ``|S| = e - s``, ``(n + 1, n + 1)`` (the same for every query).
    valid
        ``s < e``.
    inverse_precision
        ``1 / P``.
    """

    base: FloatArray
    precision: FloatArray
    offset2: FloatArray
    length: FloatArray
    valid: np.ndarray
    inverse_precision: FloatArray

    @classmethod
    def of(cls, y: FloatArray, v: FloatArray) -> SegmentStatistics:
        """The statistics of scores ``y`` sorted best first and item variances ``v``."""
        n = y.shape[-1]
        m0 = y.mean(axis=-1)[..., None, None]
        zero = np.zeros((*y.shape[:-1], 1))

        def segment_sum(x: FloatArray) -> FloatArray:
            c = np.concatenate([zero, np.cumsum(x, axis=-1)], axis=-1)
            return np.asarray(c[..., None, :] - c[..., :, None])

        size = np.arange(n + 1)
        valid = size[None, :] > size[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            p = segment_sum(1.0 / v)
            ybar = segment_sum(y / v) / p
            inner = segment_sum(y * y / v) - p * ybar**2
            base = -0.5 * segment_sum(np.log(2.0 * np.pi * v)) - 0.5 * inner
        p = np.where(valid, p, 1.0)
        length = (size[None, :] - size[:, None]).astype(np.float64)
        # -inf outside the segments carries through every term of log_marginals
        base = np.where(valid, base, -np.inf)
        offset2 = np.where(valid, (ybar - m0) ** 2, 0.0)
        return cls(base, p, offset2, length, valid, 1.0 / p)

    def log_marginals(self, lam: float | FloatArray, tau: float | FloatArray) -> FloatArray:
        """Step 2's segment terms under the prior ``(lam, tau)`` (scalars or arrays that
        broadcast against the queries' leading shape); ``-inf`` where ``s >= e``."""
        lam_a = np.asarray(lam, dtype=np.float64)[..., None, None]
        tau2 = np.square(np.asarray(tau, dtype=np.float64))[..., None, None]
        rho = _cut_prior(self.length.shape[-1] - 1, lam_a)
        # in place: the empirical Bayes evaluates this a few dozen times over the whole build
        out = np.multiply(tau2, self.precision)
        np.log1p(out, out=out)
        out *= -0.5
        out += self.base
        shrink = np.add(tau2, self.inverse_precision)
        np.divide(self.offset2, shrink, out=shrink)
        shrink *= -0.5
        out += shrink
        out += (self.length - 1.0) * np.log1p(-rho) + np.log(rho)
        return out


def segment_log_marginals(
    y: FloatArray, v: FloatArray, *, lam: float | FloatArray, tau: float | FloatArray
) -> FloatArray:
    """Log marginal likelihood of every segment ``[s, e)`` of the sorted items.

    Parameters
    ----------
    y, v
        Scores sorted best first and their item variances: ``(n,)``, or
        ``(Q, n)`` for ``Q`` queries of ``n`` items.
    lam, tau
        Prior parameters, scalars or arrays whose shape broadcasts against the
        queries' leading shape (a grid ``(G1, G2)`` of priors over ``(Q,)``
        queries is passed as ``(G1, G2, 1)``).

    Returns
    -------
    numpy.ndarray
        ``(*broadcast shape, n + 1, n + 1)``; entry ``[..., s, e]`` is step 2's segment term
        (prior ``log rho + (|S| - 1) log(1 - rho)`` included) for ``s < e``,
        ``-inf`` elsewhere.
    """
    return SegmentStatistics.of(y, v).log_marginals(lam, tau)


def _log_sum_exp(x: FloatArray) -> FloatArray:
    """``log(sum(exp(x)))`` over the last axis, ``-inf`` for an all ``-inf`` row.

    The forward-backward pass makes ``2 n`` of these on small rows of many
    queries at once; :func:`scipy.special.logsumexp`'s checks made it 2.5 times slower.
    """
    top = x.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.asarray(np.log(np.exp(x - top).sum(axis=-1)) + top[..., 0])


def _forward(marginals: FloatArray) -> FloatArray:
    """``F[e]``: log sum over partitions of the items before segment end ``e``."""
    n = marginals.shape[-1] - 1
    by_end = np.ascontiguousarray(np.swapaxes(marginals, -1, -2))
    fwd = np.full((*marginals.shape[:-2], n + 1), -np.inf)
    fwd[..., 0] = 0.0
    for e in range(1, n + 1):
        fwd[..., e] = _log_sum_exp(fwd[..., :e] + by_end[..., e, :e])
    return fwd


def _backward(marginals: FloatArray) -> FloatArray:
    """``B[s]``: log sum over partitions of the items from segment start ``s``."""
    n = marginals.shape[-1] - 1
    bwd = np.full((*marginals.shape[:-2], n + 1), -np.inf)
    bwd[..., n] = 0.0
    for s in range(n - 1, -1, -1):
        bwd[..., s] = _log_sum_exp(marginals[..., s, s + 1 :] + bwd[..., s + 1 :])
    return bwd


def log_evidence(
    y: FloatArray, v: FloatArray, *, lam: float | FloatArray, tau: float | FloatArray
) -> FloatArray:
    """Log marginal likelihood of one query's sorted scores under the segment model.

    The sum over all contiguous partitions of the product of their segment
    terms, less the one ``log rho`` by which those terms exceed the partition's
    prior probability (module notes). Broadcasts over equal-shape ``lam`` and ``tau``.
    """
    return _log_evidence(SegmentStatistics.of(y, v), lam, tau)


def _log_evidence(
    stats: SegmentStatistics, lam: float | FloatArray, tau: float | FloatArray
) -> FloatArray:
    rho = _cut_prior(stats.length.shape[-1] - 1, np.asarray(lam, dtype=np.float64))
    return np.asarray(_forward(stats.log_marginals(lam, tau))[..., -1] - np.log(rho))


def same_segment_probability(y: FloatArray, v: FloatArray, prior: PosteriorPrior) -> FloatArray:
    """``P_same(i, j)``: the posterior probability that no cut lies between sorted items i and j.

    Parameters
    ----------
    y, v
        Scores sorted best first and their item variances: ``(n,)``, or ``(Q, n)``
        for ``Q`` queries of ``n`` items at once.
    prior
        The build's empirical-Bayes prior.

    Returns
    -------
    numpy.ndarray
        Symmetric ``(n, n)`` (``(Q, n, n)``) with ones on the diagonal.

    Notes
    -----
    With ``M[s, e] = exp(F[s] + L[s, e] + B[e] - log Z)`` the posterior
    probability that ``[s, e)`` is a segment, ``P_same(i, j)`` for ``i <= j``
    is the sum of ``M[s, e]`` over ``s <= i`` and ``e > j``: a cumulative sum
    down ``s`` and a reversed one along ``e``.
    """
    n = y.shape[-1]
    marginals = segment_log_marginals(y, v, lam=prior.lam, tau=prior.tau)
    fwd, bwd = _forward(marginals), _backward(marginals)
    segment = np.exp(fwd[..., :, None] + marginals + bwd[..., None, :] - fwd[..., -1:, None])
    covering = np.flip(np.flip(np.cumsum(segment, axis=-2), axis=-1).cumsum(axis=-1), axis=-1)
    upper = covering[..., :n, 1:]
    same = np.triu(upper)
    same = same + np.swapaxes(np.triu(same, 1), -1, -2)
    index = np.arange(n)
    same[..., index, index] = 1.0
    return np.clip(same, 0.0, 1.0)


def _sorted(scores: FloatArray, se: FloatArray) -> tuple[IntArray, FloatArray, FloatArray]:
    order = np.argsort(-scores, kind="stable").astype(np.int64)
    return order, scores[order], se[np.ix_(order, order)]


def fit_prior(queries: Sequence[tuple[FloatArray, FloatArray]]) -> PosteriorPrior:
    """Empirical-Bayes ``(lambda, tau)`` maximising the summed marginal likelihood.

    Parameters
    ----------
    queries
        Per query, ``(scores, se)`` as the estimation gives them (any order).

    Returns
    -------
    PosteriorPrior
        The maximiser of the summed :func:`log_evidence`, searched in
        ``(log lambda, log tau)`` within ``LAMBDA_BOUNDS`` x ``TAU_BOUNDS``: the
        best point of a log-spaced ``7 x 7`` grid (evaluated on at most
        ``_GRID_QUERIES`` of the queries, every k-th of each size: it only
        chooses where to start), then Nelder-Mead (scipy) on those queries
        from there (to ``1e-3`` of the log scale) and on every query from
        their optimum (to ``1e-2`` of the log scale and of the summed log
        likelihood). With no query of two or more
        items, ``(1, 1)``.

    Notes
    -----
    Queries of one size are evaluated together (a few grid points at a time,
    memory bounded by ``_CELLS`` segment tables), so the cost is a few dozen
    array passes over the build, not one per query and grid point.
    """
    by_size: dict[int, tuple[list[FloatArray], list[FloatArray]]] = {}
    for scores, se in queries:
        if len(scores) < 2:
            continue
        _, y, se_sorted = _sorted(
            np.asarray(scores, dtype=np.float64), np.asarray(se, dtype=np.float64)
        )
        ys, vs = by_size.setdefault(len(y), ([], []))
        ys.append(y)
        vs.append(item_variances(se_sorted))
    if not by_size:
        return PosteriorPrior(1.0, 1.0)
    stacked = [(np.stack(ys), np.stack(vs)) for ys, vs in by_size.values()]
    total = sum(len(y) for y, _ in stacked)
    every = -(-total // _GRID_QUERIES)  # the grid sees every ``every``-th query of each size

    def chunks(step: int) -> list[SegmentStatistics]:
        out = []
        for y, v in stacked:
            y, v = y[::step], v[::step]
            rows = max(1, _CELLS // (_GRID_SIZE * (y.shape[1] + 1) ** 2))
            out += [
                SegmentStatistics.of(y[k : k + rows], v[k : k + rows])
                for k in range(0, len(y), rows)
            ]
        return out

    def totals(
        parts: list[SegmentStatistics], log_lam: FloatArray, log_tau: FloatArray
    ) -> FloatArray:
        """Summed log evidence at each of the ``G`` points ``(log_lam[g], log_tau[g])``."""
        lam, tau = np.exp(log_lam)[:, None], np.exp(log_tau)[:, None]
        return np.asarray(sum(_log_evidence(c, lam, tau).sum(axis=-1) for c in parts))

    low = np.log([LAMBDA_BOUNDS[0], TAU_BOUNDS[0]])
    high = np.log([LAMBDA_BOUNDS[1], TAU_BOUNDS[1]])
    axes = [np.linspace(low[d], high[d], _GRID_SIZE) for d in (0, 1)]
    grid_lam, grid_tau = (g.ravel() for g in np.meshgrid(*axes, indexing="ij"))
    sample = chunks(every)
    values = np.concatenate(
        [
            totals(sample, grid_lam[k : k + _GRID_SIZE], grid_tau[k : k + _GRID_SIZE])
            for k in range(0, len(grid_lam), _GRID_SIZE)
        ]
    )
    start = np.array([grid_lam[np.argmax(values)], grid_tau[np.argmax(values)]])
    step = (high - low) / (_GRID_SIZE - 1)

    from scipy.optimize import minimize  # only the prior's fit: not on every build's import path

    def search(
        parts: list[SegmentStatistics], x0: FloatArray, width: FloatArray, tolerance: float
    ) -> FloatArray:
        def negative(x: FloatArray) -> float:
            x = np.clip(x, low, high)
            return -float(totals(parts, x[:1], x[1:])[0])

        simplex = x0 + np.array([[0.0, 0.0], [width[0], 0.0], [0.0, width[1]]])
        found = minimize(
            negative,
            x0,
            method="Nelder-Mead",
            options={
                "initial_simplex": simplex,
                "xatol": tolerance,
                "fatol": tolerance,
                "maxiter": 400,
            },
        )
        return np.clip(found.x, low, high) if found.fun <= negative(x0) else x0

    # Nelder-Mead on the sample from the grid's best point, then on every query from there
    x = search(sample, start, step, 1e-3)
    if every > 1:
        x = search(chunks(1), x, np.full(2, 0.1), 1e-2)
    return PosteriorPrior(float(np.exp(x[0])), float(np.exp(x[1])))


def wrong_order_probability(y: FloatArray, se: FloatArray, same: FloatArray) -> FloatArray:
    """``w_ij``: the probability that stating sorted item ``i`` above ``j`` is wrong (step 5).

    ``P_same + (1 - P_same) Phi(-z)``, ``z = (y_i - y_j) / se_ij``; for ``i < j``
    (upper triangle, ``y_i >= y_j``). A zero standard error makes ``z``
    infinite for distinct scores and 0 for equal ones. The lower triangle and
    diagonal are 0. ``y`` may be ``(Q, n)`` with ``se`` and ``same`` ``(Q, n, n)``.
    """
    diff = y[..., :, None] - y[..., None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, diff / np.where(se > 0, se, 1.0), np.where(diff > 0, np.inf, 0.0))
    w = same + (1.0 - same) * ndtr(-z)
    return np.triu(w, 1)


def _within_sums(gain: FloatArray) -> FloatArray:
    """``W[..., s, e]``: the sum of ``gain[..., i, j]`` over ``s <= i < j < e`` (prefix sums)."""
    n = gain.shape[-1]
    prefix = np.zeros((*gain.shape[:-2], n + 1, n + 1))
    prefix[..., 1:, 1:] = np.triu(gain, 1).cumsum(axis=-2).cumsum(axis=-1)
    s = np.arange(n + 1)[:, None]
    e = np.arange(n + 1)[None, :]
    # Pairs with i in [s, e) and j in [s, e): upper-triangular entries only.
    return np.asarray(prefix[..., e, e] - prefix[..., s, e] - prefix[..., e, s] + prefix[..., s, s])


def _partition_tables(
    gain: FloatArray, allowed_ends: np.ndarray, segments: int | None = None
) -> tuple[FloatArray, IntArray]:
    """The dynamic programme of :func:`best_partitions` for ``(Q, n, n)`` gains at once.

    Returns the best value of every ``K`` up to ``segments`` (default ``n``;
    ``(Q, segments)``, ``-inf`` when ``K`` segments cannot be formed) and the
    parents ``(segments, Q, n + 1)``: ``parents[K - 1, q, e]`` is where the
    ``K``-th segment ending at ``e`` starts.
    """
    n = gain.shape[-1]
    segments = n if segments is None else max(1, min(n, segments))
    within = _within_sums(gain)
    total = np.triu(gain, 1).sum(axis=(-2, -1))
    index = np.arange(n + 1)
    cost = np.where(allowed_ends[:, None, :], within, np.inf)
    cost = np.where(index[None, :] > index[:, None], cost, np.inf)
    best = np.full((gain.shape[0], n + 1), np.inf)
    best[:, 0] = 0.0
    parents = np.zeros((segments, gain.shape[0], n + 1), dtype=np.int64)
    values = np.full((gain.shape[0], segments), -np.inf)
    rows = np.arange(gain.shape[0])[:, None]
    for k in range(segments):
        candidate = best[:, :, None] + cost
        parent = np.argmin(candidate, axis=1)
        best = candidate[rows, parent, index[None, :]]
        parents[k] = parent
        values[:, k] = np.where(np.isfinite(best[:, n]), total - best[:, n], -np.inf)
    return values, parents


def _segment_ends(parents: IntArray, segments: IntArray) -> IntArray:
    """``(Q, n)`` booleans: is there a cut before sorted item ``e`` in the best partition into
    ``segments[q]`` segments (traced back through ``parents``)."""
    n_k, q, width = parents.shape
    cut = np.zeros((q, width), dtype=bool)
    end = np.full(q, width - 1, dtype=np.int64)
    rows = np.arange(q)
    for k in range(n_k - 1, 0, -1):
        active = segments - 1 >= k
        start = parents[k, rows, end]
        end = np.where(active, start, end)
        cut[rows[active], end[active]] = True
    return cut[:, 1 : width - 1]


def best_partitions(gain: FloatArray, allowed_ends: np.ndarray) -> list[tuple[float, IntArray]]:
    """For each ``K``, the contiguous partition maximising the summed ``gain`` of its cross pairs.

    Parameters
    ----------
    gain
        ``(n, n)`` upper-triangular ``fdr - w_ij``.
    allowed_ends
        ``(n + 1,)`` booleans: may a segment end (a cut lie) before sorted item ``e``.
        ``allowed_ends[n]`` must be true.

    Returns
    -------
    list
        Index ``K - 1``: ``(value, cuts)`` with ``cuts`` the segment ends
        (``n`` last); ``-inf`` and no cuts when ``K`` segments cannot be formed.
    """
    n = gain.shape[0]
    values, parents = _partition_tables(gain[None], np.asarray(allowed_ends)[None])
    results: list[tuple[float, IntArray]] = []
    for k in range(1, n + 1):
        if not np.isfinite(values[0, k - 1]):
            results.append((-np.inf, np.zeros(0, dtype=np.int64)))
            continue
        cut = _segment_ends(parents, np.array([k]))[0]
        ends = np.r_[np.flatnonzero(cut) + 1, n].astype(np.int64)
        results.append((float(values[0, k - 1]), ends))
    return results


def stated_order_risk(w: FloatArray, sorted_tiers: IntArray) -> tuple[float, int]:
    """``(E, N)`` of a tiering of the sorted items: summed ``w_ij`` and count over stated pairs.

    Serves every procedure: a ``model`` or ``simultaneous`` tiering is scored on
    the same scale by passing its tiers in the sorted order.
    """
    stated = np.triu(sorted_tiers[:, None] != sorted_tiers[None, :], 1)
    return float(w[stated].sum()), int(stated.sum())


@dataclass(frozen=True)
class SortedPosterior:
    """The posterior of ``Q`` queries of ``n`` items sorted best first (:func:`sorted_posterior`).

    Attributes
    ----------
    same
        ``(Q, n, n)`` ``P_same``.
    wrong
        ``(Q, n, n)`` ``w_ij`` (upper triangle).
    tiers
        ``(Q, n)`` the ``posterior`` tiers of the sorted items (all ones when
        not asked for).
    k_feasible, k_posterior
        ``(Q,)`` ``K_feas`` (searched up to ``K_post``; 1 when the tiers were not asked
        for) and ``K_post``.
    """

    same: FloatArray
    wrong: FloatArray
    tiers: IntArray
    k_feasible: IntArray
    k_posterior: IntArray

    @property
    def boundary_probability(self) -> FloatArray:
        """``(Q, n - 1)`` ``1 - P_same(k - 1, k)`` per adjacent gap."""
        return 1.0 - np.diagonal(self.same, 1, axis1=-2, axis2=-1)

    def risk(self, sorted_tiers: IntArray) -> tuple[FloatArray, IntArray]:
        """``(E, N)`` per query of the tiering ``sorted_tiers`` ``(Q, n)`` (any procedure's)."""
        stated = np.triu(sorted_tiers[:, :, None] != sorted_tiers[:, None, :], 1)
        return (self.wrong * stated).sum(axis=(-2, -1)), stated.sum(axis=(-2, -1))


def sorted_posterior(
    y: FloatArray,
    se: FloatArray,
    prior: PosteriorPrior,
    *,
    fdr: float | None = DEFAULT_FDR,
) -> SortedPosterior:
    """Steps 1-3 and 5-6 for ``Q`` queries of ``n >= 2`` items at once, scores sorted best first.

    Parameters
    ----------
    y
        ``(Q, n)`` scores, each row sorted best first.
    se
        ``(Q, n, n)`` standard errors of the differences, in the same order.
    prior
        The build's empirical-Bayes prior.
    fdr
        The bound of step 6, in ``[0, 1)``; ``None`` computes the evidence only
        (``w``, ``P_same``: what every other procedure is scored with).

    Returns
    -------
    SortedPosterior
    """
    q, n = y.shape
    same = same_segment_probability(y, item_variances_batch(se), prior)
    w = wrong_order_probability(y, se, same)
    gaps = 1.0 - np.diagonal(same, 1, axis1=-2, axis2=-1)
    k_post = np.round(1.0 + gaps.sum(axis=-1)).astype(np.int64)
    tiers = np.ones((q, n), dtype=np.int64)
    k_feas = np.ones(q, dtype=np.int64)
    if fdr is not None and fdr > 0.0:
        allowed = np.ones((q, n + 1), dtype=bool)
        allowed[:, 1:n] = y[:, :-1] - y[:, 1:] > EXACT_TIE
        # only K <= K_post can be kept: the programme stops there (O(n^2 K_post), not O(n^3))
        most = int(k_post.max())
        values, parents = _partition_tables(np.triu(fdr - w, 1), allowed, most)
        feasible = values >= 0.0
        k_feas = np.where(feasible.any(axis=1), most - np.argmax(feasible[:, ::-1], axis=1), 1)
        keep = np.minimum(k_feas, k_post)
        cut = _segment_ends(parents, keep)
        tiers[:, 1:] += np.cumsum(cut, axis=1)
    return SortedPosterior(same, w, tiers, k_feas, k_post)


def item_variances_batch(se: FloatArray) -> FloatArray:
    """:func:`item_variances` of ``(Q, n, n)`` standard errors at once: ``(Q, n)``."""
    n = se.shape[-1]
    if n == 1:
        return np.full(se.shape[:-1], VARIANCE_FLOOR)
    b = np.square(se, dtype=np.float64)
    index = np.arange(n)
    b[..., index, index] = 0.0
    if n == 2:
        v = np.repeat(b[..., 0, 1:2] / 2.0, 2, axis=-1)
    else:
        r = b.sum(axis=-1)
        v = (r - r.sum(axis=-1, keepdims=True) / (2.0 * n - 2.0)) / (n - 2.0)
    return np.maximum(v, VARIANCE_FLOOR)


def posterior_tiers(
    scores: FloatArray, se: FloatArray, prior: PosteriorPrior, *, fdr: float = DEFAULT_FDR
) -> PosteriorTiers:
    """One query's ``posterior`` tiering (steps 1-3 and 5-6 of the specification).

    Parameters
    ----------
    scores
        Item scores (higher is better), any order.
    se
        ``(n, n)`` standard errors of the pairwise differences (Fisher,
        sandwich or bootstrap).
    prior
        The build's empirical-Bayes prior (:func:`fit_prior`).
    fdr
        Bound on the posterior expected share of wrong stated orders, in ``[0, 1)``.

    Returns
    -------
    PosteriorTiers
        Tiers and evidence, items in the order of ``scores``.
    """
    check_fdr(fdr)
    scores = np.asarray(scores, dtype=np.float64)
    n = len(scores)
    if n < 2:
        return PosteriorTiers(np.ones(n, dtype=np.int64), 0.0, 0, np.zeros(0), np.ones(n), 1, 1)
    order, y, se_sorted = _sorted(scores, np.asarray(se, dtype=np.float64))
    result = sorted_posterior(y[None], se_sorted[None], prior, fdr=fdr)
    sorted_tiers = result.tiers[0]
    expected, stated = stated_order_risk(result.wrong[0], sorted_tiers)
    tiers = np.empty(n, dtype=np.int64)
    tiers[order] = sorted_tiers
    top = np.empty(n)
    top[order] = result.same[0, 0]
    return PosteriorTiers(
        tiers,
        expected,
        stated,
        result.boundary_probability[0],
        top,
        int(result.k_feasible[0]),
        int(result.k_posterior[0]),
    )


def check_fdr(fdr: float) -> None:
    """Raise :class:`ValueError` unless ``fdr`` is in ``[0, 1)``."""
    if not 0.0 <= fdr < 1.0:
        raise ValueError(f"fdr must be in [0, 1), got {fdr}")
