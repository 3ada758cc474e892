"""Batch ids are never reused, and of concurrent deletes of one batch exactly one succeeds.

Issue 39: on SQLite the next ingest after deleting the newest batch got its id back
(migration 0017_batch_ids_never_reused); on PostgreSQL three concurrent `batches delete`
of one batch all said "deleted batch N". Both backends (tests/conftest.py).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from orlbuild.errors import StoreError
from orlbuild.services.batches import delete_ingest_batch
from orlbuild.services.ingests import ingest_file
from orlbuild.store import downgrade, upgrade
from tests.store_cli import cli
from tests.stores import store_engine


def _pairs(n: int) -> str:
    return "query\tannotator\twinner\tloser\ttie\n" + "".join(
        f"q{i}\ta1\td{i}\te{i}\t0\n" for i in range(n)
    )


def test_a_deleted_batch_id_is_never_given_again(migrated_db_url: str, tmp_path: Path) -> None:
    ids = []
    with store_engine(migrated_db_url) as engine:
        for n in (1, 2, 3):
            (tmp_path / f"p{n}.tsv").write_text(_pairs(n))
            ids.append(ingest_file(engine, "pairwise", tmp_path / f"p{n}.tsv").batch_id)
        delete_ingest_batch(engine, ids[-1])
        (tmp_path / "p4.tsv").write_text(_pairs(4))
        fourth = ingest_file(engine, "pairwise", tmp_path / "p4.tsv").batch_id
        delete_ingest_batch(engine, fourth)
        delete_ingest_batch(engine, ids[1])
        (tmp_path / "p5.tsv").write_text(_pairs(5))
        fifth = ingest_file(engine, "pairwise", tmp_path / "p5.tsv").batch_id
    assert fourth > ids[-1] and fifth > fourth


def test_the_migration_keeps_rows_ids_and_build_references(db_url: str, tmp_path: Path) -> None:
    """Down to 0016 and up again rebuilds ``ingest_batches``; rows, ids and keys stay."""
    upgrade(db_url)
    for name, n in (("p.tsv", 3), ("q.tsv", 4)):
        (tmp_path / name).write_text(_pairs(n))
    steps = [("ingest", "pairwise", str(tmp_path / n)) for n in ("p.tsv", "q.tsv")]
    steps += [
        ("build", "--source", "pairwise", "--name", "b"),
        ("batches", "delete", "1", "--force"),
    ]
    for step in steps:
        code, _, err = cli(db_url, *step)
        assert code == 0, err
    downgrade(db_url, "0016_ndcg_full_names")
    upgrade(db_url)
    with store_engine(db_url) as engine, engine.connect() as connection:
        batches = connection.execute(text("SELECT id FROM ingest_batches")).scalars().all()
        used = connection.execute(text("SELECT batch_id FROM build_batches")).scalars().all()
        keys = inspect(connection).get_foreign_keys("build_batches")
    assert batches == [2] and sorted(used, key=str) == [2, None]
    assert any(k["referred_table"] == "ingest_batches" for k in keys)
    code, _, err = cli(db_url, "batches", "delete", "2")
    assert code == 1 and "pass --force" in err, err  # the restored key still guards it
    code, _, err = cli(db_url, "orl", "show", "b")
    assert code == 0, err


@pytest.mark.parametrize("rounds", [3])
def test_of_three_concurrent_deletes_exactly_one_succeeds(
    migrated_db_url: str, tmp_path: Path, rounds: int
) -> None:
    for round_ in range(rounds):
        (tmp_path / f"p{round_}.tsv").write_text(_pairs(3000 + round_))
        with store_engine(migrated_db_url) as engine:
            batch = ingest_file(engine, "pairwise", tmp_path / f"p{round_}.tsv").batch_id
        outcomes = _race_deletes(migrated_db_url, batch, 3)
        deleted = [o for o in outcomes if o.startswith("deleted")]
        assert deleted == [f"deleted {3000 + round_}"], outcomes
        gone = [o for o in outcomes if not o.startswith("deleted")]
        assert len(gone) == 2 and all(f"no ingest batch with id {batch}" in o for o in gone)


def _race_deletes(url: str, batch: int, racers: int) -> list[str]:
    """What each of ``racers`` threads, released at once, got from deleting ``batch``."""
    barrier = threading.Barrier(racers)
    outcomes: list[str] = []

    def delete() -> None:
        with store_engine(url) as engine:
            barrier.wait()
            try:
                outcomes.append(f"deleted {delete_ingest_batch(engine, batch, force=True).rows}")
            except StoreError as exc:
                outcomes.append(str(exc))

    threads = [threading.Thread(target=delete) for _ in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes
