"""Benchmark of ORL builds (issue 4, "Performance").

1. ``bt`` with Fisher tiers on 5,000 queries x 20 items x 200 comparisons
   (1,000,000 comparisons), with the default ``--tiering simultaneous``: wall
   time (target < 60 s), peak resident memory (target < 1 GB), and the share
   of the time spent inside choix versus our own code, measured in the same
   run by timing every call into choix. The build is then written to a fresh
   SQLite store, timed separately. The same data is then built with
   ``--tiering leader`` (the old rule; ``model`` refits per boundary and is
   not meant for this size); the extra cost of ``simultaneous`` is printed
   as the ratio of the two wall times measured side by side (issue 10).
2. ``rank-centrality`` with 200 bootstrap resamples on 500 such queries
   (target < 60 s); the peer measured in the same process is the time inside
   choix's stationary-distribution solver.

Run as a script: ``python tests/benchmarks/bench_build.py [--queries N]``
(pytest does not collect this folder by default; ``pytest tests/benchmarks/bench_build.py``
runs it at full size and asserts the targets).
"""

from __future__ import annotations

import argparse
import functools
import resource
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import insert

from orlbuild.builders import BuildParameters, build_orls
from orlbuild.builders.estimation import bradley_terry, rank_centrality
from orlbuild.store import open_store, upgrade
from orlbuild.store.builds import store_build
from orlbuild.store.models import Collection

N_ITEMS = 20
N_COMPARISONS = 200


def simulated_pairwise(n_queries: int, seed: int = 0) -> pd.DataFrame:
    """``n_queries`` x ``N_COMPARISONS`` Bradley-Terry comparisons of ``N_ITEMS`` items."""
    rng = np.random.default_rng(seed)
    n = n_queries * N_COMPARISONS
    strengths = rng.normal(0.0, 1.0, size=(n_queries, N_ITEMS))
    query = np.repeat(np.arange(n_queries), N_COMPARISONS)
    first = rng.integers(0, N_ITEMS, n)
    second = (first + rng.integers(1, N_ITEMS, n)) % N_ITEMS
    diff = strengths[query, first] - strengths[query, second]
    first_wins = rng.random(n) < 1.0 / (1.0 + np.exp(-diff))
    items = np.array([f"doc{i:02d}" for i in range(N_ITEMS)], dtype=object)
    queries = np.array([f"q{i:05d}" for i in range(n_queries)], dtype=object)
    annotators = np.array([f"a{i}" for i in range(5)], dtype=object)
    return pd.DataFrame(
        {
            "query": queries[query],
            "annotator": annotators[rng.integers(0, 5, n)],
            "winner": items[np.where(first_wins, first, second)],
            "loser": items[np.where(first_wins, second, first)],
            "tie": np.zeros(n, dtype=bool),
        }
    )


class Stopwatch:
    """Accumulates the time spent in wrapped functions."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.calls += 1

        return timed


@contextmanager
def time_inside_choix() -> Iterator[Stopwatch]:
    """Time every call our builders make into choix (patched where they look it up)."""
    watch = Stopwatch()
    choix = bradley_terry.choix
    patched = {
        (choix, name): getattr(choix, name)
        for name in ("ilsr_pairwise_dense", "opt_pairwise", "mm_pairwise")
    }
    patched[(rank_centrality, "statdist")] = rank_centrality.statdist
    for (owner, name), fn in patched.items():
        setattr(owner, name, watch.wrap(fn))
    try:
        yield watch
    finally:
        for (owner, name), fn in patched.items():
            setattr(owner, name, fn)


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(params: BuildParameters, frame: pd.DataFrame, *, store: bool = False) -> dict[str, float]:
    """Build once, timing the whole build and the time inside choix.

    With ``store=True`` the build is also written to a fresh SQLite store and
    that write is timed on its own.
    """
    with time_inside_choix() as watch:
        start = time.perf_counter()
        resolved, outcome = build_orls(frame, params)
        wall = time.perf_counter() - start
    store_s = float("nan")
    if store:
        with tempfile.TemporaryDirectory() as folder:
            url = f"sqlite:///{Path(folder) / 'bench.db'}"
            upgrade(url)
            engine = open_store(url)
            with engine.begin() as connection:
                connection.execute(insert(Collection).values(name="default"))
            start = time.perf_counter()
            store_build(
                engine,
                collection="default",
                parameters=resolved.to_json(),
                outcome=outcome,
                batches=[],
            )
            store_s = time.perf_counter() - start
            engine.dispose()
    assert not outcome.failures and len(outcome.orls) == frame["query"].nunique()
    tiers = np.mean([len(o.tiers) for o in outcome.orls.values()])
    return {
        "wall_s": wall,
        "choix_s": watch.seconds,
        "choix_calls": watch.calls,
        "ours_s": wall - watch.seconds,
        "mean_tiers": float(tiers),
        "store_s": store_s,
        "rows": sum(len(o.scores) + len(o.decisions) for o in outcome.orls.values()),
    }


def report(title: str, figures: dict[str, float], n_queries: int) -> None:
    share = figures["choix_s"] / figures["wall_s"]
    print(
        f"{title}: {figures['wall_s']:.1f} s wall for {n_queries} queries "
        f"({n_queries / figures['wall_s']:.0f} queries/s, "
        f"{n_queries * N_COMPARISONS / figures['wall_s']:,.0f} comparisons/s); "
        f"inside choix {figures['choix_s']:.1f} s ({figures['choix_calls']:.0f} calls) = "
        f"{share:.0%} of the time, our code {figures['ours_s']:.1f} s = {1 - share:.0%}; "
        f"ratio choix/ours = {figures['choix_s'] / figures['ours_s']:.2f}; "
        f"mean tiers per query {figures['mean_tiers']:.1f}; peak RSS {peak_rss_mb():.0f} MB"
    )
    if np.isfinite(figures["store_s"]):
        print(
            f"  storing it in SQLite: {figures['store_s']:.1f} s for {figures['rows']:,.0f} rows "
            f"(entries + tie decisions) = {figures['store_s'] / figures['wall_s']:.2f} x the build"
        )


def bench_bt_fisher(n_queries: int = 5000) -> dict[str, float]:
    """Scenario 1, and its peer with the leader rule on the same data."""
    frame = simulated_pairwise(n_queries)
    figures = run(BuildParameters(source="pairwise", method="bt"), frame, store=True)
    report("bt + Fisher, --tiering simultaneous", figures, n_queries)
    figures["peak_rss_mb"] = peak_rss_mb()
    leader = run(BuildParameters(source="pairwise", method="bt", tiering="leader"), frame)
    report("bt + Fisher, --tiering leader (same data)", leader, n_queries)
    extra = figures["wall_s"] - leader["wall_s"]
    print(
        f"  simultaneous / leader wall time = {figures['wall_s'] / leader['wall_s']:.2f} "
        f"({extra:+.1f} s for the max-t critical values, "
        f"{1000 * extra / n_queries:.1f} ms per query)"
    )
    figures["leader_wall_s"] = leader["wall_s"]
    return figures


def bench_bt_reliability(n_queries: int = 5000) -> dict[str, float]:
    """Scenario 1 with ``--annotators reliability`` (Crowd-BT: the joint fit of every
    annotator's reliability, then the per-query builds and the leave-one-annotator-out
    audit of its 5 annotators), against ``equal`` on the same data (issue 20)."""
    frame = simulated_pairwise(n_queries)
    equal = run(BuildParameters(source="pairwise", method="bt"), frame)
    report("bt + Fisher, --annotators equal", equal, n_queries)
    reliable = run(BuildParameters(source="pairwise", method="bt", annotators="reliability"), frame)
    report("bt + Fisher, --annotators reliability (same data)", reliable, n_queries)
    print(f"  reliability / equal wall time = {reliable['wall_s'] / equal['wall_s']:.2f}")
    return reliable


def bench_rank_centrality_bootstrap(n_queries: int = 500) -> dict[str, float]:
    """Scenario 2."""
    frame = simulated_pairwise(n_queries, seed=1)
    params = BuildParameters(source="pairwise", method="rank-centrality", bootstrap=200)
    figures = run(params, frame)
    report("rank-centrality + 200 bootstrap resamples", figures, n_queries)
    return figures


def test_bt_fisher_5000_queries_under_60s_and_1gb() -> None:
    figures = bench_bt_fisher()
    assert figures["wall_s"] < 60
    assert figures["peak_rss_mb"] < 1024


def test_rank_centrality_bootstrap_500_queries_under_60s() -> None:
    assert bench_rank_centrality_bootstrap()["wall_s"] < 60


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=5000, help="queries of scenario 1")
    parser.add_argument("--rc-queries", type=int, default=500, help="queries of scenario 2")
    parser.add_argument(
        "--reliability", action="store_true", help="also --annotators reliability vs equal"
    )
    args = parser.parse_args()
    bench_bt_fisher(args.queries)
    bench_rank_centrality_bootstrap(args.rc_queries)
    if args.reliability:
        bench_bt_reliability(args.queries)
