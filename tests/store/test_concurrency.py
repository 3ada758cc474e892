"""Four processes ingest pairwise files that share queries and items, at the same time."""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from orlbuild.services.ingests import ingest_file
from orlbuild.store import load_pairwise
from orlbuild.store.status import store_status
from tests.stores import INGEST_WORKER, store_engine

PROCESSES = 4
ROWS = 3000
# A worker: open the store and ingest one file (the library, not the slower-to-import CLI).
# Workers report ready, then all start ingesting when the "go" file appears, so that
# their transactions overlap and race for the same new queries and items.


def _write_file(path: Path, seed: int) -> list[tuple[str, str, str, str]]:
    """ROWS random preferences over 40 shared queries and 400 shared items."""
    rng = np.random.default_rng(seed)
    queries = rng.integers(0, 40, ROWS)
    winners = rng.integers(0, 400, ROWS)
    losers = (winners + rng.integers(1, 400, ROWS)) % 400
    rows = [
        (f"q{q}", f"annotator{seed}", f"d{w}", f"d{lo}")
        for q, w, lo in zip(queries, winners, losers, strict=True)
    ]
    body = "".join("\t".join(r) + "\n" for r in rows)
    path.write_text("query\tannotator\twinner\tloser\n" + body)
    return rows


def test_parallel_ingests_store_every_row_once(migrated_db_url: str, tmp_path: Path) -> None:
    expected: list[tuple[str, str, str, str]] = []
    paths = []
    for seed in range(PROCESSES):
        path = tmp_path / f"p{seed}.tsv"
        expected.extend(_write_file(path, seed))
        paths.append(path)

    # The collection exists already: creating it would serialise the first transactions.
    seed = tmp_path / "seed.tsv"
    seed.write_text("query\tannotator\twinner\tloser\nseed\tseed\tseed1\tseed2\n")
    with store_engine(migrated_db_url) as engine:
        ingest_file(engine, "pairwise", seed)
    expected.append(("seed", "seed", "seed1", "seed2"))

    go = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", INGEST_WORKER, migrated_db_url, str(p), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for p in paths
    ]
    deadline = time.monotonic() + 120
    while not all(Path(f"{p}.ready").exists() for p in paths) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    outcomes = [(w.wait(timeout=300), w.communicate()) for w in workers]
    for code, (out, err) in outcomes:
        assert code == 0, err
        assert f"stored {ROWS} pairwise rows" in out

    with store_engine(migrated_db_url) as engine:
        frame = load_pairwise(engine)
        counts = store_status(engine)["collections"]["default"]
    stored = Counter(
        zip(frame["query"], frame["annotator"], frame["winner"], frame["loser"], strict=True)
    )
    assert stored == Counter(expected)
    assert counts["pairwise"] == PROCESSES * ROWS + 1
    assert counts["batches"] == PROCESSES + 1
    assert counts["queries"] == len({r[0] for r in expected})
    assert counts["items"] == len({r[2] for r in expected} | {r[3] for r in expected})
    assert counts["annotators"] == PROCESSES + 1


def test_parallel_ingests_of_the_same_file_store_it_once(
    migrated_db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "same.tsv"
    _write_file(path, seed=7)
    go = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", INGEST_WORKER.replace("sys.argv[2] + '.ready'", f"'{path}.{i}'"),
             migrated_db_url, str(path), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]  # fmt: skip
    deadline = time.monotonic() + 120
    while not all(Path(f"{path}.{i}").exists() for i in range(2)) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    outputs = []
    for worker in workers:
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
        outputs.append(out)
    assert sum("stored 3000 pairwise rows" in out for out in outputs) == 1
    assert sum("already stored as batch" in out for out in outputs) == 1
    with store_engine(migrated_db_url) as engine:
        counts = store_status(engine)["collections"]["default"]
    assert (counts["pairwise"], counts["batches"]) == (ROWS, 1)
