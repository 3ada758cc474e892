"""Seeded generators of judgments from a Bradley-Terry model with known tiers.

The simulator lives in the package (:mod:`orlbuild.builders.simulation`, also
behind ``orlbuild calibrate``); the tests import it from here.
"""

from __future__ import annotations

from orlbuild.builders.simulation import (
    simulate_pairwise,
    simulate_round_robin,
    tiered_strengths,
)

__all__ = ["simulate_pairwise", "simulate_round_robin", "tiered_strengths"]
