"""An empty fact table is filled without its secondary indexes, built again before
the commit (``store/bulk.py``, ``defer_indexes``; docs/performance.md, "Ingesting large
vocabularies").

The indexes must be there after a successful ingest, after a failed one (the
rollback restores them), and a second batch into the filled table keeps them
throughout.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect

import orlbuild.ingest.rows as rows_module
from orlbuild.store.bulk import UNIQUE_REBUILD_CACHE_KIB, defer_indexes
from orlbuild.store.models import Item, PairwiseJudgment
from tests.ingest.conftest import run_cli, store_counts

Write = Callable[[str, str | bytes], Path]

ROWS = "".join(f"q{i % 5}\td{i % 40}\td{(i + 1) % 40}\n" for i in range(300))


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rows_module, "CHUNK_ROWS", 50)


def _indexes(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        return {str(index["name"]) for index in inspect(engine).get_indexes("pairwise_judgments")}
    finally:
        engine.dispose()


def test_indexes_are_back_after_an_ingest_and_after_a_failed_one(
    migrated_db_url: str, write_file: Write, small_chunks: None
) -> None:
    declared = _indexes(migrated_db_url)
    assert {"ix_pairwise_judgments_query_id", "ix_pairwise_judgments_batch_id"} <= declared

    bad = write_file("bad.tsv", "query\twinner\tloser\n" + ROWS + "q1\td7\td7\n")
    before = store_counts(migrated_db_url)
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(bad))
    assert result.exit_code == 1 and "line 302: winner and loser are the same item" in result.output
    assert store_counts(migrated_db_url) == before
    assert _indexes(migrated_db_url) == declared

    good = write_file("good.tsv", "query\twinner\tloser\n" + ROWS)
    assert run_cli(migrated_db_url, "ingest", "pairwise", str(good)).exit_code == 0
    assert _indexes(migrated_db_url) == declared
    more = write_file("more.tsv", "query\twinner\tloser\n" + ROWS.replace("q", "p"))
    assert run_cli(migrated_db_url, "ingest", "pairwise", str(more)).exit_code == 0
    assert _indexes(migrated_db_url) == declared
    engine = create_engine(migrated_db_url)
    try:
        with engine.connect() as connection:
            rows = connection.exec_driver_sql("SELECT count(*) FROM pairwise_judgments").scalar()
    finally:
        engine.dispose()
    assert rows == 600


def test_an_empty_table_loses_its_indexes_meanwhile(migrated_db_url: str) -> None:
    engine = create_engine(migrated_db_url)
    table = PairwiseJudgment.__table__
    try:
        with engine.connect() as connection, connection.begin():
            rebuild = defer_indexes(connection, table)  # type: ignore[arg-type]
            during = {str(i["name"]) for i in inspect(connection).get_indexes(table.name)}
            rebuild()
            after = {str(i["name"]) for i in inspect(connection).get_indexes(table.name)}
    finally:
        engine.dispose()
    assert after == _indexes(migrated_db_url)
    assert during == set()


def test_a_malformed_unquoted_line_in_a_later_chunk_is_named(
    migrated_db_url: str, write_file: Write, small_chunks: None
) -> None:
    """An unquoted TSV is parsed a chunk of lines at a time: the error still names its line."""
    lines = ROWS.splitlines(keepends=True)
    lines[247] = 'q1\td"7\td8\n'
    lines[248] = "q1\td7\rx\td8\n"  # a carriage return inside a field
    path = write_file("p.tsv", "query\twinner\tloser\n" + "".join(lines))
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"{path}, line 250: malformed TSV" in result.output


def test_quoted_lines_of_an_unquoted_tsv_are_counted_over_chunks(
    migrated_db_url: str, write_file: Write, small_chunks: None
) -> None:
    lines = ROWS.splitlines(keepends=True)
    for i in (3, 120, 121, 299):
        lines[i] = lines[i].replace("\td", '\t"d', 1)
    path = write_file("p.tsv", "query\twinner\tloser\n" + "".join(lines))
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 0, result.output
    assert f"{path}: 4 line(s) hold a double quote" in result.output


def test_a_unique_name_index_is_built_under_the_small_cache_and_the_cache_restored(
    migrated_db_url: str,
) -> None:
    """SQLite: the names' unique index is sorted under ``UNIQUE_REBUILD_CACHE_KIB``, and the
    connection's page cache is the same after the rebuild as before."""
    if not migrated_db_url.startswith("sqlite"):
        pytest.skip("SQLite's page cache")
    engine = create_engine(migrated_db_url)
    table = Item.__table__
    seen: list[str] = []
    try:
        with engine.connect() as connection, connection.begin():
            connection.exec_driver_sql("PRAGMA cache_size = -12345")
            rebuild = defer_indexes(connection, table, unique=True)  # type: ignore[arg-type]
            raw = connection.connection.driver_connection
            assert raw is not None
            raw.set_trace_callback(seen.append)
            rebuild()
            raw.set_trace_callback(None)
            kept = connection.exec_driver_sql("PRAGMA cache_size").scalar()
            names = {str(i["name"]) for i in inspect(connection).get_indexes(table.name)}
    finally:
        engine.dispose()
    built = [i for i, sql in enumerate(seen) if sql.startswith("CREATE UNIQUE INDEX")]
    assert len(built) == 1
    assert seen[built[0] - 1] == f"PRAGMA cache_size = -{UNIQUE_REBUILD_CACHE_KIB}"
    assert seen[built[0] + 1] == "PRAGMA cache_size = -12345"
    assert kept == -12345
    assert "uq_items_collection_id_name" in names
