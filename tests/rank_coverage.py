"""Simulated panels for the coverage of simultaneous rank intervals (shared by the
seeded test and ``tests/benchmarks/bench_rank_intervals.py``).

A panel has ``m`` systems in groups of three with equal true means (ties are
the hard case: any rejection inside a group is an error), groups ``spacing``
apart, scored on ``n`` queries: score = true mean + query effect + noise.
An interval set *covers* when every system's interval holds every rank its
ties allow, ``[1 + #{theta_k > theta_j}, m - #{theta_k < theta_j}]``, which
is what :mod:`scoring.statistics.rank_intervals` promises with probability
at least ``1 - alpha``.
"""

from __future__ import annotations

import numpy as np

from scoring.statistics.rank_intervals import system_rank_intervals


def true_means(m: int, spacing: float) -> np.ndarray:
    """Groups of three equal means, ``spacing`` apart (best last)."""
    return spacing * (np.arange(m) // 3).astype(np.float64)


def covers(lower: np.ndarray, upper: np.ndarray, theta: np.ndarray) -> bool:
    """Whether every interval holds every rank its ties allow."""
    best = 1 + (theta[None, :] > theta[:, None]).sum(axis=1)
    worst = theta.size - (theta[None, :] < theta[:, None]).sum(axis=1)
    return bool(np.all((lower <= best) & (upper >= worst)))


def coverage(
    m: int,
    simulations: int,
    *,
    n_queries: int = 50,
    spacing: float = 0.03,
    permutations: int = 1000,
    seed: int = 0,
) -> tuple[float, float]:
    """Share of simulated panels covered, and the mean interval width (in ranks)."""
    rng = np.random.default_rng(seed)
    theta = true_means(m, spacing)
    hits, widths = 0, 0.0
    for sim in range(simulations):
        noise = rng.normal(0.0, 0.1, size=(n_queries, m))
        scores = theta + rng.normal(0.0, 0.2, size=(n_queries, 1)) + noise
        result = system_rank_intervals(scores, permutations=permutations, rng=seed * 100_003 + sim)
        hits += covers(result.lower, result.upper, theta)
        widths += float(np.mean(result.upper - result.lower + 1))
    return hits / simulations, widths / simulations
