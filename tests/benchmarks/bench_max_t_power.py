"""Benchmark: power and calibration of the tests for many systems, side by side.

Issue 15's targets, measured on the same simulated panels for every test:

* **Power**: 20 systems whose true means step evenly over a spread (0.10 to
  0.50), 50 queries, per-query noise sd 0.15; the share of the truly different
  pairs found at alpha = 0.05 by ``max-t`` (studentized step-down randomized
  Tukey HSD, the default for 3+ systems) and ``tukey-hsd`` (single step, range
  of means), both at 1,000 permutations, and by the sign-flip test with Holm at
  the raised 38,000 flips. ``max-t`` must find at least as many as Holm at
  every spread.
* **Calibration**: the share of experiments with any significant pair when
  every system is equal (20 systems; target <= 0.07 at alpha = 0.05), when the
  means are equal but the per-query spreads are not (8 and 20 systems, noise
  sd 0.05 to 0.25), and under a partial null (10 equal systems among 10 that
  differ: the share of experiments with a false rejection among the equal
  pairs).

Run as a script (``python tests/benchmarks/bench_max_t_power.py [experiments [null_experiments]]``,
default 100 experiments per power row and 200 per calibration row) or with
pytest (fewer experiments). The unit tests in
``tests/statistics/test_max_t.py`` run a smaller, seeded version.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from scoring.settings import TestSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scoring.statistics import system_comparison

N_SYSTEMS, N_QUERIES, NOISE = 20, 50, 0.15
SPREADS = (0.10, 0.15, 0.20, 0.30, 0.50)
TESTS = ("max-t", "tukey-hsd", "randomization")
LABELS = {"max-t": "max-T", "tukey-hsd": "Tukey HSD", "randomization": "Holm"}


def spread_panel(rng: np.random.Generator, spread: float, n_systems: int = N_SYSTEMS) -> np.ndarray:
    """True means stepping evenly over ``spread``; shared query difficulty; noise sd 0.15."""
    effects = np.linspace(0.0, spread, n_systems)
    difficulty = rng.normal(0.5, 0.2, size=(N_QUERIES, 1))
    noise = rng.normal(0.0, NOISE, size=(N_QUERIES, n_systems))
    return np.clip(difficulty + effects + noise, 0.0, 1.0)


def significant(scores: np.ndarray, test: str, seed: int) -> np.ndarray:
    """Verdict per pair (upper triangle order) of one test."""
    result = system_comparison(pd.DataFrame(scores), TestSettings(test=test, seed=seed))
    return result.pairs["significant"].to_numpy()


def power_row(spread: float, experiments: int) -> dict[str, float]:
    """Mean share of truly different pairs found, per test, on the same panels."""
    rng = np.random.default_rng(int(spread * 1000))
    found: dict[str, list[float]] = {test: [] for test in TESTS}
    effects = np.linspace(0.0, spread, N_SYSTEMS)
    first, second = np.triu_indices(N_SYSTEMS, k=1)
    different = effects[first] != effects[second]
    for experiment in range(experiments):
        scores = spread_panel(rng, spread)
        for test in TESTS:
            found[test].append(float(significant(scores, test, experiment)[different].mean()))
    return {test: float(np.mean(values)) for test, values in found.items()}


def null_rate(
    make: Callable[[np.random.Generator], np.ndarray],
    false_pairs: np.ndarray | None,
    seed: int,
    experiments: int,
) -> dict[str, float]:
    """Share of experiments with a significant pair among ``false_pairs`` (all when None)."""
    rng = np.random.default_rng(seed)
    hits = dict.fromkeys(TESTS, 0)
    for experiment in range(experiments):
        scores = make(rng)
        for test in TESTS:
            verdicts = significant(scores, test, experiment)
            hits[test] += bool(
                verdicts[false_pairs].any() if false_pairs is not None else verdicts.any()
            )
    return {test: count / experiments for test, count in hits.items()}


def unequal_spreads(n_systems: int) -> Callable[[np.random.Generator], np.ndarray]:
    """Equal means, per-query noise sd from 0.05 to 0.25 across the systems."""

    def make(rng: np.random.Generator) -> np.ndarray:
        difficulty = rng.normal(0.5, 0.2, size=(N_QUERIES, 1))
        sds = np.linspace(0.05, 0.25, n_systems)
        return difficulty + rng.normal(0.0, 1.0, (N_QUERIES, n_systems)) * sds

    return make


def partial_null() -> tuple[Callable[[np.random.Generator], np.ndarray], np.ndarray]:
    """10 equal systems and 10 spread over 0.1 to 0.5; the equal pairs are the true nulls."""
    effects = np.r_[np.zeros(10), np.linspace(0.1, 0.5, 10)]
    first, second = np.triu_indices(N_SYSTEMS, k=1)

    def make(rng: np.random.Generator) -> np.ndarray:
        difficulty = rng.normal(0.5, 0.2, size=(N_QUERIES, 1))
        noise = rng.normal(0.0, NOISE, size=(N_QUERIES, N_SYSTEMS))
        return np.clip(difficulty + effects + noise, 0.0, 1.0)

    return make, effects[first] == effects[second]


def run(experiments: int = 100, null_experiments: int = 200) -> dict[str, dict[str, float]]:
    """Print the power and calibration table; return it."""
    start = time.perf_counter()
    header = "".join(f"{LABELS[t]:>12}" for t in TESTS)
    print(f"power: share of truly different pairs found ({experiments} experiments each)")
    print(f"{'spread':>32}{header}")
    table: dict[str, dict[str, float]] = {}
    for spread in SPREADS:
        row = power_row(spread, experiments)
        table[f"spread {spread:.2f}"] = row
        cells = "".join(f"{row[t]:12.4f}" for t in TESTS)
        print(f"{spread:32.2f}{cells}", flush=True)
    print(f"calibration: share of experiments with a false rejection ({null_experiments} each)")
    make_partial, nulls = partial_null()
    cases = {
        "20 equal systems": (lambda rng: spread_panel(rng, 0.0), None, 2026),
        "8 equal means, unequal spreads": (unequal_spreads(8), None, 5),
        "20 equal means, unequal spreads": (unequal_spreads(20), None, 5),
        "partial null (10 equal of 20)": (make_partial, nulls, 9),
    }
    for name, (make, false_pairs, seed) in cases.items():
        row = null_rate(make, false_pairs, seed, null_experiments)
        table[name] = row
        print(f"{name:>32}" + "".join(f"{row[t]:12.3f}" for t in TESTS), flush=True)
    print(f"({time.perf_counter() - start:.0f} s)")
    return table


def test_max_t_power_and_calibration() -> None:
    table = run(experiments=30, null_experiments=100)
    for spread in SPREADS:
        row = table[f"spread {spread:.2f}"]
        assert row["max-t"] >= row["randomization"]
    assert table["20 equal systems"]["max-t"] <= 0.07


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "experiments", nargs="?", type=int, default=100, help="experiments per power row"
    )
    parser.add_argument(
        "null_experiments", nargs="?", type=int, default=200, help="experiments per calibration row"
    )
    arguments = parser.parse_args()
    run(arguments.experiments, arguments.null_experiments)
