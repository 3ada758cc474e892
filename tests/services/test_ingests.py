"""The pipeline's ingest step: a file already stored is found by its content hash, unread."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from orlbuild.ingest.source import Source, file_sha256
from orlbuild.services.ingests import ingest_unless_stored
from tests.stores import store_engine

SAMPLE = Path(__file__).parents[2] / "sample_data"


class _Bars:
    def read(self, n: int = 1) -> None:
        pass

    def write(self, n: int, total: int) -> None:
        pass


def test_the_hash_is_the_one_ingest_stores_also_for_compressed_files(tmp_path: Path) -> None:
    plain = SAMPLE / "runs" / "bm25.trec"
    packed = tmp_path / "bm25.trec.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    source = Source(str(packed))
    for _ in source.lines():
        pass
    assert file_sha256(packed) == source.sha256 == file_sha256(plain)


def test_a_stored_file_is_skipped_without_being_read(migrated_db_url: str, tmp_path: Path) -> None:
    opened: list[int] = []

    @contextmanager
    def progress(size: int) -> Iterator[_Bars]:
        opened.append(size)
        yield _Bars()

    run = tmp_path / "bm25.trec.gz"
    run.write_bytes(gzip.compress((SAMPLE / "runs" / "bm25.trec").read_bytes()))
    with store_engine(migrated_db_url) as engine:
        first = ingest_unless_stored(
            engine, "run", run, collection="c", system="bm25", progress=progress
        )
        again = ingest_unless_stored(
            engine, "run", run, collection="c", system="bm25", progress=progress
        )
        # The same content under another system creates that system (issue 23).
        other = ingest_unless_stored(engine, "run", run, collection="c", system="other")
        other_again = ingest_unless_stored(engine, "run", run, collection="c", system="other")
    assert first.created and first.rows > 0
    assert (again.created, again.batch_id, again.rows) == (False, first.batch_id, first.rows)
    assert "skipped run bm25.trec.gz (bm25): already stored as batch" in again.message
    assert other.created and other.rows == first.rows and other.batch_id != first.batch_id
    assert (other_again.created, other_again.batch_id) == (False, other.batch_id)
    # the second call (with a progress display) never opened the file for reading
    assert opened == [run.stat().st_size]
