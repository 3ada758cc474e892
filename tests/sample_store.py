"""A store of the sample's graded judgments and four runs, built as ``g``: the fixture of
the CLI tests that compare systems (order invariance, parity with ``eval --compare``,
leaderboard exports)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).parents[1]
SAMPLE = ROOT / "sample_data"
#: The sample's systems, one run file each under ``sample_data/runs``.
SYSTEMS = ("bm25", "dense", "hybrid", "tfidf")


def graded_sample_store(db: list[str], ok: Callable[[list[str]], str]) -> None:
    """Fill the store named by ``db`` (``--db PATH`` and global options) through ``ok``, which
    runs one command and asserts that it succeeded: migrate, ingest the graded judgments and
    every system's run, and build the graded ORLs as ``g``."""
    ok([*db, "db", "upgrade"])
    ok([*db, "ingest", "graded", str(SAMPLE / "graded.qrels")])
    for system in SYSTEMS:
        ok([*db, "ingest", "run", str(SAMPLE / "runs" / f"{system}.trec"), "--system", system])
    ok([*db, "build", "--source", "graded", "--name", "g"])
