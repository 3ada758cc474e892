"""Benchmark: the arena and trec-prefs shapes against the native pairwise shape, side by side.

The same preferences are written three ways - native TSV (``winner, loser``),
arena CSV (``item_a, item_b, winner`` with ``model_a``/``model_b``/``tie``
keywords) and trec_eval prefs (two-document sub-groups) - and each is ingested
into a fresh SQLite store, alternating, ``--repeats`` times. Prints the median
seconds and the ratio to the native shape (the peer measured in the same run,
so machine load cancels out).

Run as a script (``python tests/benchmarks/bench_pairwise_shapes.py [--rows N]``)
or with pytest (``pytest tests/benchmarks/bench_pairwise_shapes.py``).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from orlbuild.services.ingests import ingest_file
from orlbuild.store import open_store, upgrade

ROWS = 200_000


def write_shapes(folder: Path, rows: int, seed: int = 0) -> dict[str, Path]:
    """The same ``rows`` preferences (no ties) as native, arena and trec-prefs files."""
    rng = np.random.default_rng(seed)
    query = rng.integers(0, 500, rows)
    a = rng.integers(0, 2000, rows)
    b = (a + 1 + rng.integers(0, 1999, rows)) % 2000
    first_wins = rng.random(rows) < 0.5
    winner = np.where(first_wins, a, b)
    loser = np.where(first_wins, b, a)
    paths = {
        "native": folder / "native.tsv",
        "arena": folder / "arena.csv",
        "trec-prefs": folder / "prefs.txt",
    }
    with paths["native"].open("w") as out:
        out.write("query\tannotator\twinner\tloser\n")
        out.writelines(
            f"q{q}\tu{i % 7}\td{w}\td{x}\n"
            for i, (q, w, x) in enumerate(zip(query, winner, loser, strict=True))
        )
    with paths["arena"].open("w") as out:
        out.write("question_id,judge,model_a,model_b,winner\n")
        out.writelines(
            f"q{q},u{i % 7},d{x},d{y},{'model_a' if f else 'model_b'}\n"
            for i, (q, x, y, f) in enumerate(zip(query, a, b, first_wins, strict=True))
        )
    with paths["trec-prefs"].open("w") as out:
        out.writelines(
            f"q{q} u{i % 7} s{i} d{w} 1\nq{q} u{i % 7} s{i} d{x} 0\n"
            for i, (q, w, x) in enumerate(zip(query, winner, loser, strict=True))
        )
    return paths


def _ingest_seconds(path: Path, folder: Path, tag: str) -> float:
    url = f"sqlite:///{folder / f'{tag}.db'}"
    upgrade(url)
    engine = open_store(url)
    try:
        start = time.perf_counter()
        result = ingest_file(engine, "pairwise", path)
        seconds = time.perf_counter() - start
    finally:
        engine.dispose()
    assert result.rows > 0
    return seconds


def measure(rows: int = ROWS, repeats: int = 3) -> dict[str, float]:
    """Median ingest seconds per shape."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = write_shapes(folder, rows)
        times: dict[str, list[float]] = {shape: [] for shape in paths}
        for repeat in range(repeats):
            for shape, path in paths.items():
                times[shape].append(_ingest_seconds(path, folder, f"{shape}{repeat}"))
    return {shape: statistics.median(values) for shape, values in times.items()}


def report(medians: dict[str, float], rows: int) -> str:
    """One line per shape: seconds, rows/s and the ratio to the native shape."""
    native = medians["native"]
    return "\n".join(
        f"{shape:>10}: {seconds:6.2f} s, {rows / seconds:9,.0f} rows/s, "
        f"{seconds / native:4.2f}x native"
        for shape, seconds in medians.items()
    )


def test_pairwise_shapes_benchmark() -> None:
    medians = measure(rows=50_000, repeats=1)
    print("\n" + report(medians, 50_000))
    assert medians["arena"] < 5 * medians["native"]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=ROWS)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    print(report(measure(options.rows, options.repeats), options.rows))
