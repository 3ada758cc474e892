"""Ctrl-C around the commit of an ingest: the message says what the store holds.

The interruption lands just before the commit (inside the transaction: rolled
back, "nothing ... was stored") or just after it (the batch is stored and the
message names it, so that nobody ingests the file again and gets duplicates).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import orlbuild.services.ingests as file_ingest
import orlbuild.store.engine as engine_module
from tests.store_cli import cli, cli_json

PAIRS = "query\twinner\tloser\n" + "".join(f"q{i % 3}\td{i}\td{i + 1}\n" for i in range(30))


@pytest.fixture
def pairs_file(tmp_path: Path) -> Path:
    """Thirty pairwise preferences, in three queries."""
    path = tmp_path / "p.tsv"
    path.write_text(PAIRS)
    return path


def _batches(url: str) -> list[int]:
    return [b["id"] for b in cli_json(url, "batches", "list")]


def test_ctrl_c_just_after_the_commit_says_stored(
    migrated_db_url: str, pairs_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = file_ingest.store_batch

    def committed_then_interrupted(*args: Any, **kwargs: Any) -> Any:
        real(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(file_ingest, "store_batch", committed_then_interrupted)
    code, _, err = cli(migrated_db_url, "ingest", "pairwise", str(pairs_file))
    assert code == 130 and "Traceback" not in err
    assert _batches(migrated_db_url) == [1]
    assert (
        err.strip() == f"interrupted after the commit: {pairs_file} was stored as batch 1 (30 rows)"
    )


def test_ctrl_c_just_before_the_commit_says_nothing_stored(
    migrated_db_url: str, pairs_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = engine_module.write_transaction
    from contextlib import contextmanager

    @contextmanager
    def interrupted_at_commit(engine: Any) -> Any:
        with real(engine) as connection:
            yield connection
            raise KeyboardInterrupt  # every row is written; the commit has not happened

    import orlbuild.store.batches as batches

    monkeypatch.setattr(batches, "write_transaction", interrupted_at_commit)
    code, _, err = cli(migrated_db_url, "ingest", "pairwise", str(pairs_file))
    assert code == 130 and "Traceback" not in err
    assert _batches(migrated_db_url) == []
    assert err.strip() == f"interrupted: nothing from {pairs_file} was stored"


def test_a_batch_of_another_system_stored_meanwhile_is_not_mistaken_for_this_one(
    migrated_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "r.trec"
    run.write_text("".join(f"q1 Q0 d{i} {i} {10 - i} r\n" for i in range(1, 5)))
    other = tmp_path / "o.trec"
    other.write_text("".join(f"q2 Q0 d{i} {i} {10 - i} r\n" for i in range(1, 5)))
    real = file_ingest.store_batch

    def another_ingest_then_interrupted(engine: Any, batch: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(file_ingest, "store_batch", real)
        file_ingest.ingest_file(engine, "run", other, system="someone-else")
        raise KeyboardInterrupt

    monkeypatch.setattr(file_ingest, "store_batch", another_ingest_then_interrupted)
    code, _, err = cli(migrated_db_url, "ingest", "run", str(run), "--system", "mine")
    assert code == 130
    assert err.strip() == f"interrupted: nothing from {run} was stored"
