"""Benchmark: power/stability analysis at the paper's scale, against a per-pair loop.

Paper scale (docs/comparing-systems.md, "Comparing many systems"; issue 5): 5,000 queries, 12
systems (66 pairs), 300 subsamples per budget, 1,000 permutations, budgets 25..500 step 25, one
measure; it must finish in under 2 minutes on a 2-core machine.

The peer is the straightforward implementation: for every subsample and every
pair, a fresh ``(B, n)`` sign matrix and the flipped means of that pair alone.
Both run on the same reduced problem in this process, and the ratio of their
times is printed. Run as a script (``python tests/benchmarks/bench_power.py``,
``--quick`` for a smaller paper-scale run) or with pytest.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scoring.statistics import power_analysis

PAPER = {"n_queries": 5000, "n_systems": 12, "subsamples": 300, "permutations": 1000}
PAPER_BUDGETS = list(range(25, 501, 25))
REDUCED = {"subsamples": 20, "permutations": 1000, "budgets": [100, 200]}
LIMIT_SECONDS = 120.0


def simulated_scores(n_queries: int, n_systems: int, seed: int = 0) -> np.ndarray:
    """Per-query scores in [0, 1]: shared query difficulty, small system effects, noise."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0.5, 0.25, size=(n_queries, 1))
    effects = np.linspace(0.0, 0.05, n_systems)
    return np.clip(difficulty + effects + rng.normal(0, 0.15, (n_queries, n_systems)), 0.0, 1.0)


def per_pair_loop_power(
    scores: np.ndarray, budgets: list[int], subsamples: int, permutations: int, seed: int
) -> np.ndarray:
    """Median power per budget, one pair and one sign matrix at a time (the peer).

    Does the same work as :func:`power_analysis`: the all-query test of every
    pair, then for each budget and subsample one query subset shared by all pairs.
    """
    rng = np.random.default_rng(seed)
    n_queries, n_systems = scores.shape
    pairs = [(a, b) for a in range(n_systems) for b in range(a + 1, n_systems)]

    def pvalue(diffs: np.ndarray) -> float:
        signs = rng.choice([-1.0, 1.0], size=(permutations, diffs.size))
        flipped = np.abs((signs * diffs).mean(axis=1))
        count = np.count_nonzero(flipped >= abs(diffs.mean()) - 1e-12)
        return (1 + count) / (permutations + 1)

    for a, b in pairs:
        pvalue(scores[:, a] - scores[:, b])
    medians = []
    for budget in budgets:
        rejections = np.zeros(len(pairs))
        for _ in range(subsamples):
            subset = rng.choice(n_queries, size=budget, replace=False)
            for k, (a, b) in enumerate(pairs):
                rejections[k] += pvalue(scores[subset, a] - scores[subset, b]) < 0.05
        medians.append(float(np.median(rejections / subsamples)))
    return np.array(medians)


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far (MiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(quick: bool = False) -> dict[str, float]:
    """Time the reduced problem both ways and the paper-scale analysis; print the figures."""
    scores = simulated_scores(PAPER["n_queries"], PAPER["n_systems"])
    n_pairs = PAPER["n_systems"] * (PAPER["n_systems"] - 1) // 2

    start = time.perf_counter()
    loop_median = per_pair_loop_power(scores, seed=1, **REDUCED)  # type: ignore[arg-type]
    loop_seconds = time.perf_counter() - start
    start = time.perf_counter()
    fast = power_analysis(scores, seed=1, **REDUCED)  # type: ignore[arg-type]
    fast_seconds = time.perf_counter() - start
    print(
        f"reduced problem ({n_pairs} pairs, budgets {REDUCED['budgets']}, "
        f"{REDUCED['subsamples']} subsamples, {REDUCED['permutations']} permutations):"
    )
    print(f"  per-pair loop  {loop_seconds:7.2f} s   median power {np.round(loop_median, 3)}")
    print(f"  vectorised     {fast_seconds:7.2f} s   median power {np.round(fast.power_median, 3)}")
    print(f"  speed-up       {loop_seconds / fast_seconds:7.1f} x")

    subsamples = 30 if quick else PAPER["subsamples"]
    start = time.perf_counter()
    result = power_analysis(
        scores,
        budgets=PAPER_BUDGETS,
        subsamples=subsamples,
        permutations=PAPER["permutations"],
        seed=2,
    )
    paper_seconds = time.perf_counter() - start
    tests = len(PAPER_BUDGETS) * subsamples + 1
    print(
        f"paper scale ({PAPER['n_queries']} queries, {n_pairs} pairs, {subsamples} subsamples, "
        f"{PAPER['permutations']} permutations, {len(PAPER_BUDGETS)} budgets):"
    )
    rate = tests / paper_seconds
    print(f"  {paper_seconds:.1f} s (limit {LIMIT_SECONDS:.0f} s), {rate:.0f} all-pair tests/s")
    print(f"  N80 {result.n80}, tau80 budget {result.tau80_budget}, AUC_tau {result.auc_tau:.3f}")
    print(f"  peak RSS {peak_rss_mib():.0f} MiB")
    return {
        "loop_seconds": loop_seconds,
        "fast_seconds": fast_seconds,
        "paper_seconds": paper_seconds,
        "subsamples": subsamples,
    }


def test_paper_scale_power_is_fast() -> None:
    figures = run()
    assert figures["paper_seconds"] < LIMIT_SECONDS
    assert figures["fast_seconds"] < figures["loop_seconds"]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="30 subsamples instead of 300")
    run(quick=parser.parse_args().quick)
