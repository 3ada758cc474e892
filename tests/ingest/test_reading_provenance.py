"""The same bytes read another way are not "already stored" (docs/input-formats.md, "Input
formats").

A batch is found by the SHA-256 of its content; since migration 0005 it also
keeps a digest of the rows its reading kept. Re-ingesting identical content is
a no-op when this reading keeps the same rows, and an error naming both
readings otherwise: ``--duplicates keep-first`` with another
``--score-precision`` may keep another line of a repeated document.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from orlbuild.store.read import load_run
from tests.ingest.conftest import run_cli, store_counts
from tests.stores import store_engine

# d1 twice: equal in float32 (the earlier line is kept), not in float64 (the higher one is)
REPEATED = "q1 Q0 d1 1 67.62227935791016 s\nq1 Q0 d1 2 67.62227973937988 s\nq1 Q0 d2 3 1.0 s\n"
PLAIN = "q1 Q0 d1 1 67.62227935791016 s\nq1 Q0 d2 2 67.62227973937988 s\n"


def _ingest(url: str, path: Path, *options: str) -> tuple[int, str]:
    result = run_cli(
        url, "ingest", "run", str(path), "--system", "s", "--duplicates", "keep-first", *options
    )
    return result.exit_code, result.output


def _stored(url: str, tmp_path: Path, content: str = REPEATED, name: str = "run.txt") -> Path:
    """A run file ingested with the default reading (``--score-precision float32``)."""
    path = tmp_path / name
    path.write_text(content)
    assert _ingest(url, path)[0] == 0
    return path


def _is_a_no_op(url: str, path: Path, *options: str) -> bool:
    """Ingesting ``path`` again with ``options`` stores nothing, and says so."""
    code, output = _ingest(url, path, *options)
    return code == 0 and "nothing to do" in output


def _replace_reading_digest(url: str, digest: str | None) -> str:
    """Overwrite the stored batch's reading digest with ``digest``; return the one it had."""
    with store_engine(url) as engine, engine.begin() as connection:
        before = connection.execute(sa.text("SELECT reading_sha256 FROM ingest_batches"))
        stored = before.scalar_one()
        connection.execute(sa.text("UPDATE ingest_batches SET reading_sha256 = :d"), {"d": digest})
    return str(stored)


def _scores(url: str) -> list[float]:
    with store_engine(url) as engine:
        return sorted(load_run(engine, "default", "s")["score"].tolist())


def test_another_precision_that_keeps_other_rows_is_refused(
    migrated_db_url: str, tmp_path: Path
) -> None:
    path = _stored(migrated_db_url, tmp_path)
    before = store_counts(migrated_db_url)
    kept = _scores(migrated_db_url)
    assert kept == [1.0, 67.62227935791016]  # float32: the earlier line

    code, output = _ingest(migrated_db_url, path, "--score-precision", "float64")
    assert code == 1
    assert "already stored as batch 1 when read with" in output
    assert "--score-precision float32" in output and "--score-precision float64" in output
    assert "orlbuild batches delete 1" in output and "Traceback" not in output
    assert store_counts(migrated_db_url) == before and _scores(migrated_db_url) == kept

    # the same reading again is the no-op it always was
    code, output = _ingest(migrated_db_url, path, "--score-precision", "float32")
    assert code == 0 and "already stored as batch 1" in output and "nothing to do" in output

    # after deleting the batch, the float64 reading is stored
    assert run_cli(migrated_db_url, "batches", "delete", "1").exit_code == 0
    assert _ingest(migrated_db_url, path, "--score-precision", "float64")[0] == 0
    assert _scores(migrated_db_url) == [1.0, 67.62227973937988]


def test_another_precision_that_keeps_the_same_rows_is_a_no_op(
    migrated_db_url: str, tmp_path: Path
) -> None:
    path = _stored(migrated_db_url, tmp_path, PLAIN, "plain.txt")  # the precision chooses nothing
    assert _is_a_no_op(migrated_db_url, path, "--score-precision", "float64")


def test_batches_stored_before_the_digest_stay_a_no_op(
    migrated_db_url: str, tmp_path: Path
) -> None:
    path = _stored(migrated_db_url, tmp_path)
    _replace_reading_digest(migrated_db_url, None)  # what a batch from before migration 0005 holds
    assert _is_a_no_op(migrated_db_url, path, "--score-precision", "float64")


def test_digests_of_the_former_scheme_are_compared_through_the_reading_options(
    migrated_db_url: str, tmp_path: Path
) -> None:
    path = _stored(migrated_db_url, tmp_path)
    # a digest written before the "2:" scheme
    assert _replace_reading_digest(migrated_db_url, "ab" * 32).startswith("2:")
    assert _is_a_no_op(migrated_db_url, path)  # the same options: the same rows
    code, output = _ingest(migrated_db_url, path, "--score-precision", "float64")
    assert code == 1 and "already stored as batch 1 when read with" in output
