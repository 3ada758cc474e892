"""Seeded generators of judgments from a Bradley-Terry model with known tiers."""

from __future__ import annotations

import numpy as np
import pandas as pd


def tiered_strengths(tier_sizes: list[int], gap: float) -> tuple[np.ndarray, np.ndarray]:
    """True log-strengths (tier k has ``-gap * k``) and true tier ranks (1 best)."""
    ranks = np.repeat(np.arange(1, len(tier_sizes) + 1), tier_sizes)
    return -gap * (ranks - 1).astype(float), ranks


def simulate_pairwise(
    rng: np.random.Generator,
    strengths: np.ndarray,
    n_comparisons: int,
    *,
    query: str = "q",
    n_annotators: int = 3,
) -> pd.DataFrame:
    """Comparisons of uniformly drawn pairs, outcomes drawn from Bradley-Terry."""
    n = len(strengths)
    first = rng.integers(0, n, n_comparisons)
    second = (first + rng.integers(1, n, n_comparisons)) % n
    p_first = 1.0 / (1.0 + np.exp(strengths[second] - strengths[first]))
    first_wins = rng.random(n_comparisons) < p_first
    winners = np.where(first_wins, first, second)
    losers = np.where(first_wins, second, first)
    return pd.DataFrame(
        {
            "query": query,
            "annotator": [f"a{k}" for k in rng.integers(0, n_annotators, n_comparisons)],
            "winner": [f"d{i:02d}" for i in winners],
            "loser": [f"d{i:02d}" for i in losers],
            "tie": 0,
        }
    )
