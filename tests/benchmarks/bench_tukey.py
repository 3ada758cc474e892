"""Benchmark: randomized Tukey HSD for 63 systems x 50 queries x 10,000 permutations.

Issue 15's target: under 5 s on this (2-core, shared) machine, for both forms:
``max-t`` (studentized step-down, the default for 3+ systems) and
``tukey-hsd`` (single-step range). The peers run side by side on the same panel
in this process, and the ratios of the times are printed (robust to the
machine's load):

* the paired sign-flip test of all 1,953 pairs with the same 10,000 draws;
* the sign-flip test with Holm at the flips it needs to be able to reject
  (390,600: the smallest Holm-adjusted p-value ``1953 / (B + 1)`` below 0.005),
  which is what ``--test randomization`` runs on this panel.

``--power`` adds the power analysis of that panel (budgets 10/25/50, 100
subsets each, 1,000 draws) under each test: the share of pairs significant on
all queries, the median and 90th percentile power@50, and the time.

Run as a script (``python tests/benchmarks/bench_tukey.py [--power]``) or with pytest.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scoring.statistics import (
    max_t_pvalues,
    pairwise_randomization_pvalues,
    plan_test,
    power_analysis,
    tukey_hsd_pvalues,
)

N_SYSTEMS, N_QUERIES, PERMUTATIONS = 63, 50, 10_000
LIMIT_SECONDS = 5.0


def simulated_scores(seed: int = 0) -> np.ndarray:
    """Per-query scores in [0, 1]: query difficulty, system effects 0..0.5, noise."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0.0, 0.15, size=(N_QUERIES, 1))
    effects = np.linspace(0.1, 0.6, N_SYSTEMS)
    noise = rng.normal(0.0, 0.25, size=(N_QUERIES, N_SYSTEMS))
    return np.clip(difficulty + effects + noise, 0.0, 1.0)


def timed(function: object, *args: object, **kwargs: object) -> tuple[float, np.ndarray]:
    """Seconds and result of one call."""
    start = time.perf_counter()
    result = function(*args, **kwargs)  # type: ignore[operator]
    return time.perf_counter() - start, result


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far (MiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run() -> dict[str, float]:
    """Time max-T, Tukey HSD and both sign-flip peers on one panel; print the figures."""
    scores = simulated_scores()
    pairs = np.triu_indices(N_SYSTEMS, k=1)
    max_t_seconds, max_t = timed(max_t_pvalues, scores, pairs, permutations=PERMUTATIONS, rng=1)
    max_t_rss = peak_rss_mib()
    tukey_seconds, tukey = timed(tukey_hsd_pvalues, scores, pairs, permutations=PERMUTATIONS, rng=1)
    tukey_rss = peak_rss_mib()
    same_seconds, _ = timed(
        pairwise_randomization_pvalues, scores, pairs, permutations=PERMUTATIONS, rng=1
    )
    raised = plan_test(
        "randomization",
        "holm",
        n_systems=N_SYSTEMS,
        n_queries=N_QUERIES,
        permutations=1000,
        alpha=0.05,
    ).permutations
    assert raised is not None
    holm_seconds, _ = timed(
        pairwise_randomization_pvalues, scores, pairs, permutations=raised, rng=1
    )
    n_pairs = pairs[0].size
    print(f"{N_SYSTEMS} systems ({n_pairs} pairs) x {N_QUERIES} queries")
    print(
        f"  max-T step-down, {PERMUTATIONS:,} permutations {max_t_seconds:6.2f} s "
        f"(limit {LIMIT_SECONDS:.0f} s), peak RSS {max_t_rss:.0f} MiB, "
        f"{np.count_nonzero(max_t < 0.05)} pairs significant "
        f"(max-T / Tukey HSD = {max_t_seconds / tukey_seconds:.2f}, "
        f"max-T / raised sign flips = {max_t_seconds / holm_seconds:.3f})"
    )
    print(
        f"  Tukey HSD, {PERMUTATIONS:,} permutations     {tukey_seconds:6.2f} s "
        f"(limit {LIMIT_SECONDS:.0f} s), peak RSS {tukey_rss:.0f} MiB, "
        f"{np.count_nonzero(tukey < 0.05)} pairs significant"
    )
    print(
        f"  sign flips, {PERMUTATIONS:,} flips           {same_seconds:6.2f} s "
        f"(Tukey / sign flips = {tukey_seconds / same_seconds:.2f})"
    )
    print(
        f"  sign flips + Holm, {raised:,} flips    {holm_seconds:6.2f} s "
        f"(Tukey / raised sign flips = {tukey_seconds / holm_seconds:.3f})"
    )
    return {
        "max_t_seconds": max_t_seconds,
        "tukey_seconds": tukey_seconds,
        "same_seconds": same_seconds,
        "holm_seconds": holm_seconds,
    }


def power_figures() -> dict[str, float]:
    """Power analysis of the panel under each test, side by side; seconds per test."""
    scores = simulated_scores()
    seconds = {}
    print("power analysis, budgets 10/25/50, 100 subsets each, 1,000 draws:")
    for test in ("max-t", "tukey-hsd", "randomization"):
        start = time.perf_counter()
        result = power_analysis(
            scores, budgets=[10, 25, 50], subsamples=100, permutations=1000, test=test, seed=1
        )
        seconds[test] = time.perf_counter() - start
        print(
            f"  {test:<14} {seconds[test]:6.2f} s, significant on all queries "
            f"{result.discriminative_power:.0%}, power@50 median {result.power_median[-1]:.2f} "
            f"p90 {result.power_p90[-1]:.2f}, N80 {result.n80 or '-'}"
        )
    ratio = seconds["max-t"] / seconds["randomization"]
    print(f"  max-t / unadjusted sign flips = {ratio:.1f}")
    return seconds


def test_tukey_hsd_is_fast() -> None:
    figures = run()
    assert figures["tukey_seconds"] < LIMIT_SECONDS
    assert figures["max_t_seconds"] < LIMIT_SECONDS
    assert figures["tukey_seconds"] < figures["holm_seconds"]
    assert figures["max_t_seconds"] < figures["holm_seconds"]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--power", action="store_true", help="add the power analysis of the panel")
    arguments = parser.parse_args()
    run()
    if arguments.power:
        power_figures()
