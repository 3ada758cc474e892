"""Newton fits of grouped strengths for the ``model`` tiering (docs/tiers-and-audit.md, "Deciding
tiers").

The ``model`` tiering (:mod:`orlbuild.builders.model_tiers`) fits, for every
candidate partition of the score-sorted items into groups, one strength per
group by maximising the method's log-likelihood plus the ridge
``- alpha * ||theta||^2``. Both likelihoods of
:mod:`orlbuild.builders.likelihoods` collapse onto the groups:

* **Bradley-Terry** (:class:`~orlbuild.builders.likelihoods.PairwiseLikelihood`):
  with ``G[g, h]`` the wins of group ``g`` over group ``h`` (the count
  matrix summed per pair of groups), the log-likelihood is
  ``sum_gh G[g, h] log sigma(theta_g - theta_h)`` (comparisons within a
  group contribute the constant ``log 1/2`` each);
* **Plackett-Luce** (:class:`~orlbuild.builders.likelihoods.RankingLikelihood`):
  every choice "the best of the items left" becomes "group ``c`` out of
  ``N[g]`` items left in each group ``g``", with log-probability
  ``theta_c - log sum_g N[g] exp(theta_g)``; identical choices are counted
  once with their multiplicity.

On these ``K``-group forms the gradient and the Hessian are closed-form and
cheap (``K`` is at most the number of items), so the fit is a damped Newton
method: the full Newton step, halved until the objective does not rise
(Armijo), until the largest gradient component is at most
:data:`GRADIENT_TOL` or the Newton decrement is at the rounding level of the
objective. The objective is strictly convex for ``alpha > 0`` (it is concave
log-likelihood minus a ridge), so the optimum is unique and the fitted
log-likelihood does not depend on the starting point beyond rounding - which
is what lets :func:`~orlbuild.builders.model_tiers.model_tiers` compare
partitions with a tolerance of ``1e-7`` where L-BFGS-B's stopping rule left
noise of about ``1e-8`` and more. A likelihood of another kind, or a Newton
fit that does not converge in :data:`MAX_NEWTON_STEPS`, falls back to
:func:`scipy.optimize.minimize` (L-BFGS-B on the item-level likelihood, with
tight tolerances).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from orlbuild.builders.likelihoods import ItemLikelihood, PairwiseLikelihood, RankingLikelihood
from orlbuild.builders.pairwise_data import FloatArray, IntArray
from orlbuild.records import EstimationError

__all__ = ["GRADIENT_TOL", "MAX_NEWTON_STEPS", "GroupedFitter"]

#: Newton converges when the largest component of the objective's gradient is at most this.
GRADIENT_TOL = 1e-10
#: Newton steps before the fit falls back to L-BFGS-B.
MAX_NEWTON_STEPS = 100
_EPS = float(np.finfo(np.float64).eps)

#: ``(loglik, gradient, negative Hessian)`` of the grouped log-likelihood at ``theta``.
_Derivatives = Callable[[FloatArray], tuple[float, FloatArray, FloatArray]]


def _pairwise_problem(counts: FloatArray, labels: IntArray, n_groups: int) -> _Derivatives:
    """Bradley-Terry on the group count matrix ``G = A^T C A``."""
    cells = (labels[:, None] * n_groups + labels[None, :]).ravel()
    grouped = np.bincount(cells, weights=counts.ravel(), minlength=n_groups * n_groups)
    wins = grouped.reshape(n_groups, n_groups)
    both = wins + wins.T

    def derivatives(theta: FloatArray) -> tuple[float, FloatArray, FloatArray]:
        diff = theta[:, None] - theta[None, :]
        p = expit(diff)
        value = float(-(wins * np.logaddexp(0.0, -diff)).sum())
        grad = (wins * (1.0 - p)).sum(axis=1) - (wins.T * p).sum(axis=1)
        weight = both * p * (1.0 - p)
        hessian = np.diag(weight.sum(axis=1)) - weight
        return value, grad, hessian

    return derivatives


@dataclass(frozen=True)
class _Rankings:
    """Every ranking's items laid end to end, for the suffix counts of each choice."""

    items: IntArray  # item at each position
    choices: IntArray  # positions that are a choice (all but the last of a ranking)
    ends: IntArray  # per choice, the position after its ranking's last item

    @classmethod
    def of(cls, likelihood: RankingLikelihood) -> _Rankings:
        arrays = [np.asarray(r, dtype=np.int64) for r in likelihood.rankings if len(r) > 1]
        if not arrays:
            empty = np.zeros(0, dtype=np.int64)
            return cls(empty, empty, empty)
        lengths = np.array([len(a) for a in arrays], dtype=np.int64)
        ends = np.cumsum(lengths)
        owner = np.repeat(np.arange(len(arrays)), lengths)
        position = np.arange(int(ends[-1]))
        choices = position[position != ends[owner] - 1]
        return cls(np.concatenate(arrays), choices, ends[owner[choices]])

    def problem(self, labels: IntArray, n_groups: int) -> _Derivatives:
        """Plackett-Luce on the groups: each choice is a group out of the groups' items left."""
        groups = labels[self.items]
        onehot = np.zeros((len(groups) + 1, n_groups))
        onehot[np.arange(len(groups)), groups] = 1.0
        suffix = np.cumsum(onehot[::-1], axis=0)[::-1]  # items of each group from a position on
        left = suffix[self.choices] - suffix[self.ends]  # integers: exact
        rows = np.column_stack([groups[self.choices].astype(np.float64), left])
        unique, weight = np.unique(rows, axis=0, return_counts=True)
        chosen = unique[:, 0].astype(np.int64)
        sets = unique[:, 1:]
        weight = weight.astype(np.float64)
        chosen_count = np.bincount(chosen, weights=weight, minlength=n_groups)

        def derivatives(theta: FloatArray) -> tuple[float, FloatArray, FloatArray]:
            top = float(theta.max())
            share = sets * np.exp(theta - top)
            total = share.sum(axis=1)
            share /= total[:, None]
            value = float(weight @ (theta[chosen] - top - np.log(total)))
            weighted = share * weight[:, None]
            grad = chosen_count - weighted.sum(axis=0)
            hessian = np.diag(weighted.sum(axis=0)) - share.T @ weighted
            return value, grad, hessian

        return derivatives


def _newton(
    derivatives: _Derivatives, alpha: float, start: FloatArray
) -> tuple[FloatArray, float] | None:
    """Minimise ``-loglik + alpha ||theta||^2``; ``None`` when it does not converge."""
    n_groups = len(start)
    ridge = 2.0 * alpha * np.eye(n_groups)
    if alpha == 0.0:  # the likelihoods see only differences: pin the mean direction
        ridge = np.full((n_groups, n_groups), 1.0 / n_groups)

    def objective(theta: FloatArray) -> tuple[float, float, FloatArray, FloatArray, FloatArray]:
        loglik, grad, hessian = derivatives(theta)
        value = -loglik + alpha * float(theta @ theta)
        return value, loglik, -grad + 2.0 * alpha * theta, hessian, theta

    state = objective(np.array(start, dtype=np.float64))
    for _ in range(MAX_NEWTON_STEPS):
        f, loglik, g, hessian, theta = state
        if not np.isfinite(f) or not np.all(np.isfinite(g)):
            return None
        size = float(np.abs(g).max())
        if size <= GRADIENT_TOL:
            return theta, loglik
        try:
            step = np.linalg.solve(hessian + ridge, -g)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hessian + ridge, -g, rcond=None)[0]
        decrement = float(-(g @ step))
        if not np.isfinite(decrement) or decrement < 0.0:
            return None
        if decrement <= 64.0 * _EPS * max(1.0, abs(f)):
            # the objective cannot tell the step from rounding, the quadratic model is exact:
            # full steps while the gradient still shrinks, then stop at its rounding floor
            trial = objective(theta + step)
            if not float(np.abs(trial[2]).max()) < 0.5 * size:
                return theta, loglik
            state = trial
            continue
        t = 1.0
        while True:  # Armijo backtracking
            trial = objective(theta + t * step)
            if np.isfinite(trial[0]) and trial[0] <= f - 1e-4 * t * decrement:
                break
            t *= 0.5
            if t < 1e-12:
                return None
        state = trial
    return None


class GroupedFitter:
    """Maximum penalised log-likelihood with one strength per group, for one item likelihood.

    Build it once per query (it holds the likelihood's data in the layout the
    grouped fits need) and call :meth:`fit` per partition.

    Parameters
    ----------
    likelihood
        The item-level log-likelihood (:mod:`orlbuild.builders.likelihoods`).
    """

    def __init__(self, likelihood: ItemLikelihood) -> None:
        self.likelihood = likelihood
        self._rankings = (
            _Rankings.of(likelihood) if isinstance(likelihood, RankingLikelihood) else None
        )

    def _problem(self, labels: IntArray, n_groups: int) -> _Derivatives | None:
        if isinstance(self.likelihood, PairwiseLikelihood):
            counts = np.asarray(self.likelihood.counts, dtype=np.float64)
            return _pairwise_problem(counts, labels, n_groups)
        if self._rankings is not None:
            return self._rankings.problem(labels, n_groups)
        return None

    def fit(
        self, labels: IntArray, *, alpha: float, start: FloatArray | None = None
    ) -> tuple[float, FloatArray]:
        """The maximum log-likelihood with one strength per group.

        Parameters
        ----------
        labels
            Group ``0..K-1`` of each item.
        alpha
            Ridge ``alpha * ||theta||^2`` on the group strengths.
        start
            Starting strengths (only the speed depends on it).

        Returns
        -------
        loglik : float
            The (unpenalised) log-likelihood at the fitted strengths.
        theta : numpy.ndarray
            The group strengths.

        Raises
        ------
        EstimationError
            When both Newton and the L-BFGS-B fallback fail.
        """
        n_groups = int(labels.max()) + 1
        if n_groups == 1:
            return self.likelihood.log_likelihood(np.zeros(len(labels)))[0], np.zeros(1)
        x0 = np.zeros(n_groups) if start is None else np.asarray(start, dtype=np.float64)
        problem = self._problem(labels, n_groups)
        if problem is not None:
            fitted = _newton(problem, alpha, x0)
            if fitted is not None:
                return fitted[1], fitted[0]
        return self._scipy_fit(labels, n_groups, alpha, x0)

    def _scipy_fit(
        self, labels: IntArray, n_groups: int, alpha: float, x0: FloatArray
    ) -> tuple[float, FloatArray]:
        """L-BFGS-B on the item-level likelihood summed per group (the fallback)."""

        def objective(theta: FloatArray) -> tuple[float, FloatArray]:
            value, grad = self.likelihood.log_likelihood(theta[labels])
            group_grad = np.bincount(labels, weights=grad, minlength=n_groups)
            return -value + alpha * float(theta @ theta), -group_grad + 2.0 * alpha * theta

        result = minimize(
            objective,
            x0,
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": 2000, "ftol": 1e-15, "gtol": GRADIENT_TOL},
        )
        if not np.all(np.isfinite(result.x)):
            raise EstimationError(f"grouped fit of {n_groups} groups failed: {result.message}")
        theta = np.asarray(result.x, dtype=np.float64)
        return self.likelihood.log_likelihood(theta[labels])[0], theta
