"""Log-likelihoods of item scores with their gradients, for the ``model`` tiering.

* :class:`PairwiseLikelihood` - Bradley-Terry on a count matrix,
  ``sum_ij C_ij log sigma(s_i - s_j)``;
* :class:`RankingLikelihood` - Plackett-Luce on strict rankings, each ranking
  the sequence of choices "first of all, second of the rest, ...".

Both return ``(log-likelihood, gradient)`` so that a grouped fit can hand
them to :func:`scipy.optimize.minimize` (the gradient of a grouped model is
the item gradient summed per group).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from scipy.special import expit

from orlbuild.builders.arrays import FloatArray

__all__ = ["ItemLikelihood", "PairwiseLikelihood", "RankingLikelihood"]


class ItemLikelihood(Protocol):
    """A log-likelihood of item scores.

    What :mod:`orlbuild.builders.tiering.model_selection` needs.
    """

    @property
    def n_observations(self) -> float: ...

    def log_likelihood(self, scores: FloatArray) -> tuple[float, FloatArray]: ...


@dataclass(frozen=True)
class PairwiseLikelihood:
    """Bradley-Terry log-likelihood of ``counts[i, j]`` = times ``i`` beat ``j``."""

    counts: FloatArray

    @property
    def n_observations(self) -> float:
        """Number of comparisons (a tie counts once each way)."""
        return float(self.counts.sum())

    def log_likelihood(self, scores: FloatArray) -> tuple[float, FloatArray]:
        """Log-likelihood and its gradient at ``scores``."""
        diff = scores[:, None] - scores[None, :]
        p = expit(diff)
        value = float(-(self.counts * np.logaddexp(0.0, -diff)).sum())
        grad = (self.counts * (1.0 - p)).sum(axis=1) - (self.counts.T * p).sum(axis=1)
        return value, grad


@dataclass(frozen=True)
class RankingLikelihood:
    """Plackett-Luce log-likelihood of strict rankings (local indices, best first)."""

    n_items: int
    rankings: Sequence[tuple[int, ...]]
    _arrays: list[np.ndarray] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        arrays = [np.asarray(r, dtype=np.int64) for r in self.rankings if len(r) > 1]
        object.__setattr__(self, "_arrays", arrays)

    @property
    def n_observations(self) -> float:
        """Number of choices (a ranking of ``m`` items makes ``m - 1``)."""
        return float(sum(len(r) - 1 for r in self._arrays))

    def log_likelihood(self, scores: FloatArray) -> tuple[float, FloatArray]:
        """Log-likelihood and its gradient at ``scores``."""
        value = 0.0
        grad = np.zeros(self.n_items)
        for idx in self._arrays:
            v = scores[idx]
            suffix = np.logaddexp.accumulate(v[::-1])[::-1]  # log sum exp of v[k:]
            choices = len(v) - 1
            value += float((v[:choices] - suffix[:choices]).sum())
            # d/dv_j: 1 if j was chosen, minus its share of every choice set holding it
            shares = np.cumsum(np.exp(-suffix[:choices]))
            held = shares[np.minimum(np.arange(len(v)), choices - 1)]
            local = -np.exp(v) * held
            local[:choices] += 1.0
            np.add.at(grad, idx, local)
        return value, grad
