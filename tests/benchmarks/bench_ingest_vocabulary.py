"""Benchmark: ``orlbuild ingest pairwise`` of a large vocabulary, as whole processes, against
a bare load of the same rows.

Run: ``python tests/benchmarks/bench_ingest_vocabulary.py`` (all parts) or
``--part sqlite|postgresql|memory``. The data is shaped like a real
collection (issue 24): 1,000,000 preferences over 10,000 queries and about
1.2 million distinct items with MS MARCO-style ids
(``msmarco_passage_NN_NNNNNNNNN``), 200 annotators, 5% ties, rows in random
order. Every tool runs as its own process on the same file, side by side and
interleaved, best of ``--repeat``; wall and CPU time (user + system, from
``wait4``) and peak RSS of each process are printed with the ratios, so a
loaded machine shifts both sides.

Parts and targets:

* ``sqlite``: ``orlbuild ingest pairwise`` into a new SQLite store against
  Python's ``csv`` module and ``sqlite3`` ``executemany`` of the raw rows into
  one unindexed table, one transaction (the issue's peer): ratio <= 4.
* ``postgresql`` (needs ``$ORLBUILD_TEST_PG_URL``; fresh databases are
  created and dropped): against ``psql``-free bare ``COPY ... FROM STDIN`` of
  the raw file into one unindexed table through psycopg: ratio <= 3.
* ``memory``: peak RSS of ingesting 5,000,000 rows (``--memory-rows``, e.g.
  ``5000000 10000000``) of the same shape into SQLite, minus the baseline (the
  same command on a 10-row file): target <= 300 MB above the baseline (issue 23).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script

from tests.benchmarks.bench_ingest import postgres_database, write_pairwise_chunks

BIN = Path(sys.executable).parent
ORLBUILD = [str(BIN / "orlbuild"), "--quiet"]
ROWS = 1_000_000
QUERIES = 10_000
ITEMS_PER_QUERY = 180  # drawn 200 times per query: about 121 distinct items per query
SQLITE_TARGET = 4.0
POSTGRES_TARGET = 3.0
MEMORY_TARGET_MB = 300

_BARE_SQLITE = """
import csv, sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("PRAGMA journal_mode = WAL")
connection.execute(
    "CREATE TABLE pairwise (query TEXT, annotator TEXT, winner TEXT, loser TEXT, tie INTEGER)"
)
with open(sys.argv[2], newline="", encoding="utf-8") as handle:
    reader = csv.reader(handle, delimiter="\\t")
    next(reader)
    connection.execute("BEGIN")
    connection.executemany("INSERT INTO pairwise VALUES (?, ?, ?, ?, ?)", reader)
    connection.execute("COMMIT")
"""

_BARE_COPY = """
import sys, psycopg
with psycopg.connect(sys.argv[1]) as connection:
    connection.execute(
        "CREATE TABLE pairwise (query TEXT, annotator TEXT, winner TEXT, loser TEXT, tie INTEGER)"
    )
    with open(sys.argv[2], "rb") as handle, connection.cursor() as cursor:
        with cursor.copy("COPY pairwise FROM STDIN (FORMAT text, HEADER true)") as copy:
            while block := handle.read(1 << 20):
                copy.write(block)
"""


def write_pairwise(path: Path, rows: int, seed: int = 0) -> None:
    """``rows`` preferences in the issue's shape (see the module docstring)."""
    rng = np.random.default_rng(seed)

    def lines(n: int) -> Iterable[str]:
        queries = rng.integers(0, QUERIES, n)
        slots = rng.integers(0, ITEMS_PER_QUERY, n)
        other = (slots + rng.integers(1, ITEMS_PER_QUERY, n)) % ITEMS_PER_QUERY
        winners = queries * ITEMS_PER_QUERY + slots
        losers = queries * ITEMS_PER_QUERY + other
        annotators = rng.integers(0, 200, n)
        ties = (rng.random(n) < 0.05).astype(int)
        return (
            f"{1_000_000 + q}\tann{a:03d}\t{_item(w)}\t{_item(lo)}\t{t}\n"
            for q, a, w, lo, t in zip(
                queries.tolist(),
                annotators.tolist(),
                winners.tolist(),
                losers.tolist(),
                ties.tolist(),
                strict=True,
            )
        )

    write_pairwise_chunks(path, rows, 200_000, lines)


def _item(number: int) -> str:
    """An MS MARCO-like passage id, distinct for each number below 1.8 million."""
    return f"msmarco_passage_{number % 70:02d}_{number * 7919 % 1_000_000_000:09d}"


def measure(command: list[str]) -> dict[str, float]:
    """Run ``command``; its wall time, CPU time (user + system) and peak RSS in MB."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    error = process.stderr.read().decode() if process.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {error}")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / 1024,
    }


def _sqlite_store(folder: Path, name: str) -> str:
    """A new, migrated SQLite store."""
    url = f"sqlite:///{folder / name}"
    subprocess.run([*ORLBUILD, "--db", url, "db", "upgrade"], check=True, capture_output=True)
    return url


def _best(rounds: list[dict[str, float]]) -> dict[str, float]:
    return min(rounds, key=lambda r: r["wall"])


def _print(label: str, ours: dict[str, float], peer: dict[str, float], target: float) -> None:
    for name, report in (("orlbuild", ours), ("peer", peer)):
        print(
            f"  {name:9s} wall {report['wall']:7.2f} s  cpu {report['cpu']:7.2f} s  "
            f"peak RSS {report['rss_mb']:6.0f} MB"
        )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"{label}: ratio wall {ours['wall'] / peer['wall']:.2f}, "
        f"cpu {ours['cpu'] / peer['cpu']:.2f} (target <= {target}; load average {load})"
    )


def bench_sqlite(data: Path, folder: Path, repeat: int) -> tuple[float, float]:
    """``orlbuild ingest pairwise`` into SQLite against the bare csv + sqlite3 load."""
    ours, peer = [], []
    for round_ in range(repeat):
        bare = folder / f"bare{round_}.db"
        peer.append(measure([sys.executable, "-c", _BARE_SQLITE, str(bare), str(data)]))
        url = _sqlite_store(folder, f"orlbuild{round_}.db")
        ours.append(measure([*ORLBUILD, "--db", url, "ingest", "pairwise", str(data)]))
    best, bare_best = _best(ours), _best(peer)
    _print("sqlite (csv + sqlite3 executemany)", best, bare_best, SQLITE_TARGET)
    return best["wall"] / bare_best["wall"], best["cpu"] / bare_best["cpu"]


def bench_postgresql(data: Path, server: str, repeat: int) -> tuple[float, float]:
    """``orlbuild ingest pairwise`` into PostgreSQL against a bare COPY of the file."""
    ours, peer = [], []
    for _ in range(repeat):
        url, drop = postgres_database(server)
        try:
            libpq = url.replace("postgresql+psycopg://", "postgresql://")
            peer.append(measure([sys.executable, "-c", _BARE_COPY, libpq, str(data)]))
        finally:
            drop()
        url, drop = postgres_database(server)
        try:
            subprocess.run(
                [*ORLBUILD, "--db", url, "db", "upgrade"], check=True, capture_output=True
            )
            ours.append(measure([*ORLBUILD, "--db", url, "ingest", "pairwise", str(data)]))
        finally:
            drop()
    best, bare_best = _best(ours), _best(peer)
    _print("postgresql (bare COPY)", best, bare_best, POSTGRES_TARGET)
    return best["wall"] / bare_best["wall"], best["cpu"] / bare_best["cpu"]


def bench_memory(folder: Path, rows: list[int]) -> dict[int, float]:
    """Peak RSS above the baseline (a 10-row ingest) of ingesting ``rows`` rows into SQLite."""
    small = folder / "small.tsv"
    write_pairwise(small, 10)
    baseline = measure(
        [*ORLBUILD, "--db", _sqlite_store(folder, "base.db"), "ingest", "pairwise", str(small)]
    )
    print(f"memory: baseline (10 rows) peak RSS {baseline['rss_mb']:.0f} MB")
    above: dict[int, float] = {}
    for n in rows:
        data = folder / f"pairwise{n}.tsv"
        write_pairwise(data, n, seed=1)
        url = _sqlite_store(folder, f"memory{n}.db")
        report = measure([*ORLBUILD, "--db", url, "ingest", "pairwise", str(data)])
        above[n] = report["rss_mb"] - baseline["rss_mb"]
        print(
            f"  {n:>11,} rows: wall {report['wall']:7.1f} s  cpu {report['cpu']:7.1f} s  "
            f"peak RSS {report['rss_mb']:6.0f} MB = {above[n]:.0f} MB above the baseline "
            f"(target <= {MEMORY_TARGET_MB})"
        )
        data.unlink()
    return above


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("sqlite", "postgresql", "memory"), action="append")
    parser.add_argument("--rows", type=int, default=ROWS)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--memory-rows", type=int, nargs="+", default=[5_000_000])
    args = parser.parse_args()
    parts = args.part or ["sqlite", "postgresql", "memory"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = folder / "pairwise.tsv"
        if {"sqlite", "postgresql"} & set(parts):
            write_pairwise(data, args.rows)
        if "sqlite" in parts:
            bench_sqlite(data, folder, args.repeat)
        server = os.environ.get("ORLBUILD_TEST_PG_URL")
        if "postgresql" in parts:
            if server:
                bench_postgresql(data, server, args.repeat)
            else:
                print("postgresql: skipped ($ORLBUILD_TEST_PG_URL is not set)")
        if "memory" in parts:
            bench_memory(folder, args.memory_rows)


def test_ingest_vocabulary_benchmark() -> None:
    """pytest entry point: the targets at ``$ORLBUILD_BENCH_ROWS`` rows (default 1,000,000)."""
    rows = int(os.environ.get("ORLBUILD_BENCH_ROWS", ROWS))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = folder / "pairwise.tsv"
        write_pairwise(data, rows)
        wall, _ = bench_sqlite(data, folder, 1)
        assert wall <= SQLITE_TARGET
        server = os.environ.get("ORLBUILD_TEST_PG_URL")
        if server:
            wall, _ = bench_postgresql(data, server, 1)
            assert wall <= POSTGRES_TARGET
        assert bench_memory(folder, [5_000_000])[5_000_000] <= MEMORY_TARGET_MB


if __name__ == "__main__":
    main()
