"""Calibration: seeded simulations with known tiers, and what planning buys."""
