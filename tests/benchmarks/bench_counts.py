"""Counted pairwise rows: a count table of 1,000,000 comparisons builds as weights (issue 20).

50 queries x 20 items, 20,000 Bradley-Terry comparisons per query, given
once as a count table (one row per query, winner, loser with its ``count``:
about 19,000 rows) and once expanded (1,000,000 rows). Both are built with
the default ``bt`` (Fisher, simultaneous, backed boundaries); the ORLs must be
identical, and the counted build is timed against the expanded one.

Run: ``python tests/benchmarks/bench_counts.py [--queries N]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from orlbuild.builders import BuildParameters, build_orls

N_ITEMS = 20
PER_QUERY = 20_000


def count_table(n_queries: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    first, second = np.triu_indices(N_ITEMS, 1)
    for q in range(n_queries):
        strength = rng.normal(0.0, 1.0, N_ITEMS)
        per_pair = rng.multinomial(PER_QUERY, np.full(len(first), 1.0 / len(first)))
        p = 1.0 / (1.0 + np.exp(strength[second] - strength[first]))
        wins = rng.binomial(per_pair, p)
        for a, b, w, n in zip(first, second, wins, per_pair, strict=True):
            rows.append((f"q{q:03d}", f"d{a:02d}", f"d{b:02d}", int(w)))
            rows.append((f"q{q:03d}", f"d{b:02d}", f"d{a:02d}", int(n - w)))
    frame = pd.DataFrame(rows, columns=["query", "winner", "loser", "count"])
    return frame[frame["count"] > 0].reset_index(drop=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    counted = count_table(args.queries)
    expanded = counted.loc[counted.index.repeat(counted["count"])].drop(columns="count")
    params = BuildParameters(source="pairwise")
    start = time.perf_counter()
    _, from_counts = build_orls(counted, params)
    t_counted = time.perf_counter() - start
    start = time.perf_counter()
    _, from_rows = build_orls(expanded.reset_index(drop=True), params)
    t_expanded = time.perf_counter() - start
    same = all(from_counts.orls[q].tiers == o.tiers for q, o in from_rows.orls.items())
    print(
        f"{int(counted['count'].sum()):,} comparisons: {len(counted):,} counted rows "
        f"{t_counted:.2f} s, {len(expanded):,} expanded rows {t_expanded:.2f} s "
        f"(ratio {t_expanded / t_counted:.1f}x), identical ORLs: {same} (loaded machine)"
    )


if __name__ == "__main__":
    main()
