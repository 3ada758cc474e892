"""Benchmark: LMArena-style battles as a JSON array against the same battles as JSON Lines.

The same arena battles (``question_id, model_a, model_b, winner, judge``) are
written as JSON Lines, as a one-line JSON array (``json.dump``, as LMArena's
``clean_battle_*.json``) and as an indented JSON array, and each is read
(:func:`orlbuild.ingest.read_input`) and ingested into a fresh SQLite store,
alternating, ``--repeats`` times. Prints the median seconds and the ratio to
JSON Lines, the peer measured in the same run (machine load cancels out).
Target (issue 21): the array forms within 1.3x of JSON Lines.

Run as a script (``python tests/benchmarks/bench_json_array.py [--rows N]``)
or with pytest (``pytest tests/benchmarks/bench_json_array.py``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from orlbuild.ingest import read_input
from orlbuild.services.ingests import ingest_file
from orlbuild.store import open_store, upgrade
from orlbuild.vocabulary import InputKind

ROWS = 200_000
FORMS = ("jsonl", "array", "indented")


def write_forms(folder: Path, rows: int, seed: int = 0) -> dict[str, Path]:
    """The same ``rows`` battles as JSON Lines, a one-line array and an indented array."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 60, rows)
    b = (a + 1 + rng.integers(0, 59, rows)) % 60
    outcome = rng.choice(["model_a", "model_b", "tie"], rows)
    battles = [
        {
            "question_id": f"{i:08x}",
            "model_a": f"m{x}",
            "model_b": f"m{y}",
            "winner": str(w),
            "judge": f"u{i % 97}",
        }
        for i, (x, y, w) in enumerate(zip(a, b, outcome, strict=True))
    ]
    paths = {
        form: folder / f"battles_{form}.{'jsonl' if form == 'jsonl' else 'json'}" for form in FORMS
    }
    with paths["jsonl"].open("w") as out:
        out.writelines(json.dumps(battle) + "\n" for battle in battles)
    with paths["array"].open("w") as out:
        json.dump(battles, out)
    with paths["indented"].open("w") as out:
        json.dump(battles, out, indent=1)
    return paths


def _seconds(path: Path, folder: Path, tag: str, store: bool) -> float:
    if not store:
        start = time.perf_counter()
        parsed = read_input("pairwise", path, query="arena")
        seconds = time.perf_counter() - start
        assert len(parsed) > 0
        return seconds
    url = f"sqlite:///{folder / f'{tag}.db'}"
    upgrade(url)
    engine = open_store(url)
    try:
        start = time.perf_counter()
        result = ingest_file(engine, InputKind.pairwise, path, query="arena")
        seconds = time.perf_counter() - start
    finally:
        engine.dispose()
    assert result.rows > 0
    return seconds


def measure(rows: int = ROWS, repeats: int = 3) -> dict[str, dict[str, float]]:
    """Median seconds per form, reading only and reading + storing."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = write_forms(folder, rows)
        times: dict[str, dict[str, list[float]]] = {
            "read": {f: [] for f in FORMS},
            "ingest": {f: [] for f in FORMS},
        }
        for repeat in range(repeats):
            for form in FORMS:
                times["read"][form].append(_seconds(paths[form], folder, "", store=False))
                times["ingest"][form].append(
                    _seconds(paths[form], folder, f"{form}{repeat}", store=True)
                )
    return {
        phase: {form: statistics.median(values) for form, values in per_form.items()}
        for phase, per_form in times.items()
    }


def report(medians: dict[str, dict[str, float]], rows: int) -> None:
    """Print seconds, rows/s and the ratio to JSON Lines."""
    for phase, per_form in medians.items():
        base = per_form["jsonl"]
        for form, seconds in per_form.items():
            print(
                f"{phase:6s} {form:9s} {seconds:7.3f} s  {rows / seconds:10,.0f} rows/s  "
                f"{seconds / base:5.2f}x JSON Lines"
            )


def test_json_array_within_1_3x_of_json_lines() -> None:
    medians = measure(rows=50_000, repeats=3)
    report(medians, 50_000)
    for phase in medians:
        for form in ("array", "indented"):
            assert medians[phase][form] <= 1.3 * medians[phase]["jsonl"]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=ROWS)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    report(measure(args.rows, args.repeats), args.rows)
