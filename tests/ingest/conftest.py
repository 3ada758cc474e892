"""Helpers for the ingestion tests: run the CLI, count what the store holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner, Result

from orlbuild.cli.main import app
from orlbuild.store.status import store_status
from tests.stores import store_engine

GOOD_PAIRWISE = "query\tannotator\twinner\tloser\nq1\ta1\td1\td2\nq1\ta2\td2\td3\nq2\ta1\td4\td1\n"


def run_cli(url: str, *args: str, stdin: bytes | None = None) -> Result:
    """Invoke ``orlbuild --db URL ARGS`` in-process."""
    return CliRunner().invoke(app, ["--db", url, "--quiet", *args], input=stdin)


def ingest_cli(url: str, kind: str, path: Path, *args: str) -> Result:
    """``orlbuild ingest KIND PATH ARGS``; a run is system ``s``."""
    system = ["--system", "s"] if kind == "run" else []
    return run_cli(url, "ingest", kind, str(path), *args, *system)


def ingested(url: str, kind: str, path: Path, *args: str) -> Result:
    """:func:`ingest_cli` of a file that must be stored (exit 0); its result."""
    result = ingest_cli(url, kind, path, *args)
    assert result.exit_code == 0, result.output
    return result


def pairwise_tuples(frame: pd.DataFrame) -> list[tuple[str, str, str, str, bool]]:
    """``load_pairwise`` rows as sorted ``(query, annotator, winner, loser, tie)`` tuples."""
    columns = ("query", "annotator", "winner", "loser", "tie")
    return sorted(zip(*(frame[c] for c in columns), strict=True))


def counted_pairwise_tuples(frame: pd.DataFrame) -> list[tuple[object, ...]]:
    """``load_pairwise`` rows as sorted ``(query, annotator, winner, loser, tie, count)``."""
    assert frame["count"].dtype == "int64"
    columns = ("query", "annotator", "winner", "loser", "tie", "count")
    return sorted(zip(*(frame[c] for c in columns), strict=True))


def store_counts(url: str) -> dict[str, Any]:
    """The ``orlbuild status`` document of the whole store."""
    with store_engine(url) as engine:
        return store_status(engine)


@pytest.fixture
def seeded_db_url(migrated_db_url: str, tmp_path: Path) -> str:
    """A migrated store that already holds one small pairwise batch (3 rows)."""
    path = tmp_path / "seed.tsv"
    path.write_text(GOOD_PAIRWISE)
    ingested(migrated_db_url, "pairwise", path)
    return migrated_db_url
