"""A pairwise file is streamed into one transaction (docs/performance.md, "Ingesting large
vocabularies").

Chunks are written while the file is still being read; a bad line in a later
chunk rolls every written chunk back, and whole-file outcomes (rows of count
0, the notes) are judged over all chunks, not per chunk.
"""

from __future__ import annotations

import pytest

import orlbuild.ingest.rows as rows_module
from orlbuild.services.ingests import ingest_file
from orlbuild.store.read import load_pairwise
from tests.files import Write
from tests.ingest.conftest import ingested, run_cli, store_counts
from tests.stores import store_engine

ROWS = "".join(f"q{i % 5}\td{i % 40}\td{(i + 1) % 40}\n" for i in range(300))


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rows_module, "CHUNK_ROWS", 50)


def test_chunks_are_written_while_the_file_is_read(
    migrated_db_url: str, write_file: Write, small_chunks: None
) -> None:
    path = write_file("p.tsv", "query\twinner\tloser\n" + ROWS)
    events: list[str] = []
    with store_engine(migrated_db_url) as engine:
        result = ingest_file(
            engine,
            "pairwise",
            path,
            on_progress=lambda _n: events.append("read"),
            on_write=lambda n, _total: events.append("write"),
        )
        stored = load_pairwise(engine, "default")
    assert result.rows == 300 and len(stored) == 300
    assert events.count("write") == 6  # one per chunk of 50 rows
    assert sorted(zip(stored["winner"], stored["loser"], strict=True)) == sorted(
        (f"d{i % 40}", f"d{(i + 1) % 40}") for i in range(300)
    )


def test_a_bad_line_in_a_later_chunk_stores_nothing(
    seeded_db_url: str, write_file: Write, small_chunks: None
) -> None:
    path = write_file("p.tsv", "query\twinner\tloser\n" + ROWS + "q1\td7\td7\n")
    before = store_counts(seeded_db_url)
    result = run_cli(seeded_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"{path}, line 302: winner and loser are the same item" in result.output
    assert store_counts(seeded_db_url) == before


def test_counts_of_zero_are_judged_over_the_whole_file(
    migrated_db_url: str, write_file: Write, small_chunks: None
) -> None:
    zero_chunk = "".join(f"q1\td{i}\td{i + 1}\t0\n" for i in range(60))  # a whole chunk of 0
    counted = "".join(f"q1\td{i}\td{i + 1}\t2\n" for i in range(60))
    path = write_file("p.tsv", "query\twinner\tloser\tcount\n" + zero_chunk + counted)
    result = ingested(migrated_db_url, "pairwise", path)
    assert "stored 60 pairwise rows" in result.output
    assert "skipped 60 row(s) with count 0" in result.output
    assert result.output.count("count 0") == 1

    only_zero = write_file("z.tsv", "query\twinner\tloser\tcount\n" + zero_chunk)
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(only_zero))
    assert result.exit_code == 1
    assert f"{only_zero}, line 2: every row has count 0" in result.output


def test_the_same_file_again_is_a_no_op_whatever_the_chunking(
    migrated_db_url: str, write_file: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_file("p.tsv", "query\twinner\tloser\n" + ROWS)
    monkeypatch.setattr(rows_module, "CHUNK_ROWS", 50)
    ingested(migrated_db_url, "pairwise", path)
    monkeypatch.setattr(rows_module, "CHUNK_ROWS", 70)
    again = ingested(migrated_db_url, "pairwise", path)
    assert "nothing to do" in again.output
    assert store_counts(migrated_db_url)["collections"]["default"]["pairwise"] == 300
