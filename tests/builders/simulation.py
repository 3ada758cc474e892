"""Seeded generators of judgments from a Bradley-Terry model with known tiers.

The simulator lives in the package (:mod:`orlbuild.builders.calibration.simulation`, also
behind ``orlbuild calibrate``); the tests import it from here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from orlbuild.builders.calibration.simulation import (
    simulate_pairwise,
    simulate_round_robin,
    tiered_strengths,
)

__all__ = ["drawn_preferences", "simulate_pairwise", "simulate_round_robin", "tiered_strengths"]


def drawn_preferences(
    rng: np.random.Generator,
    strength: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    names: np.ndarray,
    *,
    annotator: str,
    tie_share: float = 0.0,
) -> pd.DataFrame:
    """One query's judgments of the pairs ``(first[k], second[k])``, each won as Bradley-Terry
    with ``strength`` says; with ``tie_share``, that share of the rows (drawn after the
    winners) is flagged a tie."""
    first_wins = rng.random(len(first)) < 1.0 / (1.0 + np.exp(strength[second] - strength[first]))
    ties = (rng.random(len(first)) < tie_share).astype(int) if tie_share else 0
    return pd.DataFrame(
        {
            "query": "q",
            "annotator": annotator,
            "winner": names[np.where(first_wins, first, second)],
            "loser": names[np.where(first_wins, second, first)],
            "tie": ties,
        }
    )
