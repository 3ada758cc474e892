"""Time and peak memory of a build's quality report with many annotators (issue 39 item 14).

Simulates ``--annotators`` annotators who each judge ``--per-annotator`` pairs of 10 items
over ``--queries`` queries, and times :func:`orlbuild.builders.audit.quality.build_quality`
twice in one process: with the vectorised pair ends, and with the row-wise
``frame[["winner", "loser"]].min(axis=1)`` it used before (the peer), checking both give
the same report. Peak memory is tracemalloc's (NumPy and pandas report their buffers).
docs/performance.md, "Quality of a build", quotes the figures with those of the whole
``orlbuild quality --format json`` command.

Run as a script: ``python tests/benchmarks/bench_quality.py --annotators 200000``.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script

import orlbuild.builders.audit.quality as quality
from tests.builders.test_quality_scaling import _row_wise_ends


def simulated(
    annotators: int, per_annotator: int, queries: int, seed: int = 1
) -> tuple[pd.DataFrame, dict[str, dict[str, int]]]:
    """Pairwise preferences of many annotators and a ranking of every query's 10 items."""
    rng = np.random.default_rng(seed)
    n = annotators * per_annotator
    items = np.array([f"d{i:02d}" for i in range(10)], dtype=object)
    a = rng.integers(0, 10, n)
    b = (a + rng.integers(1, 10, n)) % 10
    strength = np.linspace(2.0, -2.0, 10)
    won = rng.random(n) < 1.0 / (1.0 + np.exp(strength[b] - strength[a]))
    frame = pd.DataFrame(
        {
            "query": np.array([f"q{i:04d}" for i in range(queries)])[rng.integers(0, queries, n)],
            "annotator": np.repeat([f"a{i:06d}" for i in range(annotators)], per_annotator),
            "winner": np.where(won, items[a], items[b]),
            "loser": np.where(won, items[b], items[a]),
            "tie": 0,
        }
    )
    ranks = {
        f"q{i:04d}": {str(item): k // 3 + 1 for k, item in enumerate(items)} for i in range(queries)
    }
    return frame, ranks


def measure(
    prefs: pd.DataFrame, ranks: dict[str, dict[str, int]]
) -> tuple[float, float, quality.QualityReport]:
    """Seconds, peak GiB above the start, and the report."""
    tracemalloc.start()
    started = time.perf_counter()
    try:
        report = quality.build_quality(prefs, ranks)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return time.perf_counter() - started, peak / 2**30, report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--annotators", type=int, default=200_000)
    parser.add_argument("--per-annotator", type=int, default=2)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--no-peer", action="store_true", help="skip the row-wise peer")
    args = parser.parse_args(argv)
    frame, ranks = simulated(args.annotators, args.per_annotator, args.queries)
    prefs = quality.raw_preferences(frame, "pairwise")
    seconds, peak, report = measure(prefs, ranks)
    print(
        f"{args.annotators:,} annotators, {len(prefs):,} preferences: "
        f"build_quality {seconds:.1f} s, peak {peak:.2f} GiB"
    )
    if args.no_peer:
        return
    vectorised = quality._pair_ends
    quality._pair_ends = _row_wise_ends
    try:
        peer_seconds, peer_peak, peer = measure(prefs, ranks)
    finally:
        quality._pair_ends = vectorised
    pd.testing.assert_frame_equal(report.annotators, peer.annotators)
    pd.testing.assert_frame_equal(report.pairs, peer.pairs)
    print(
        f"row-wise peer {peer_seconds:.1f} s, peak {peer_peak:.2f} GiB: "
        f"{peer_seconds / seconds:.1f} times slower; same report"
    )


if __name__ == "__main__":
    main()
