"""No column is dropped silently: an unused column is reported, in every kind and syntax."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ingest.conftest import run_cli, store_counts

Write = Callable[[str, str | bytes], Path]

#: kind -> (CSV content with an extra ``source`` column, extra CLI options)
WITH_EXTRA_COLUMN = {
    "listwise": ("query,item,rank,source\nq1,d1,1,web\n", ()),
    "pairwise": ("query,winner,loser,source\nq1,d1,d2,web\n", ()),
    "graded": ("query,item,grade,source\nq1,d1,2,web\n", ()),
    "run": ("query,item,rank,source\nq1,d1,1,web\n", ("--system", "s")),
}


@pytest.mark.parametrize("kind", list(WITH_EXTRA_COLUMN))
def test_extra_column_is_reported_in_every_kind(
    kind: str, migrated_db_url: str, write_file: Write
) -> None:
    content, options = WITH_EXTRA_COLUMN[kind]
    path = write_file(f"{kind}.csv", content)
    result = run_cli(migrated_db_url, "ingest", kind, str(path), *options)
    assert result.exit_code == 0, result.output
    assert f"Warning: {path}: ignored column(s) 'source'" in result.stderr
    assert "stored 1" in result.stdout


@pytest.mark.parametrize("kind", list(WITH_EXTRA_COLUMN))
def test_extra_jsonl_key_is_reported_in_every_kind(
    kind: str, migrated_db_url: str, write_file: Write
) -> None:
    header, row = WITH_EXTRA_COLUMN[kind][0].splitlines()
    record = dict(zip(header.split(","), row.split(","), strict=True))
    body = "{" + ", ".join(f'"{k}": "{v}"' for k, v in record.items()) + "}\n"
    path = write_file(f"{kind}.jsonl", body)
    result = run_cli(migrated_db_url, "ingest", kind, str(path), *WITH_EXTRA_COLUMN[kind][1])
    assert result.exit_code == 0, result.output
    assert "ignored column(s) 'source'" in result.stderr


def test_arena_extra_columns_are_reported_not_refused(
    migrated_db_url: str, write_file: Write
) -> None:
    """LMArena exports carry many more columns (turn, language, tstamp...): read, reported."""
    path = write_file(
        "arena.csv",
        "question_id,model_a,model_b,winner,judge,turn,language,tstamp\n"
        "q1,m1,m2,model_a,j1,1,English,1.0\n",
    )
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 0, result.output
    assert "ignored column(s) 'turn', 'language', 'tstamp'" in result.stderr
    assert "arena columns" in result.stderr


def test_complete_file_has_no_warning(migrated_db_url: str, write_file: Write) -> None:
    path = write_file("p.csv", "query,annotator,winner,loser,tie\nq1,a,d1,d2,0\n")
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 0
    assert "Warning" not in result.output


def test_misspelt_column_stores_nothing(seeded_db_url: str, write_file: Write) -> None:
    """A near miss of an absent column (``anotator``) would silently default every
    annotator to ``_``: refused instead."""
    path = write_file("p.csv", "query,anotator,winner,loser\nq1,a9,d1,d2\n")
    before = store_counts(seeded_db_url)
    result = run_cli(seeded_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 1
    assert "did you mean 'annotator'?" in result.output
    assert store_counts(seeded_db_url) == before
