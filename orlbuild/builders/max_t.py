"""Max-t critical values: family-wise error control over every pair of a query.

The ``simultaneous`` tiering separates an item from its tier leader only when
``|d| / se > c``, where ``c`` is chosen so that, if every item of the query
had the same true strength, the largest studentized difference over *all*
``n (n - 1) / 2`` pairs would exceed ``c`` with probability ``sig``
(README, "How tiers are decided and audited"; the single-step max-T of
Westfall & Young 1993, ch. 2). Any split of an all-equal query needs some
pair beyond ``c``, so the share of all-equal queries with a split is at most
``sig`` up to the Monte Carlo error of ``c``.

* :func:`max_t_critical_from_covariance` - the null distribution is
  ``N(0, C)`` with ``C`` the estimated covariance (Fisher or sandwich): one
  matrix product per query turns ``R`` standard normal draws into the ``R x P``
  studentized pairwise differences.
* :func:`max_t_critical_from_bootstrap` - the studentized bootstrap: the
  replicates centred at the full-data estimate,
  ``max_ab |(d*_ab - d_ab)| / se_ab``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt

from orlbuild.builders.comparisons import FloatArray

__all__ = ["max_t_critical_from_bootstrap", "max_t_critical_from_covariance", "pair_count"]


def pair_count(n_items: int) -> int:
    """The family of the simultaneous rule: every pair, ``n (n - 1) / 2``."""
    return n_items * (n_items - 1) // 2


def _pairs(se: FloatArray) -> tuple[np.ndarray, np.ndarray, FloatArray]:
    """Pairs ``a < b`` with a positive standard error, and those errors."""
    first, second = np.triu_indices(se.shape[0], 1)
    pair_se = se[first, second]
    keep = pair_se > 0
    return first[keep], second[keep], pair_se[keep]


def _upper_quantile(statistics: FloatArray, sig: float) -> float:
    """The ``1 - sig`` quantile, rounded up to an order statistic (numpy's ``higher``)."""
    k = int(np.ceil((1.0 - sig) * (len(statistics) - 1)))
    return float(np.partition(statistics, k)[k])


@lru_cache(maxsize=64)
def standard_normal_draws(draws: int, n_items: int, seed: int) -> npt.NDArray[np.float32]:
    """``(draws, n_items)`` standard normals from ``seed``, shared by the queries of a build
    with ``n_items`` items (each query's critical value keeps its own Monte Carlo error;
    drawing once per size keeps the simulation one matrix product per query)."""
    rng = np.random.default_rng([seed, n_items, 0x6D61785F74])
    # single precision: a quantile needs no more, and the product runs twice as fast
    values = rng.standard_normal((draws, n_items), dtype=np.float32)
    values.flags.writeable = False
    return values


def max_t_critical_from_covariance(
    cov: FloatArray, se: FloatArray, *, sig: float, draws: int, seed: int
) -> float:
    """Critical value of ``max_ab |d_ab| / se_ab`` when ``d ~ N(0, C)``.

    Parameters
    ----------
    cov
        ``(n, n)`` covariance of the scores (may be singular: scores are centred).
    se
        ``(n, n)`` standard errors of the differences (``sqrt(C_aa + C_bb - 2 C_ab)``).
    sig
        Family-wise level, in ``(0, 1)``.
    draws
        Monte Carlo draws ``R``; the level of ``c`` is ``sig`` up to about
        ``sqrt(sig (1 - sig) / R)``.
    seed
        Seed of the draws (the build's seed; see :func:`standard_normal_draws`).

    Returns
    -------
    float
        ``c``; ``inf`` when no pair has a positive standard error.
    """
    first, second, pair_se = _pairs(se)
    if len(pair_se) == 0:
        return float("inf")
    values, vectors = np.linalg.eigh(cov)
    root = vectors * np.sqrt(np.clip(values, 0.0, None))  # cov = root @ root.T
    # column p maps a standard normal draw to (d_a - d_b) / se_ab of pair p
    contrast = (root[first] - root[second]).T / pair_se
    studentized = standard_normal_draws(draws, cov.shape[0], seed) @ contrast.astype(np.float32)
    statistics = np.maximum(studentized.max(axis=1), -studentized.min(axis=1))
    return _upper_quantile(statistics, sig)


def max_t_critical_from_bootstrap(
    scores: FloatArray, samples: FloatArray, se: FloatArray, *, sig: float
) -> float:
    """Critical value from studentized bootstrap replicates.

    Parameters
    ----------
    scores
        Full-data scores (the centre of the replicates).
    samples
        ``(B, n)`` bootstrap scores.
    se
        ``(n, n)`` bootstrap standard deviations of the differences.
    sig
        Family-wise level.

    Returns
    -------
    float
        The ``1 - sig`` quantile of ``max_ab |(d*_ab - d_ab)| / se_ab``
        over the ``B`` replicates (``inf`` when no pair varies).
    """
    first, second, pair_se = _pairs(se)
    if len(pair_se) == 0:
        return float("inf")
    centred = samples - scores[None, :]
    statistics = (np.abs(centred[:, first] - centred[:, second]) / pair_se).max(axis=1)
    return _upper_quantile(statistics, sig)
