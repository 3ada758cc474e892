"""Benchmark of per-query work on many cores and on a Dask cluster (README, "Running on
many cores or a cluster").

Measured side by side in one run, on the same generated data:

1. ``rank-centrality`` with 200 bootstrap resamples on 500 queries x 20 items
   x 200 comparisons: serial (``--jobs 1``), a local process pool
   (``--jobs 2``) and a local Dask cluster of two single-threaded worker
   processes. Targets: ``--jobs 2`` at least 1.7x faster than serial, the
   cluster at least 1.5x.
2. ``bt`` on 1,000,000 comparisons (5,000 queries x 20 items x 200), serial
   against ``--jobs 2`` (target 1.5x for the build itself).
3. ``power``: the power analysis of ``orlbuild power`` (Tukey HSD over 6
   systems, 200 queries, budgets 25..200, 300 subsamples of 1,000 draws, two
   measures) through :func:`orlbuild.services.evaluations.power_for_panels`,
   serial against ``--jobs 2`` and the two-worker cluster; the figures must be
   identical.

Every parallel result is checked to be identical to the serial one. The peak
resident memory of this (coordinating) process is printed after each run:
workers hold their own chunks, so it must not grow with their number.

Run as a script: ``python tests/benchmarks/bench_parallel.py [--queries N] [--bt-queries N]
[--power-queries N] [--only build|power]``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import pandas as pd
from bench_build import simulated_pairwise

from orlbuild.builders import BuildParameters, build_orls
from orlbuild.services.evaluations import power_budgets, power_for_panels
from orlbuild.services.executor import Executor, map_ordered, resolve_executor


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed_build(frame, params: BuildParameters, executor: Executor) -> tuple[float, str]:  # type: ignore[no-untyped-def]
    mapper = (
        None
        if executor.jobs == 1 and executor.scheduler is None
        else partial(map_ordered, executor=executor)
    )
    start = time.perf_counter()
    _, outcome = build_orls(frame, params, mapper=mapper)
    seconds = time.perf_counter() - start
    print(
        f"  {executor.describe():<32} {seconds:8.2f} s   peak RSS of this process "
        f"{_peak_mb():7.0f} MB",
        flush=True,
    )
    return seconds, repr(outcome)


def compare(label: str, frame, params: BuildParameters, executors: list[Executor]) -> list[float]:  # type: ignore[no-untyped-def]
    print(f"{label}: {len(frame):,} comparisons, {frame['query'].nunique():,} queries")
    seconds, reference = timed_build(frame, params, Executor())
    times = [seconds]
    for executor in executors:
        parallel_seconds, result = timed_build(frame, params, executor)
        if result != reference:
            raise SystemExit(f"{executor.describe()} gave a different build than serial")
        times.append(parallel_seconds)
        print(f"    speed-up against serial: {seconds / parallel_seconds:.2f}x")
    return times


def simulated_panels(n_queries: int, seed: int = 3) -> dict[str, pd.DataFrame]:
    """Two measures x six systems of slowly growing quality, per-query noise."""
    rng = np.random.default_rng(seed)
    difficulty = rng.random((n_queries, 1))
    return {
        measure: pd.DataFrame(
            difficulty + 0.02 * np.arange(6) + rng.normal(0.0, 0.15, (n_queries, 6)),
            columns=[f"s{i}" for i in range(6)],
        )
        for measure in ("RDQm2-a1@10", "nDCG@10")
    }


def timed_power(panels: dict[str, pd.DataFrame], executor: Executor) -> tuple[float, object]:
    plan = power_budgets(panels, None)
    start = time.perf_counter()
    results = power_for_panels(
        panels, plan, subsamples=300, permutations=1000, seed=1, executor=executor
    )
    seconds = time.perf_counter() - start
    print(
        f"  {executor.describe():<32} {seconds:8.2f} s   peak RSS of this process "
        f"{_peak_mb():7.0f} MB",
        flush=True,
    )
    return seconds, {m: r.to_dict() for m, r in results.items()}


def compare_power(n_queries: int, executors: list[Executor]) -> None:
    panels = simulated_panels(n_queries)
    print(f"power: 6 systems, {n_queries} queries, Tukey HSD, 300 subsamples x 1,000 draws")
    seconds, reference = timed_power(panels, Executor())
    for executor in executors:
        parallel_seconds, result = timed_power(panels, executor)
        if result != reference:
            raise SystemExit(f"{executor.describe()} gave different power figures than serial")
        print(f"    speed-up against serial: {seconds / parallel_seconds:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--bt-queries", type=int, default=5000)
    parser.add_argument("--power-queries", type=int, default=200)
    parser.add_argument("--only", choices=["build", "power"], default=None)
    args = parser.parse_args()

    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        cluster_executor = resolve_executor(scheduler=cluster.scheduler_address)
        if args.only != "build":
            compare_power(args.power_queries, [resolve_executor(2), cluster_executor])
        if args.only == "power":
            return
        rc = BuildParameters(
            source="pairwise",
            method="rank-centrality",
            uncertainty="bootstrap",
            bootstrap=200,
            seed=1,
        )
        compare(
            "rank-centrality, 200 bootstrap resamples",
            simulated_pairwise(args.queries, seed=1),
            rc,
            [resolve_executor(2), cluster_executor],
        )
    bt = BuildParameters(source="pairwise", method="bt", seed=1)
    compare("bt", simulated_pairwise(args.bt_queries, seed=2), bt, [resolve_executor(2)])


if __name__ == "__main__":
    main()
