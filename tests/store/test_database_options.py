"""How a database is named and changed: plain paths, missing drivers, guarded downgrades."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from orlbuild.errors import StoreError
from orlbuild.store import current_revision, downgrade, head_revision
from orlbuild.store.engine import create_store_engine, normalize_url
from tests.ingest.conftest import run_cli, store_counts

PAIRS = "query,winner,loser\nq1,d1,d2\n"


def test_plain_path_is_an_sqlite_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: ``--db sample_data/orlbuild.db`` was rejected as an invalid URL."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    assert normalize_url("data/x.db") == "sqlite:///data/x.db"
    assert run_cli("data/x.db", "db", "upgrade").exit_code == 0
    (tmp_path / "p.csv").write_text(PAIRS)
    assert run_cli("data/x.db", "ingest", "pairwise", "p.csv").exit_code == 0
    assert (tmp_path / "data" / "x.db").is_file()
    assert not (tmp_path / "orlbuild.db").exists()
    assert (
        store_counts(f"sqlite:///{tmp_path / 'data' / 'x.db'}")["collections"]["default"][
            "pairwise"
        ]
        == 1
    )


def test_postgresql_url_without_psycopg_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression: printed a ModuleNotFoundError traceback."""
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(StoreError, match=r"pip install 'orlbuild\[postgres\]'"):
        create_store_engine("postgresql://user@localhost/db")
    result = run_cli("postgresql://user@localhost/db", "status")
    assert result.exit_code == 1
    assert "orlbuild[postgres]" in result.output
    assert "Traceback" not in result.output


def test_downgrade_dropping_rows_is_refused_without_yes(
    migrated_db_url: str, tmp_path: Path
) -> None:
    """Regression: ``db downgrade 0002_builds`` silently deleted every saved evaluation."""
    path = tmp_path / "g.qrels"
    path.write_text("q1 0 d1 2\nq1 0 d2 1\n")
    run = tmp_path / "r.trec"
    run.write_text("q1 Q0 d1 1 2.0 t\n")
    for args in (
        ("ingest", "graded", str(path)),
        ("ingest", "run", str(run), "--system", "s"),
        ("build", "--source", "graded", "--name", "g"),
        ("score", "--build", "g", "--system", "s", "-m", "nDCG@10", "--save"),
    ):
        assert run_cli(migrated_db_url, *args).exit_code == 0, args
    refused = run_cli(migrated_db_url, "db", "downgrade", "0002_builds")
    assert refused.exit_code == 1
    message = refused.output.strip().splitlines()[-1]
    assert "evaluations (1 rows)" in message and "evaluation_values (1 rows)" in message
    assert "--yes" in message
    engine = create_store_engine(migrated_db_url)
    try:
        assert current_revision(engine) == head_revision()  # nothing changed
    finally:
        engine.dispose()
    saved = run_cli(migrated_db_url, "results", "list")
    assert saved.exit_code == 0 and "nDCG@10" in saved.output

    assert run_cli(migrated_db_url, "db", "downgrade", "0002_builds", "--yes").exit_code == 0
    engine = create_store_engine(migrated_db_url)
    try:
        assert current_revision(engine) == "0002_builds"
    finally:
        engine.dispose()


def test_downgrade_of_empty_tables_needs_no_confirmation(migrated_db_url: str) -> None:
    downgrade(migrated_db_url, "base")
    engine = create_store_engine(migrated_db_url)
    try:
        assert current_revision(engine) is None
    finally:
        engine.dispose()


def test_grade_agg_typo_in_eval_is_a_one_line_error(tmp_path: Path) -> None:
    """Regression: ``orlbuild eval --grade-agg foo`` printed a ValueError traceback."""
    orl = tmp_path / "o.qrels"
    orl.write_text("q1 0 d1 1\n")
    run = tmp_path / "r.trec"
    run.write_text("q1 Q0 d1 1 1.0 t\n")
    result = run_cli(
        f"sqlite:///{tmp_path / 'unused.db'}",
        "eval",
        str(orl),
        str(run),
        "-m",
        "nDCG@10",
        "--grade-agg",
        "foo",
    )
    assert result.exit_code == 2
    assert "median, mean, max, majority" in result.output
    assert "Traceback" not in result.output
