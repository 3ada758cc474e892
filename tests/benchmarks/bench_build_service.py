"""Benchmark of build-and-store through the services layer: ``--jobs 2`` against ``--jobs 1``.

:func:`orlbuild.services.builds.build_and_store` is what ``orlbuild build``
runs: read the judgments from the store, build per query on the executor,
write the build in one transaction. Reading and writing stay in this process,
so they bound the speed-up; the benchmark times them on their own and prints
their share of the serial run. Measured side by side in one run, on one
SQLite store, for

1. ``rank-centrality`` with 200 bootstrap resamples (``--rc-queries`` x 20
   items x 200 comparisons);
2. ``bt`` with ``simultaneous`` tiers (``--bt-queries`` x 20 items x 200).

Each ``--jobs 2`` build is checked to store exactly what the serial build
stored. Run as a script: ``python tests/benchmarks/bench_build_service.py``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench_build import peak_rss_mb, simulated_pairwise

import orlbuild.services.builds as service
from orlbuild.builders import BuildParameters
from orlbuild.executor import Executor, resolve_executor
from orlbuild.store import open_store, upgrade
from tests.builders.store_data import store_judgments


class Timed:
    """Wrap a function of :mod:`orlbuild.services.builds` and add up its seconds."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.original = getattr(service, name)
        self.seconds = 0.0

    def __enter__(self) -> Timed:
        def wrapped(*args: object, **kwargs: object) -> object:
            start = time.perf_counter()
            try:
                return self.original(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        setattr(service, self.name, wrapped)
        return self

    def __exit__(self, *exc: object) -> None:
        setattr(service, self.name, self.original)


def one_build(url: str, params: BuildParameters, executor: Executor) -> tuple[float, float, str]:
    """Seconds of the whole build-and-store, seconds writing, and what was stored."""
    engine = open_store(url)
    try:
        with Timed("store_build") as write:
            start = time.perf_counter()
            build_id = service.build_and_store(engine, params, executor=executor).id
            total = time.perf_counter() - start
        stored = repr(service.built_orls(engine, build_id)[0])
    finally:
        engine.dispose()
    return total, write.seconds, stored


def compare(url: str, label: str, params: BuildParameters, collection_rows: int) -> None:
    engine = open_store(url)
    try:
        start = time.perf_counter()
        service.JUDGMENT_LOADERS["pairwise"](engine, "default")
        read = time.perf_counter() - start
    finally:
        engine.dispose()
    serial, serial_write, reference = one_build(url, params, Executor())
    parallel, parallel_write, result = one_build(url, params, resolve_executor(2))
    if result != reference:
        raise SystemExit(f"{label}: --jobs 2 stored a different build than --jobs 1")
    print(f"{label}: {collection_rows:,} comparisons")
    print(f"  --jobs 1 {serial:8.2f} s (writing {serial_write:.2f} s)")
    print(f"  --jobs 2 {parallel:8.2f} s (writing {parallel_write:.2f} s)")
    print(f"  speed-up of --jobs 2 against --jobs 1: {serial / parallel:.2f}x")
    share = (read + serial_write) / serial
    print(f"  store reading {read:.2f} s + writing {serial_write:.2f} s = {share:.0%} of --jobs 1")
    print(f"  peak RSS of this process {peak_rss_mb():.0f} MB", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rc-queries", type=int, default=200)
    parser.add_argument("--bt-queries", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for label, n_queries, params in (
            (
                "rank-centrality, 200 bootstrap resamples",
                args.rc_queries,
                BuildParameters(
                    source="pairwise",
                    method="rank-centrality",
                    uncertainty="bootstrap",
                    bootstrap=200,
                    seed=1,
                ),
            ),
            (
                "bt, simultaneous tiers",
                args.bt_queries,
                BuildParameters(source="pairwise", method="bt", tiering="simultaneous", seed=1),
            ),
        ):
            url = f"sqlite:///{Path(folder) / f'{n_queries}-{params.method}.db'}"
            upgrade(url)
            frame = simulated_pairwise(n_queries, seed=n_queries)
            store_judgments(url, "pairwise", frame)
            compare(url, label, params, len(frame))


if __name__ == "__main__":
    main()
