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
(:func:`posterior_tiers`). Exactly equal scores are never cut.

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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp, ndtr

from orlbuild.builders.arrays import FloatArray, IntArray

__all__ = [
    "DEFAULT_FDR",
    "VARIANCE_FLOOR",
    "PosteriorPrior",
    "PosteriorTiers",
    "best_partitions",
    "fit_prior",
    "item_variances",
    "log_evidence",
    "posterior_tiers",
    "same_segment_probability",
    "segment_log_marginals",
    "stated_order_risk",
    "wrong_order_probability",
]

#: The default bound on the posterior expected share of wrong stated orders.
DEFAULT_FDR = 0.05
#: Smallest item variance (step 1 of the specification).
VARIANCE_FLOOR = 1e-6
#: Bounds of the empirical-Bayes search, wide on purpose: a narrower grid
#: ({0.25..4} x {0.5..4}) put the DL21 optimum at its edge.
LAMBDA_BOUNDS = (1e-3, 1e3)
TAU_BOUNDS = (1e-3, 1e2)
_GRID_SIZE = 13
_REFINEMENTS = 4
_BATCH = 16


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
    lam_a = np.asarray(lam, dtype=np.float64)[..., None, None]
    tau2 = np.square(np.asarray(tau, dtype=np.float64))[..., None, None]
    n = y.shape[-1]
    m0 = y.mean(axis=-1)[..., None, None]
    zero = np.zeros((*y.shape[:-1], 1))

    def prefix(x: FloatArray) -> FloatArray:
        return np.concatenate([zero, np.cumsum(x, axis=-1)], axis=-1)

    def segment_sum(x: FloatArray) -> FloatArray:
        return np.asarray(x[..., None, :] - x[..., :, None])

    size = np.arange(n + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = segment_sum(prefix(1.0 / v))
        ybar = segment_sum(prefix(y / v)) / p
        inner = segment_sum(prefix(y * y / v)) - p * ybar**2
        log_v = segment_sum(prefix(np.log(2.0 * np.pi * v)))
        length = (size[None, :] - size[:, None]).astype(np.float64)
        rho = _cut_prior(n, lam_a)
        out = (
            -0.5 * log_v
            - 0.5 * inner
            - 0.5 * np.log1p(tau2 * p)
            - 0.5 * (ybar - m0) ** 2 / (tau2 + 1.0 / p)
            + np.log(rho)
            + (length - 1.0) * np.log1p(-rho)
        )
    valid = size[None, :] > size[:, None]
    return np.where(valid, out, -np.inf)


def _forward(marginals: FloatArray) -> FloatArray:
    """``F[e]``: log sum over partitions of the items before segment end ``e``."""
    n = marginals.shape[-1] - 1
    fwd = np.full((*marginals.shape[:-2], n + 1), -np.inf)
    fwd[..., 0] = 0.0
    for e in range(1, n + 1):
        fwd[..., e] = logsumexp(fwd[..., :e] + marginals[..., :e, e], axis=-1)
    return fwd


def _backward(marginals: FloatArray) -> FloatArray:
    """``B[s]``: log sum over partitions of the items from segment start ``s``."""
    n = marginals.shape[-1] - 1
    bwd = np.full((*marginals.shape[:-2], n + 1), -np.inf)
    bwd[..., n] = 0.0
    for s in range(n - 1, -1, -1):
        bwd[..., s] = logsumexp(marginals[..., s, s + 1 :] + bwd[..., s + 1 :], axis=-1)
    return bwd


def log_evidence(
    y: FloatArray, v: FloatArray, *, lam: float | FloatArray, tau: float | FloatArray
) -> FloatArray:
    """Log marginal likelihood of one query's sorted scores under the segment model.

    The sum over all contiguous partitions of the product of their segment
    terms, less the one ``log rho`` by which those terms exceed the partition's
    prior probability (module notes). Broadcasts over equal-shape ``lam`` and ``tau``.
    """
    marginals = segment_log_marginals(y, v, lam=lam, tau=tau)
    rho = _cut_prior(y.shape[-1], np.asarray(lam, dtype=np.float64))
    return np.asarray(_forward(marginals)[..., -1] - np.log(rho))


def same_segment_probability(y: FloatArray, v: FloatArray, prior: PosteriorPrior) -> FloatArray:
    """``P_same(i, j)``: the posterior probability that no cut lies between sorted items i and j.

    Parameters
    ----------
    y, v
        Scores sorted best first and their item variances.
    prior
        The build's empirical-Bayes prior.

    Returns
    -------
    numpy.ndarray
        Symmetric ``(n, n)`` with ones on the diagonal.

    Notes
    -----
    With ``M[s, e] = exp(F[s] + L[s, e] + B[e] - log Z)`` the posterior
    probability that ``[s, e)`` is a segment, ``P_same(i, j)`` for ``i <= j``
    is the sum of ``M[s, e]`` over ``s <= i`` and ``e > j``: a cumulative sum
    down ``s`` and a reversed one along ``e``.
    """
    n = len(y)
    marginals = segment_log_marginals(y, v, lam=prior.lam, tau=prior.tau)
    fwd, bwd = _forward(marginals), _backward(marginals)
    segment = np.exp(fwd[:, None] + marginals + bwd[None, :] - fwd[-1])
    covering = np.cumsum(segment, axis=0)[:, ::-1].cumsum(axis=1)[:, ::-1]
    upper = covering[:n, 1:]
    same = np.triu(upper)
    same = same + np.triu(same, 1).T
    np.fill_diagonal(same, 1.0)
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
        The maximiser over a log-spaced ``13 x 13`` grid spanning ``LAMBDA_BOUNDS``
        and ``TAU_BOUNDS``, refined three times by a ``13 x 13`` grid two steps
        of the previous one wide around its best point (a bounded 2-D search,
        every step one array evaluation per query; the final step is about
        ``1e-5`` of the log range). With no query of two or more items, ``(1, 1)``.
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
    # Queries of one size are evaluated together, ``_BATCH`` at a time to bound memory.
    batches = [
        (np.stack(ys[k : k + _BATCH]), np.stack(vs[k : k + _BATCH]))
        for ys, vs in by_size.values()
        for k in range(0, len(ys), _BATCH)
    ]

    def total(lam: FloatArray, tau: FloatArray) -> FloatArray:
        lam_q, tau_q = lam[..., None], tau[..., None]
        return np.asarray(
            sum(log_evidence(y, v, lam=lam_q, tau=tau_q).sum(axis=-1) for y, v in batches)
        )

    low = np.log([LAMBDA_BOUNDS[0], TAU_BOUNDS[0]])
    high = np.log([LAMBDA_BOUNDS[1], TAU_BOUNDS[1]])
    centre = (low + high) / 2.0
    half = (high - low) / 2.0
    for _ in range(_REFINEMENTS):
        axes = [
            np.clip(centre[d] + np.linspace(-half[d], half[d], _GRID_SIZE), low[d], high[d])
            for d in (0, 1)
        ]
        grid_lam, grid_tau = np.meshgrid(np.exp(axes[0]), np.exp(axes[1]), indexing="ij")
        values = total(grid_lam, grid_tau)
        best = np.unravel_index(int(np.argmax(values)), values.shape)
        centre = np.log([grid_lam[best], grid_tau[best]])
        half = 2.0 * half / (_GRID_SIZE - 1)
    x = centre
    return PosteriorPrior(float(np.exp(x[0])), float(np.exp(x[1])))


def wrong_order_probability(y: FloatArray, se: FloatArray, same: FloatArray) -> FloatArray:
    """``w_ij``: the probability that stating sorted item ``i`` above ``j`` is wrong (step 5).

    ``P_same + (1 - P_same) Phi(-z)``, ``z = (y_i - y_j) / se_ij``; for ``i < j``
    (upper triangle, ``y_i >= y_j``). A zero standard error makes ``z``
    infinite for distinct scores and 0 for equal ones. The lower triangle and
    diagonal are 0.
    """
    diff = y[:, None] - y[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, diff / np.where(se > 0, se, 1.0), np.where(diff > 0, np.inf, 0.0))
    w = same + (1.0 - same) * ndtr(-z)
    return np.triu(w, 1)


def _within_sums(gain: FloatArray) -> FloatArray:
    """``W[s, e]``: the sum of ``gain[i, j]`` over ``s <= i < j < e`` (2-D prefix sums)."""
    n = gain.shape[0]
    prefix = np.zeros((n + 1, n + 1))
    prefix[1:, 1:] = np.triu(gain, 1).cumsum(axis=0).cumsum(axis=1)
    s = np.arange(n + 1)[:, None]
    e = np.arange(n + 1)[None, :]
    # Pairs with i in [s, e) and j in [s, e): upper-triangular entries only.
    return prefix[e, e] - prefix[s, e] - prefix[e, s] + prefix[s, s]


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
    within = _within_sums(gain)
    total = float(np.triu(gain, 1).sum())
    cost = np.where(allowed_ends[None, :], within, np.inf)
    cost = np.where(np.arange(n + 1)[None, :] > np.arange(n + 1)[:, None], cost, np.inf)
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    parents: list[IntArray] = []
    results: list[tuple[float, IntArray]] = []
    for _ in range(n):
        candidate = best[:, None] + cost
        parent = np.argmin(candidate, axis=0).astype(np.int64)
        best = candidate[parent, np.arange(n + 1)]
        parents.append(parent)
        if not np.isfinite(best[n]):
            results.append((-np.inf, np.zeros(0, dtype=np.int64)))
            continue
        ends = [n]
        for k in range(len(parents) - 1, 0, -1):
            ends.append(int(parents[k][ends[-1]]))
        results.append((total - float(best[n]), np.array(ends[::-1], dtype=np.int64)))
    return results


def _tiers_from_ends(ends: IntArray, n: int) -> IntArray:
    tiers = np.zeros(n, dtype=np.int64)
    tiers[ends[:-1]] = 1
    return np.cumsum(tiers) + 1


def stated_order_risk(w: FloatArray, sorted_tiers: IntArray) -> tuple[float, int]:
    """``(E, N)`` of a tiering of the sorted items: summed ``w_ij`` and count over stated pairs.

    Serves every procedure: a ``model`` or ``simultaneous`` tiering is scored on
    the same scale by passing its tiers in the sorted order.
    """
    stated = np.triu(sorted_tiers[:, None] != sorted_tiers[None, :], 1)
    return float(w[stated].sum()), int(stated.sum())


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
    if not 0.0 <= fdr < 1.0:
        raise ValueError(f"fdr must be in [0, 1), got {fdr}")
    scores = np.asarray(scores, dtype=np.float64)
    n = len(scores)
    if n < 2:
        return PosteriorTiers(np.ones(n, dtype=np.int64), 0.0, 0, np.zeros(0), np.ones(n), 1, 1)
    order, y, se_sorted = _sorted(scores, np.asarray(se, dtype=np.float64))
    same = same_segment_probability(y, item_variances(se_sorted), prior)
    w = wrong_order_probability(y, se_sorted, same)
    gaps = 1.0 - np.diagonal(same, 1)
    k_post = int(np.round(1.0 + gaps.sum()))
    allowed = np.ones(n + 1, dtype=bool)
    allowed[1:n] = y[:-1] != y[1:]
    sorted_tiers = np.ones(n, dtype=np.int64)
    k_feas = 1
    if fdr > 0.0:
        candidates = best_partitions(np.triu(fdr - w, 1), allowed)
        for k, (value, _) in enumerate(candidates, start=1):
            if value >= 0.0:
                k_feas = k
        k_keep = min(k_feas, k_post)
        sorted_tiers = _tiers_from_ends(candidates[k_keep - 1][1], n)
    expected, stated = stated_order_risk(w, sorted_tiers)
    tiers = np.empty(n, dtype=np.int64)
    tiers[order] = sorted_tiers
    top = np.empty(n)
    top[order] = same[0]
    return PosteriorTiers(tiers, expected, stated, gaps, top, k_feas, k_post)
