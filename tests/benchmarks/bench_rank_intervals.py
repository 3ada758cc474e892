"""Benchmark: coverage and speed of simultaneous rank intervals for systems.

Issue 21's targets: coverage of the true ranks >= 0.95 (+-0.01) on simulated
panels of 5, 20 and 63 systems over at least 1,000 simulations each, and at
most 1 s for 63 systems x 50 queries at 10,000 draws.

Coverage (``tests/rank_coverage.py``): 50 queries, systems in groups of three
with equal true means (0.03 apart; noise sd 0.1, query effect sd 0.2), 1,000
permutations per panel; a panel counts as covered when every interval holds
every rank its ties allow. Speed: the median of 5 runs of
:func:`~scoring.statistics.rank_intervals.system_rank_intervals` at 10,000
permutations, next to its peer, randomized Tukey HSD on the same panel and
draws (the first step of the step-down), as a ratio.

Run as a script (``python tests/benchmarks/bench_rank_intervals.py
[--simulations N]``) or with pytest (fewer simulations).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rank_coverage import coverage

from scoring.statistics.rank_intervals import system_rank_intervals
from scoring.statistics.tukey import tukey_hsd_pvalues

PANELS = (5, 20, 63)


def speed(repeats: int = 5) -> tuple[float, float]:
    """Median seconds of rank intervals and of Tukey HSD, 63 x 50 x 10,000."""
    rng = np.random.default_rng(0)
    scores = np.linspace(0.0, 0.3, 63) + rng.normal(0.0, 0.1, size=(50, 63))
    pairs = np.triu_indices(63, 1)
    ours, peer = [], []
    for r in range(repeats):
        start = time.perf_counter()
        system_rank_intervals(scores, permutations=10_000, rng=r)
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        tukey_hsd_pvalues(scores, pairs, permutations=10_000, rng=r)
        peer.append(time.perf_counter() - start)
    return statistics.median(ours), statistics.median(peer)


def main(simulations: int) -> None:
    for m in PANELS:
        start = time.perf_counter()
        rate, width = coverage(m, simulations, seed=m)
        print(
            f"{m:2d} systems: coverage {rate:.3f} over {simulations} panels, "
            f"mean width {width:.1f} ranks ({time.perf_counter() - start:.0f} s)"
        )
    ours, peer = speed()
    print(
        f"63 systems x 50 queries x 10,000 draws: {ours:.2f} s "
        f"(Tukey HSD alone {peer:.2f} s, ratio {ours / peer:.2f})"
    )


def test_rank_intervals_benchmark() -> None:
    main(50)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=1000)
    main(parser.parse_args().simulations)
