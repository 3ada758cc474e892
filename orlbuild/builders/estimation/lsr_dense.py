"""choix's dense I-LSR iteration (:func:`choix.ilsr_pairwise_dense`) without its per-step overhead.

Every simulated build fits thousands of small Bradley-Terry models, each in a
dozen LSR steps; for a handful of items the step's cost is all Python and
scipy wrapper overhead (input validation, a ``warnings`` context, ``np.tile``,
``np.diag``), not arithmetic. :func:`ilsr_pairwise_dense` performs the same
floating-point operations in the same order as choix 0.4 (``lsr.py``:
``_init_lsr``, ``lsr_pairwise_dense``, ``_ilsr``; ``utils.py``: ``statdist``,
``exp_transform``, ``log_transform``; ``convergence.py``:
``NormOfDifferenceTest``) and calls the same LAPACK routines (``getrf``,
``trtrs``) with the same arguments, so its scores are bit-identical to
choix's; ``tests/builders/test_lsr_dense.py`` checks that on random and
degenerate count matrices, and that the failures raise the same exceptions.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg.lapack import dgetrf, dtrtrs

from orlbuild.builders.arrays import FloatArray

__all__ = ["ilsr_pairwise_dense", "statdist"]

_add = np.add.reduce


def _mean(values: FloatArray) -> np.float64:
    """``values.mean()`` of a 1-d float64 array: numpy's ``add.reduce`` over the count."""
    return np.float64(_add(values) / len(values))


_ONE = np.ones(1)

_ABSORBING = (
    "stationary distribution could not be computed. "
    "Perhaps the Markov chain has more than one absorbing class?"
)


def statdist(generator: FloatArray) -> FloatArray:
    """The result of ``choix.utils.statdist(generator)`` for a float64 square matrix.

    Parameters
    ----------
    generator
        Infinitesimal generator of a Markov chain (rows sum to zero), ``n >= 2``.

    Returns
    -------
    numpy.ndarray
        The unnormalised stationary distribution (sums to ``n``), bit-identical
        to choix's.

    Raises
    ------
    ValueError
        When the chain has no unique stationary distribution (choix's message).
    """
    n = generator.shape[0]
    # scipy's lu_factor(generator.T): getrf on a copy (its singular warning is not raised here)
    lu, _piv, info = dgetrf(generator.T, overwrite_a=False)
    if info < 0:
        raise ValueError(f"illegal value in {-info}th argument of internal getrf (lu_factor)")
    left = lu[:-1, :-1]
    right = -lu[:-1, -1]
    # scipy's solve_triangular(left, right) (upper, no transpose)
    if left.flags.f_contiguous:
        res, info = dtrtrs(left, right, overwrite_b=False, lower=False, trans=0, unitdiag=False)
    else:
        res, info = dtrtrs(left.T, right, overwrite_b=False, lower=True, trans=1, unitdiag=False)
    if info != 0:
        raise ValueError(_ABSORBING)
    res = np.concatenate((res, _ONE))  # np.append(res, 1.0) without its ravel and asarray
    return np.asarray((n / _add(res)) * res, dtype=np.float64)


def ilsr_pairwise_dense(
    comp_mat: FloatArray, alpha: float = 0.0, max_iter: int = 100, tol: float = 1e-8
) -> FloatArray:
    """The result of ``choix.ilsr_pairwise_dense(comp_mat, alpha, None, max_iter, tol)``.

    Raises
    ------
    RuntimeError
        After ``max_iter`` steps without convergence (choix's message).
    ValueError
        When the chain has no unique stationary distribution (choix's message).
    """
    n = comp_mat.shape[0]
    comp_t = comp_mat.T
    diagonal = np.arange(n) * (n + 1)
    params: FloatArray | None = None
    previous: FloatArray | None = None
    for _ in range(max_iter):
        if params is None:
            ws = np.ones(n)
        else:
            weights = np.exp(params - _mean(params))
            ws = (n / _add(weights)) * weights
        chain = alpha * np.ones((n, n), dtype=float)
        # np.tile(ws, (n, 1)) + its transpose, element by element
        chain += comp_t / (ws[None, :] + ws[:, None])
        # chain -= np.diag(chain.sum(axis=1)): off the diagonal that subtracts 0.0
        chain.flat[diagonal] -= chain.sum(axis=1)
        logs = np.log(statdist(chain))
        params = logs - _mean(logs)
        centred = params - _mean(params)
        if previous is not None:
            dist = _add(np.abs(previous - centred))
            if bool(dist <= tol * len(centred)):
                return params
        previous = centred
    raise RuntimeError(f"Did not converge after {max_iter} iterations")
