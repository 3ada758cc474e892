"""The full-matrix max-t functions: oracles for the blocked ones of the builds.

They hold the whole ``R x P`` null of a query (``P = n (n - 1) / 2`` pairs), about
6 bytes x draws x n^2 at their peak, so no build uses them; the tests check that
:mod:`orlbuild.builders.tiering.critical_values`'s blocked functions give their critical
values exactly (``tests/builders/test_critical_values.py``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.tiering.critical_values import (
    _stopped,
    _upper_quantile,
    bootstrap_null,
    covariance_null,
)

__all__ = [
    "max_t_critical_from_covariance",
    "null_draws_from_bootstrap",
    "null_draws_from_covariance",
    "single_step_critical",
    "step_down_critical",
]


def null_draws_from_covariance(
    cov: FloatArray, se: FloatArray, *, draws: int, seed: int
) -> tuple[IntArray, IntArray, npt.NDArray[np.float32]]:
    """``|d_ab| / se_ab`` for every pair under ``d ~ N(0, C)``, ``draws`` times.

    Parameters
    ----------
    cov
        ``(n, n)`` covariance of the scores (may be singular: scores are centred).
    se
        ``(n, n)`` standard errors of the differences (``sqrt(C_aa + C_bb - 2 C_ab)``).
    draws
        Monte Carlo draws ``R``; a critical value's level is ``sig`` up to
        about ``sqrt(sig (1 - sig) / R)``.
    seed
        Seed of the draws (the build's seed; see :func:`standard_normal_draws`).

    Returns
    -------
    first, second : numpy.ndarray
        The pairs ``a < b`` with a positive standard error (the family).
    null : numpy.ndarray
        ``(R, P)`` absolute studentized differences.
    """
    null = covariance_null(cov, se, draws=draws, seed=seed)
    return null.first, null.second, null.columns(np.arange(len(null.first)))


def null_draws_from_bootstrap(
    scores: FloatArray, samples: FloatArray, se: FloatArray
) -> tuple[IntArray, IntArray, npt.NDArray[np.float32]]:
    """Studentized bootstrap replicates ``|(d*_ab - d_ab)| / se_ab`` (centred at the estimate).

    Parameters
    ----------
    scores
        Full-data scores.
    samples
        ``(B, n)`` bootstrap scores.
    se
        ``(n, n)`` bootstrap standard deviations of the differences.

    Returns
    -------
    first, second, null
        As :func:`null_draws_from_covariance`, with ``B`` rows.
    """
    null = bootstrap_null(scores, samples, se)
    return null.first, null.second, null.columns(np.arange(len(null.first)))


def single_step_critical(null: npt.NDArray[np.float32], sig: float) -> float:
    """``c``: the ``1 - sig`` quantile of the largest of the ``P`` statistics (``inf`` if P = 0)."""
    if null.shape[1] == 0:
        return float("inf")
    return _upper_quantile(null.max(axis=1), sig)


def step_down_critical(
    null: npt.NDArray[np.float32], observed: FloatArray, sig: float
) -> FloatArray:
    """Romano-Wolf step-down critical value of every pair.

    Pairs are examined by decreasing observed ``|z|``; pair ``j`` is compared
    with the ``1 - sig`` quantile of the largest null statistic over the pairs
    not yet separated (``j`` and after); the first pair that is not beyond its
    critical value stops the procedure, and it and every later pair keep that
    value. The first critical value is the single-step ``c``, so a query whose
    items are all equal is split exactly when the single-step rule splits it;
    later values are smaller, which is where the power comes from (Romano &
    Wolf 2005, Algorithm 2.1; strong family-wise control under subset pivotality,
    which normal scores have).

    Parameters
    ----------
    null
        ``(R, P)`` absolute null statistics.
    observed
        ``(P,)`` observed ``|z|`` of the same pairs.
    sig
        Family-wise level.

    Returns
    -------
    numpy.ndarray
        ``(P,)`` critical value of each pair (nonincreasing along the examination order).
    """
    order = np.argsort(-observed, kind="stable")
    # tail[j] = largest null statistic over the pairs examined at step j or later;
    # rows are contiguous draws (a row loop beats numpy's strided accumulate here)
    tail = null.T[order]
    for step in range(len(order) - 2, -1, -1):
        np.maximum(tail[step], tail[step + 1], out=tail[step])
    k = int(np.ceil((1.0 - sig) * (tail.shape[1] - 1)))
    by_step = np.partition(tail, k, axis=1)[:, k].astype(np.float64)  # every step's quantile
    return _stopped(order, observed, by_step)


def max_t_critical_from_covariance(
    cov: FloatArray, se: FloatArray, *, sig: float, draws: int, seed: int
) -> float:
    """Single-step critical value of ``max_ab |d_ab| / se_ab`` when ``d ~ N(0, C)``
    (:func:`null_draws_from_covariance`, :func:`single_step_critical`)."""
    return single_step_critical(null_draws_from_covariance(cov, se, draws=draws, seed=seed)[2], sig)
