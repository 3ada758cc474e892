"""Cut probabilities and partitions drawn from the ``posterior`` tiering's posterior, many queries
at once (docs/planning.md, "Planning for `--tiering posterior`").

The posterior over contiguous partitions of a query's sorted items is the one of
:mod:`orlbuild.builders.tiering.posterior`: segment terms ``L[s, e]``
(:func:`~orlbuild.builders.tiering.posterior.segment_log_marginals`), forward sums ``F[e]``
over the partitions of the items before ``e`` and backward sums ``B[s]`` over those from
``s``. Here the same sums are taken over a stack of queries of one size:

* :func:`cut_probabilities` - the posterior probability ``c_k = 1 - P_same(k - 1, k)``
  that a cut lies before sorted item ``k``: ``exp(F[k] + B[k] - F[n])``;
* :func:`sample_partitions` - partitions drawn exactly from the posterior by backward
  sampling: the last segment ``[s, n)`` is drawn with probability proportional to
  ``exp(F[s] + L[s, n])``, then the segment ending at ``s``, and so on down to 0
  (the Gumbel-max trick draws every query and every draw in one array operation).
"""

from __future__ import annotations

import numpy as np

from orlbuild.builders.arrays import FloatArray
from orlbuild.builders.tiering.posterior import (
    PosteriorPrior,
    _backward,
    _forward,
    segment_log_marginals,
)

__all__ = ["cut_probabilities", "sample_partitions"]


def _check(y: FloatArray, v: FloatArray) -> tuple[FloatArray, FloatArray]:
    y2, v2 = np.atleast_2d(np.asarray(y, dtype=np.float64)), np.atleast_2d(np.asarray(v))
    if y2.shape != v2.shape or y2.shape[-1] < 2:
        raise ValueError(f"y and v must be (Q, n) with n >= 2, got {y2.shape} and {v2.shape}")
    return y2, v2.astype(np.float64)


def cut_probabilities(y: FloatArray, v: FloatArray, prior: PosteriorPrior) -> FloatArray:
    """Posterior probability of a cut before each sorted item ``1 .. n - 1``.

    Parameters
    ----------
    y, v
        ``(Q, n)`` scores sorted best first and their item variances (one query: ``(n,)``).
    prior
        The empirical-Bayes prior.

    Returns
    -------
    numpy.ndarray
        ``(Q, n - 1)``: ``c_k = 1 - P_same(k - 1, k)``, equal to the first off-diagonal of
        :func:`~orlbuild.builders.tiering.posterior.same_segment_probability` subtracted from 1.
    """
    y2, v2 = _check(y, v)
    marginals = segment_log_marginals(y2, v2, lam=prior.lam, tau=prior.tau)
    fwd, bwd = _forward(marginals), _backward(marginals)
    log_cut = fwd[:, 1:-1] + bwd[:, 1:-1] - fwd[:, -1:]
    return np.clip(np.exp(log_cut), 0.0, 1.0)


def sample_partitions(
    y: FloatArray,
    v: FloatArray,
    prior: PosteriorPrior,
    rng: np.random.Generator,
    draws: int = 1,
) -> np.ndarray:
    """Partitions of the sorted items drawn from the posterior by backward sampling.

    Parameters
    ----------
    y, v
        ``(Q, n)`` scores sorted best first and their item variances.
    prior
        The empirical-Bayes prior.
    rng
        Source of the draws.
    draws
        Partitions per query.

    Returns
    -------
    numpy.ndarray
        ``(Q, draws, n - 1)`` booleans: entry ``k - 1`` is true when the drawn partition
        cuts before sorted item ``k``. The share of draws cutting at ``k`` converges to
        :func:`cut_probabilities`.
    """
    y2, v2 = _check(y, v)
    q, n = y2.shape
    marginals = segment_log_marginals(y2, v2, lam=prior.lam, tau=prior.tau)
    fwd = _forward(marginals)
    # logits[q, s, e] = F[s] + L[s, e]: the segment [s, e) closes the partition of [0, e)
    logits = fwd[:, :, None] + marginals
    cuts = np.zeros((q, draws, n + 1), dtype=bool)
    end = np.full((q, draws), n, dtype=np.int64)
    rows = np.arange(q)[:, None]
    for _ in range(n):
        live = end > 0
        if not live.any():
            break
        column = logits[rows, :, end]  # (Q, draws, n + 1): logits of every start s
        noisy = column + rng.gumbel(size=column.shape)
        start = np.argmax(noisy, axis=-1)
        start = np.where(live, start, 0)
        np.put_along_axis(cuts, start[..., None], live[..., None], axis=-1)
        end = start
    return cuts[:, :, 1:n]
