"""Newton fits of grouped strengths for the ``model`` tiering (docs/tiers-and-audit.md, "How tiers
are decided and audited").

The ``model`` tiering (:mod:`orlbuild.builders.tiering.model_selection`) fits, for every
candidate partition of the score-sorted items into groups, one strength per
group by maximising the method's log-likelihood plus the ridge
``- alpha * ||theta||^2``. Both likelihoods of
:mod:`orlbuild.builders.estimation.likelihoods` collapse onto the groups:

* **Bradley-Terry** (:class:`~orlbuild.builders.estimation.likelihoods.PairwiseLikelihood`):
  with ``G[g, h]`` the wins of group ``g`` over group ``h`` (the count
  matrix summed per pair of groups), the log-likelihood is
  ``sum_gh G[g, h] log sigma(theta_g - theta_h)`` (comparisons within a
  group contribute the constant ``log 1/2`` each);
* **Plackett-Luce** (:class:`~orlbuild.builders.estimation.likelihoods.RankingLikelihood`):
  every choice "the best of the items left" becomes "group ``c`` out of
  ``N[g]`` items left in each group ``g``", with log-probability
  ``theta_c - log sum_g N[g] exp(theta_g)``; identical choices are counted
  once with their multiplicity.

On these ``K``-group forms the gradient and the Hessian are closed-form and
cheap (``K`` is at most the number of items), so the fit is a damped Newton
method: the full Newton step, halved until it lowers the objective enough
(Armijo), until the largest gradient component is at most
:data:`GRADIENT_TOL` or - once the Newton decrement is at the rounding level
of the objective - the gradient stops shrinking. The objective is strictly
convex for ``alpha > 0`` (a concave log-likelihood minus a ridge), so the
optimum is unique and the fitted log-likelihood does not depend on the
starting point beyond rounding (about ``1e-11`` measured) - which is what
lets :func:`~orlbuild.builders.tiering.model_selection.model_tiers` compare partitions
with a tolerance of ``1e-7``, where L-BFGS-B's default stopping rule left
noise of ``1e-7`` between tied partitions. With ``alpha = 0`` the mean
direction, which no likelihood sees, is pinned in the Newton system.

:meth:`GroupedFitter.fit_many` fits all partitions of one search step
together: the pairwise problems with as many groups are stacked and share
every numpy call (``np.linalg.solve`` on a stack solves each system alone),
which is what makes the search fast - the groups are few, so one fit is
mostly call overhead. Ranking problems are fitted one by one. A likelihood
of another kind, or a fit that does not converge in
:data:`MAX_NEWTON_STEPS`, falls back to :func:`scipy.optimize.minimize`
(L-BFGS-B on the item-level likelihood, with tight tolerances).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import expit

from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.estimation.likelihoods import (
    ItemLikelihood,
    PairwiseLikelihood,
    RankingLikelihood,
)
from orlbuild.records import EstimationError

__all__ = ["GRADIENT_TOL", "MAX_NEWTON_STEPS", "GroupedFitter"]

#: Newton converges when the largest component of the objective's gradient is at most this.
GRADIENT_TOL = 1e-10
#: Newton steps before the fit falls back to L-BFGS-B.
MAX_NEWTON_STEPS = 100
_EPS = float(np.finfo(np.float64).eps)

#: ``(logliks, gradients, negative Hessians)`` of some problems of a batch (``rows``) at their
#: strengths ``theta`` (one row per problem).
_Derivatives = Callable[[IntArray, FloatArray], tuple[FloatArray, FloatArray, FloatArray]]


def _pairwise_problems(counts: FloatArray, labels: IntArray, n_groups: int) -> _Derivatives:
    """Bradley-Terry on the group count matrices ``G = A^T C A`` of partitions ``labels[b]``."""
    batch, n = labels.shape
    cells = (
        np.arange(batch)[:, None, None] * (n_groups * n_groups)
        + labels[:, :, None] * n_groups
        + labels[:, None, :]
    ).ravel()
    weights = np.broadcast_to(counts, (batch, n, n)).ravel()
    grouped = np.bincount(cells, weights=weights, minlength=batch * n_groups * n_groups)
    wins = grouped.reshape(batch, n_groups, n_groups)
    diagonal = np.arange(n_groups)

    def derivatives(rows: IntArray, theta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        won = wins[rows]
        lost = won.transpose(0, 2, 1)
        diff = theta[:, :, None] - theta[:, None, :]
        p = expit(diff)
        value = -(won * np.logaddexp(0.0, -diff)).sum(axis=(1, 2))
        grad = (won * (1.0 - p)).sum(axis=2) - (lost * p).sum(axis=2)
        weight = (won + lost) * (p * (1.0 - p))
        hessian = -weight
        hessian[:, diagonal, diagonal] += weight.sum(axis=2)
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
        """Plackett-Luce on the groups (a batch of one partition): each choice is a group out
        of the groups' items left."""
        groups = labels[self.items]
        onehot = np.zeros((len(groups) + 1, n_groups))
        onehot[np.arange(len(groups)), groups] = 1.0
        suffix = np.cumsum(onehot[::-1], axis=0)[::-1]  # items of each group from a position on
        left = suffix[self.choices] - suffix[self.ends]  # integers: exact
        records = np.column_stack([groups[self.choices].astype(np.float64), left])
        unique, weight = np.unique(records, axis=0, return_counts=True)
        chosen = unique[:, 0].astype(np.int64)
        sets = unique[:, 1:]
        weight = weight.astype(np.float64)
        chosen_count = np.bincount(chosen, weights=weight, minlength=n_groups)

        def derivatives(
            rows: IntArray, thetas: FloatArray
        ) -> tuple[FloatArray, FloatArray, FloatArray]:
            theta = thetas[0]
            top = float(theta.max())
            share = sets * np.exp(theta - top)
            total = share.sum(axis=1)
            share /= total[:, None]
            value = float(weight @ (theta[chosen] - top - np.log(total)))
            weighted = share * weight[:, None]
            grad = chosen_count - weighted.sum(axis=0)
            hessian = np.diag(weighted.sum(axis=0)) - share.T @ weighted
            return np.array([value]), grad[None, :], hessian[None, :, :]

        return derivatives


def _newton(
    derivatives: _Derivatives, alpha: float, start: FloatArray
) -> tuple[FloatArray, FloatArray, npt.NDArray[np.bool_]]:
    """Minimise ``-loglik + alpha ||theta||^2`` for every problem of a batch at once.

    Returns the strengths and log-likelihoods, and which problems converged.
    """
    batch, n_groups = start.shape
    ridge = 2.0 * alpha * np.eye(n_groups)
    if alpha == 0.0:  # the likelihoods see only differences: pin the mean direction
        ridge = np.full((n_groups, n_groups), 1.0 / n_groups)
    out_theta = np.array(start, dtype=np.float64)
    out_loglik = np.full(batch, np.nan)
    converged = np.zeros(batch, dtype=bool)

    def state(rows: IntArray, theta: FloatArray) -> _State:
        loglik, grad, hessian = derivatives(rows, theta)
        value = -loglik + alpha * (theta * theta).sum(axis=1)
        return _State(rows, theta, value, loglik, -grad + 2.0 * alpha * theta, hessian)

    def finish(now: _State, keep: npt.NDArray[np.bool_]) -> None:
        out_theta[now.rows[keep]] = now.theta[keep]
        out_loglik[now.rows[keep]] = now.loglik[keep]
        converged[now.rows[keep]] = True

    now = state(np.arange(batch), out_theta.copy())
    for _ in range(MAX_NEWTON_STEPS):
        sizes = np.abs(now.grad).max(axis=1)
        finite = np.isfinite(now.value) & np.isfinite(sizes)
        done = finite & (sizes <= GRADIENT_TOL)
        finish(now, done)
        now = now.take(finite & ~done)
        if not len(now.rows):
            break
        try:
            step = np.linalg.solve(now.hessian + ridge, -now.grad[:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:
            return out_theta, out_loglik, converged  # the rest fall back one by one
        decrement = -(now.grad * step).sum(axis=1)
        usable = np.isfinite(decrement) & (decrement >= 0.0)
        now, step, decrement = now.take(usable), step[usable], decrement[usable]
        sizes = np.abs(now.grad).max(axis=1)
        # the objective cannot tell such a step from rounding, but the quadratic model is
        # exact: full steps while the gradient still shrinks, then stop at its rounding floor
        floor = decrement <= 64.0 * _EPS * np.maximum(1.0, np.abs(now.value))
        accepted = now.take(np.zeros(len(now.rows), dtype=bool))
        if floor.any():
            near = now.take(floor)
            trial = state(near.rows, near.theta + step[floor])
            shrinks = np.abs(trial.grad).max(axis=1) < 0.5 * sizes[floor]
            finish(near, ~shrinks)
            accepted = trial.take(shrinks)
        far = now.take(~floor)
        step, decrement = step[~floor], decrement[~floor]
        t = np.ones(len(far.rows))
        moved = []
        while len(far.rows):  # Armijo backtracking, per problem
            trial = state(far.rows, far.theta + t[:, None] * step)
            good = np.isfinite(trial.value) & (trial.value <= far.value - 1e-4 * t * decrement)
            moved.append(trial.take(good))
            t = t[~good] * 0.5
            far, step, decrement = far.take(~good), step[~good], decrement[~good]
            alive = t >= 1e-12
            far, step, decrement, t = far.take(alive), step[alive], decrement[alive], t[alive]
        now = _State.join([accepted, *moved], n_groups)
    return out_theta, out_loglik, converged


@dataclass(frozen=True)
class _State:
    """Newton's iterate of some problems of a batch."""

    rows: IntArray
    theta: FloatArray
    value: FloatArray
    loglik: FloatArray
    grad: FloatArray
    hessian: FloatArray

    def take(self, keep: npt.NDArray[np.bool_]) -> _State:
        return _State(
            self.rows[keep],
            self.theta[keep],
            self.value[keep],
            self.loglik[keep],
            self.grad[keep],
            self.hessian[keep],
        )

    @staticmethod
    def join(parts: list[_State], n_groups: int) -> _State:
        return _State(
            np.concatenate([p.rows for p in parts]),
            np.concatenate([p.theta for p in parts]).reshape(-1, n_groups),
            np.concatenate([p.value for p in parts]),
            np.concatenate([p.loglik for p in parts]),
            np.concatenate([p.grad for p in parts]).reshape(-1, n_groups),
            np.concatenate([p.hessian for p in parts]).reshape(-1, n_groups, n_groups),
        )


class GroupedFitter:
    """Maximum penalised log-likelihood with one strength per group, for one item likelihood.

    Build it once per query (it holds the likelihood's data in the layout the
    grouped fits need) and call :meth:`fit` per partition.

    Parameters
    ----------
    likelihood
        The item-level log-likelihood (:mod:`orlbuild.builders.estimation.likelihoods`).
    """

    def __init__(self, likelihood: ItemLikelihood) -> None:
        self.likelihood = likelihood
        self._rankings = (
            _Rankings.of(likelihood) if isinstance(likelihood, RankingLikelihood) else None
        )

    def _problems(self, labels: IntArray, n_groups: int) -> _Derivatives | None:
        """The grouped problems of partitions ``labels[b]`` (a batch of one for rankings)."""
        if isinstance(self.likelihood, PairwiseLikelihood):
            counts = np.asarray(self.likelihood.counts, dtype=np.float64)
            return _pairwise_problems(counts, labels, n_groups)
        if self._rankings is not None and len(labels) == 1:
            return self._rankings.problem(labels[0], n_groups)
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
        return self.fit_many([labels], alpha=alpha, starts=[start])[0]

    def fit_many(
        self,
        labels: Sequence[IntArray],
        *,
        alpha: float,
        starts: Sequence[FloatArray | None],
    ) -> list[tuple[float, FloatArray]]:
        """:meth:`fit` of several partitions; those with as many groups share one batched Newton
        fit (pairwise likelihoods; rankings are fitted one by one).

        Parameters
        ----------
        labels
            Per partition, the group ``0..K-1`` of each item.
        alpha
            Ridge ``alpha * ||theta||^2`` on the group strengths.
        starts
            Per partition, starting strengths or ``None`` (zeros).

        Returns
        -------
        list of (float, numpy.ndarray)
            Per partition, the log-likelihood and the group strengths.

        Raises
        ------
        EstimationError
            When both Newton and the L-BFGS-B fallback fail for a partition.
        """
        sizes = [int(lab.max()) + 1 for lab in labels]
        out: list[tuple[float, FloatArray] | None] = [None] * len(labels)
        batched = isinstance(self.likelihood, PairwiseLikelihood)
        for n_groups in sorted(set(sizes)):
            members = [b for b, size in enumerate(sizes) if size == n_groups]
            if n_groups == 1:
                for b in members:
                    zeros = np.zeros(len(labels[b]))
                    out[b] = self.likelihood.log_likelihood(zeros)[0], np.zeros(1)
                continue
            for chunk in [members] if batched else [[b] for b in members]:
                x0 = np.array(
                    [np.zeros(n_groups) if starts[b] is None else starts[b] for b in chunk],
                    dtype=np.float64,
                )
                stack = np.array([labels[b] for b in chunk], dtype=np.int64)
                problems = self._problems(stack, n_groups)
                if problems is not None:
                    theta, loglik, converged = _newton(problems, alpha, x0)
                else:
                    theta, loglik = x0, np.full(len(chunk), np.nan)
                    converged = np.zeros(len(chunk), dtype=bool)
                for row, b in enumerate(chunk):
                    if converged[row]:
                        out[b] = float(loglik[row]), theta[row].copy()
                    else:
                        out[b] = self._scipy_fit(stack[row], n_groups, alpha, x0[row])
        return [fitted for fitted in out if fitted is not None]

    def _scipy_fit(
        self, labels: IntArray, n_groups: int, alpha: float, x0: FloatArray
    ) -> tuple[float, FloatArray]:
        """L-BFGS-B on the item-level likelihood summed per group (the fallback)."""

        def objective(theta: FloatArray) -> tuple[float, FloatArray]:
            value, grad = self.likelihood.log_likelihood(theta[labels])
            group_grad = np.bincount(labels, weights=grad, minlength=n_groups)
            return -value + alpha * float(theta @ theta), -group_grad + 2.0 * alpha * theta

        from scipy.optimize import minimize  # ~0.3 s of imports: on demand

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
