"""Davidson's (1970) tie model for Bradley-Terry, with the tie parameter estimated per query.

With strengths ``pi = exp(s)`` and a tie parameter ``nu >= 0``::

    P(i beats j) = pi_i / D_ij,   P(tie) = nu * sqrt(pi_i pi_j) / D_ij,
    D_ij = pi_i + pi_j + nu * sqrt(pi_i pi_j).

``--ties davidson`` fits ``s`` and ``theta = log(nu)`` jointly by penalised
maximum likelihood (scipy's L-BFGS-B with the analytic gradient; the penalty
``alpha * ||s||^2`` of choix's ``opt_pairwise``), and the scores' information
is the Schur complement of the tie parameter in the observed information, so
that the tests account for ``nu`` being estimated (docs/tiers-and-audit.md, "Build routes").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from orlbuild.builders.arrays import FloatArray
from orlbuild.builders.pairwise_data import PairwiseComparisons
from orlbuild.records import EstimationError

__all__ = ["DavidsonFit", "davidson_counts", "davidson_fit", "davidson_information"]

#: ``theta = log(nu)`` is kept in this range (``nu`` from 1e-6 to 1e4).
_THETA_BOUNDS = (-13.8, 9.2)


@dataclass(frozen=True)
class DavidsonFit:
    """Fitted Davidson model of one query.

    Attributes
    ----------
    scores
        Centred log-strengths.
    nu
        The tie parameter.
    """

    scores: FloatArray
    nu: float


def davidson_counts(
    comparisons: PairwiseComparisons, unit_weights: FloatArray | None
) -> tuple[FloatArray, FloatArray]:
    """``(W, T)``: ``W[i, j]`` strict wins of ``i`` over ``j``; ``T`` ties, symmetric, per pair."""
    n = comparisons.n_items
    weights = comparisons.comparison_weights(unit_weights)
    if weights is None:
        weights = np.ones(len(comparisons.winners))
    tie = comparisons.tie_mask()
    flat = comparisons.winners * n + comparisons.losers
    wins = np.bincount(flat[~tie], weights=weights[~tie], minlength=n * n).reshape(n, n)
    half = np.bincount(flat[tie], weights=weights[tie], minlength=n * n).reshape(n, n)
    return wins.astype(np.float64), (half + half.T).astype(
        np.float64
    )  # the two halves of a tie (1/2 each) make one tie per pair


def _negative_loglik(
    params: FloatArray, wins: FloatArray, ties: FloatArray, alpha: float
) -> tuple[float, FloatArray]:
    n = wins.shape[0]
    s, theta = params[:n], params[n]
    nu = np.exp(theta)
    half = 0.5 * (s[:, None] + s[None, :])
    # log D_ij with the largest term factored out (stable for large score gaps)
    top = np.maximum(s[:, None], s[None, :])
    d = np.exp(s[:, None] - top) + np.exp(s[None, :] - top) + nu * np.exp(half - top)
    log_d = top + np.log(d)
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    loglik = float((wins * (s[:, None] - log_d)).sum())
    loglik += float((ties * (theta + half - log_d))[upper].sum())
    loglik -= alpha * float(s @ s)
    # gradient: each comparison of i and j (a win either way or a tie) costs
    # dlogD/ds_i = (pi_i + nu sqrt(pi_i pi_j) / 2) / D_ij
    total = wins + wins.T + ties
    np.fill_diagonal(total, 0.0)
    share_i = (np.exp(s[:, None] - log_d) + 0.5 * nu * np.exp(half - log_d)) * total
    grad_s = wins.sum(axis=1) + 0.5 * ties.sum(axis=1) - share_i.sum(axis=1) - 2.0 * alpha * s
    tie_share = nu * np.exp(half - log_d)
    grad_theta = float(ties[upper].sum() - (total * tie_share)[upper].sum())
    return -loglik, -np.concatenate([grad_s, [grad_theta]])


def davidson_fit(wins: FloatArray, ties: FloatArray, *, alpha: float) -> DavidsonFit:
    """Penalised maximum-likelihood Davidson fit.

    Parameters
    ----------
    wins
        ``W[i, j]`` = (weighted) strict wins of ``i`` over ``j``.
    ties
        ``T[i, j] = T[j, i]`` = (weighted) ties between ``i`` and ``j``.
    alpha
        Ridge penalty on the scores (``c / n_items``).

    Returns
    -------
    DavidsonFit

    Raises
    ------
    EstimationError
        When the optimiser does not converge or the scores are not finite
        (an item that never wins or never loses with ``alpha = 0``).
    """
    n = wins.shape[0]
    if n == 1:
        return DavidsonFit(np.zeros(1), 0.0)
    n_ties = float(np.triu(ties, 1).sum())
    n_all = float(wins.sum()) + n_ties
    start_theta = np.log(max(n_ties, 0.5) / max(n_all - n_ties, 0.5))
    start = np.concatenate([np.zeros(n), [np.clip(start_theta, *_THETA_BOUNDS)]])
    bounds = [(None, None)] * n + [_THETA_BOUNDS]
    from scipy.optimize import minimize  # ~0.3 s of imports: on demand

    result = minimize(
        _negative_loglik,
        start,
        args=(wins, ties, alpha),
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"maxiter": 2000, "gtol": 1e-9, "ftol": 1e-14},
    )
    scores = result.x[:n] - result.x[:n].mean()
    gradient = np.abs(result.jac[:n]).max() if n else 0.0
    scale = max(1.0, n_all / n)
    if not np.all(np.isfinite(scores)) or gradient > 1e-3 * scale:
        raise EstimationError(
            f"Davidson tie model did not converge (largest gradient {gradient:.2g}); "
            "try a larger --reg"
        )
    return DavidsonFit(scores, float(np.exp(result.x[n])))


def davidson_information(fit: DavidsonFit, wins: FloatArray, ties: FloatArray) -> FloatArray:
    """Observed information of the scores with ``theta`` profiled out (no penalty).

    The full ``(n + 1) x (n + 1)`` Hessian of the log-likelihood is taken by
    central differences of the analytic gradient; the scores' information is
    its Schur complement ``H_ss - H_st H_tt^-1 H_ts``.
    """
    n = len(fit.scores)
    theta = np.log(max(fit.nu, np.exp(_THETA_BOUNDS[0])))
    point = np.concatenate([fit.scores, [theta]])
    step = 1e-5
    hessian = np.empty((n + 1, n + 1))
    for k in range(n + 1):
        shift = np.zeros(n + 1)
        shift[k] = step
        up = _negative_loglik(point + shift, wins, ties, 0.0)[1]
        down = _negative_loglik(point - shift, wins, ties, 0.0)[1]
        hessian[:, k] = (up - down) / (2 * step)
    hessian = 0.5 * (hessian + hessian.T)
    h_ss, h_st, h_tt = hessian[:n, :n], hessian[:n, n], hessian[n, n]
    if h_tt <= 1e-12:  # no tie information (no ties, or nu at its bound)
        return h_ss
    return h_ss - np.outer(h_st, h_st) / h_tt
