"""Bradley-Terry scores of pairwise comparisons through choix, and their information.

The default solver is choix's I-LSR (Maystre & Grossglauser, "Fast and
accurate inference of Plackett-Luce models", NIPS 2015). It is called on the
count matrix (:func:`choix.ilsr_pairwise_dense`), which is the same iteration
as :func:`choix.ilsr_pairwise` on the list of comparisons but vectorised,
through :mod:`orlbuild.builders.estimation.lsr_dense` (choix's iteration, bit-identical,
without its per-step overhead);
``opt`` (:func:`choix.opt_pairwise`) and ``mm`` (:func:`choix.mm_pairwise`,
Hunter 2004) are selectable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import expit

from orlbuild.builders.arrays import FloatArray
from orlbuild.builders.estimation.guarded_fit import fitted_scores
from orlbuild.builders.estimation.lsr_dense import ilsr_pairwise_dense
from orlbuild.records import EstimationError

__all__ = [
    "bradley_terry_information",
    "bradley_terry_pairwise",
    "integer_scale",
    "pairs_from_counts",
    "regularisation_information",
]


def integer_scale(counts: FloatArray) -> float:
    """1 when ``counts`` are whole numbers, 2 when ties make halves of them.

    choix's list solvers (``opt``, ``mm``, ``ep``) take one ``(winner, loser)``
    pair per outcome: a tie's half-wins are entered by doubling every count
    (and the regularisation with it, which leaves the estimate unchanged).

    Raises
    ------
    EstimationError
        For weights that are not multiples of 1/2 (a bootstrap draw never makes them).
    """
    if np.all(counts == np.rint(counts)):
        return 1.0
    if np.all(2 * counts == np.rint(2 * counts)):
        return 2.0
    raise EstimationError("comparison weights must be multiples of 1/2 for this solver")


def pairs_from_counts(counts: FloatArray) -> list[tuple[int, int]]:
    """Expand an integer count matrix into choix's list of ``(winner, loser)`` pairs."""
    winners, losers = np.nonzero(counts)
    repeats = np.rint(counts[winners, losers]).astype(np.int64)
    return list(
        zip(np.repeat(winners, repeats).tolist(), np.repeat(losers, repeats).tolist(), strict=True)
    )


def bradley_terry_pairwise(counts: FloatArray, *, alpha: float, solver: str = "ilsr") -> FloatArray:
    """Maximum-likelihood Bradley-Terry scores (centred log-strengths).

    Parameters
    ----------
    counts
        ``counts[i, j]`` = (weighted) number of times item ``i`` beat item ``j``
        (a tie adds 1/2 each way).
    alpha
        choix's regularisation (``c / n_items`` in a build).
    solver
        ``ilsr``, ``opt`` or ``mm``.

    Returns
    -------
    numpy.ndarray
        One score per item, mean zero; higher is better.

    Raises
    ------
    EstimationError
        When choix does not converge, finds more than one absorbing class, or
        returns non-finite scores (typically an item that never wins or never
        loses with ``alpha = 0``).
    """
    n = counts.shape[0]
    if n == 1:
        return np.zeros(1)
    scale = 1.0 if solver == "ilsr" else integer_scale(counts)
    scaled = scale * alpha
    if solver != "ilsr":
        import choix  # loaded on demand: with scipy.stats and scipy.optimize, ~0.4 s of CPU
    solvers: dict[str, Callable[[], FloatArray]] = {
        "ilsr": lambda: ilsr_pairwise_dense(counts, alpha=alpha, max_iter=500),
        "opt": lambda: choix.opt_pairwise(
            n, pairs_from_counts(scale * counts), alpha=scale * alpha
        ),
        "mm": lambda: choix.mm_pairwise(n, pairs_from_counts(scale * counts), alpha=scaled),
    }
    params = fitted_scores(f"Bradley-Terry ({solver})", solvers[solver])
    if solver == "opt":
        _check_stationary(counts, params, alpha)
    return params


def _check_stationary(counts: FloatArray, params: FloatArray, alpha: float) -> None:
    """choix's ``opt_pairwise`` returns scipy's last iterate even when it did not converge:
    check that the gradient of its penalised log-likelihood vanishes."""
    p = expit(params[:, None] - params[None, :])  # p[i, j] = P(i beats j)
    gradient = (counts * (1.0 - p)).sum(axis=1) - (counts.T * p).sum(axis=1) - 2 * alpha * params
    scale = max(1.0, float(counts.sum()) / len(params))
    if np.max(np.abs(gradient)) > 1e-3 * scale:
        raise EstimationError(
            f"Bradley-Terry (opt) did not converge (largest gradient "
            f"{np.max(np.abs(gradient)):.2g}); try --solver ilsr or a larger --reg"
        )


def bradley_terry_information(scores: FloatArray, pair_counts: FloatArray) -> FloatArray:
    """Observed Fisher information of the Bradley-Terry log-likelihood.

    ``H = sum over comparisons p (1 - p) (e_w - e_l)(e_w - e_l)^T``
    (docs/tiers-and-audit.md, "Build routes"), computed from the symmetric matrix of comparisons per
    pair in two array operations.

    Parameters
    ----------
    scores
        Bradley-Terry scores.
    pair_counts
        ``N[i, j]`` = number of comparisons between ``i`` and ``j`` (``C + C.T``).
    """
    p = expit(scores[:, None] - scores[None, :])
    weights = pair_counts * p * (1.0 - p)
    return np.diag(weights.sum(axis=1)) - weights


def regularisation_information(scores: FloatArray, *, alpha: float, solver: str) -> FloatArray:
    """The information added by choix's regularisation at ``scores``.

    * ``ilsr``: ``alpha`` in the LSR chain is equivalent to
      ``alpha * (w_i + w_j)`` virtual wins each way between every pair
      (``w`` = choix's mean-one weights), so its information is that of those
      virtual comparisons.
    * ``opt``: the penalty ``alpha * ||s||^2`` adds ``2 alpha I``.
    * ``mm``: ``(wins + alpha) / (denominator + alpha)`` is the stationary point
      of a penalty ``alpha * sum(w_i - s_i)``, whose Hessian is ``alpha * diag(w)``.
    """
    n = len(scores)
    if alpha == 0.0:
        return np.zeros((n, n))
    weights = _mean_one(scores)
    if solver == "opt":
        return 2.0 * alpha * np.eye(n)
    if solver == "mm":
        return alpha * np.diag(weights)
    virtual = alpha * (weights[:, None] + weights[None, :]) * 2.0
    np.fill_diagonal(virtual, 0.0)
    return bradley_terry_information(scores, virtual)


def _mean_one(scores: FloatArray) -> FloatArray:
    """Weights ``exp(s)`` rescaled to mean one (choix's ``exp_transform``)."""
    weights = np.exp(scores - scores.mean())
    return np.asarray(len(weights) * weights / weights.sum(), dtype=np.float64)


def __getattr__(name: str) -> Any:
    """``bradley_terry.choix``: the module, imported on first use (tests patch it)."""
    if name == "choix":
        import choix

        return choix
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
