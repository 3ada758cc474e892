"""Migration 0010_bulk_load_keys: facts without a batch foreign key, name uniqueness as an
index the first ingest builds once (``store/bulk.py``, ``defer_indexes``; ``store/batches.py``,
``delete_batch``).

Deleting a batch must still leave no fact behind (the cascade is now explicit), and
the unique name index must still refuse a name stored twice, with the batch refused and
nothing stored, on both backends.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import inspect
from sqlalchemy.exc import IntegrityError

import orlbuild.ingest.rows as rows_module
import orlbuild.store.bulk as bulk_module
from orlbuild.services.ingests import ingest_file
from orlbuild.store import load_pairwise
from orlbuild.store.batches import FACT_TABLES, delete_batch
from orlbuild.store.models import NAME_MODELS, System
from tests.ingest.conftest import run_cli, store_counts
from tests.stores import INGEST_WORKER, store_engine

PAIRS = "query\tannotator\twinner\tloser\ttie\n" + "".join(
    f"q{i % 3}\ta{i % 2}\td{i % 7}\td{(i + 1) % 7}\t{i % 2}\n" for i in range(40)
)
LISTS = "query\tannotator\titem\trank\n" + "".join(
    f"q{i % 3}\ta1\td{i}\t{i % 4 + 1}\n" for i in range(12)
)
GRADES = "".join(f"q{i % 3} 0 d{i} {i % 3}\n" for i in range(12))
RUN = "".join(f"q{i % 3} Q0 d{i} {i} {20 - i}.0 t\n" for i in range(12))


def _orphans_and_rows(url: str) -> tuple[dict[str, int], dict[str, int]]:
    """Per fact table: rows whose batch is gone, and all rows."""
    orphans, rows = {}, {}
    with store_engine(url) as engine, engine.connect() as connection:
        for table in FACT_TABLES.values():
            name = table.name
            rows[name] = connection.exec_driver_sql(f"SELECT count(*) FROM {name}").scalar_one()
            orphans[name] = connection.exec_driver_sql(
                f"SELECT count(*) FROM {name} f WHERE NOT EXISTS "
                "(SELECT 1 FROM ingest_batches b WHERE b.id = f.batch_id)"
            ).scalar_one()
    return orphans, rows


def test_deleting_batches_leaves_no_orphan_facts(migrated_db_url: str, tmp_path: Path) -> None:
    files = {}
    for kind, text, suffix in (
        ("pairwise", PAIRS, "tsv"),
        ("listwise", LISTS, "tsv"),
        ("graded", GRADES, "qrels"),
        ("run", RUN, "trec"),
    ):
        files[kind] = tmp_path / f"{kind}.{suffix}"
        files[kind].write_text(text)
    with store_engine(migrated_db_url) as engine:
        ids = {}
        for kind, path in files.items():
            system = "bm25" if kind == "run" else None
            ids[kind] = ingest_file(engine, kind, path, system=system).batch_id
        # a second pairwise batch, which must keep its rows
        other = tmp_path / "other.tsv"
        other.write_text(PAIRS.replace("\tq", "\tp").replace("\nq", "\np"))
        kept = ingest_file(engine, "pairwise", other).batch_id
        orphans, rows = _orphans_and_rows(migrated_db_url)
        assert set(orphans.values()) == {0}
        assert rows == {
            "pairwise_judgments": 80,
            "listwise_judgments": 12,
            "graded_judgments": 12,
            "run_entries": 12,
        }
        for kind in files:
            delete_batch(engine, ids[kind])
            orphans, rows = _orphans_and_rows(migrated_db_url)
            assert set(orphans.values()) == {0}, kind
            assert rows[FACT_TABLES[kind].name] == (40 if kind == "pairwise" else 0)
        with engine.connect() as connection:
            assert connection.exec_driver_sql("SELECT count(*) FROM systems").scalar_one() == 0
        delete_batch(engine, kept)
    assert _orphans_and_rows(migrated_db_url)[1] == dict.fromkeys(rows, 0)


def _unique_name_indexes(url: str) -> dict[str, list[list[str]]]:
    with store_engine(url) as engine:
        inspector = inspect(engine)
        return {
            model.__tablename__: sorted(
                list(index["column_names"])
                for index in inspector.get_indexes(model.__tablename__)
                if index["unique"]
            )
            for model in [*NAME_MODELS.values(), System]
        }


def test_name_uniqueness_survives_the_first_ingest(migrated_db_url: str, tmp_path: Path) -> None:
    declared = _unique_name_indexes(migrated_db_url)
    assert declared == {key: [["collection_id", "name"]] for key in declared}
    path = tmp_path / "p.tsv"
    path.write_text(PAIRS)
    assert run_cli(migrated_db_url, "ingest", "pairwise", str(path)).exit_code == 0
    assert _unique_name_indexes(migrated_db_url) == declared
    with (
        store_engine(migrated_db_url) as engine,
        engine.begin() as connection,
        pytest.raises(IntegrityError),
    ):
        connection.exec_driver_sql(
            "INSERT INTO items (collection_id, name) SELECT collection_id, name FROM items "
            "WHERE name = 'd3'"
        )


def test_a_name_stored_twice_fails_the_index_build_and_stores_nothing(
    migrated_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the names' memory ever let a name in twice, the unique index refuses the batch."""
    monkeypatch.setattr(rows_module, "CHUNK_ROWS", 10)

    def forget(
        self: object, first: np.ndarray, second: np.ndarray, order: np.ndarray | None = None
    ) -> np.ndarray:
        return np.full(len(first), -1, dtype=np.int64)  # every name looks new

    monkeypatch.setattr(bulk_module._HashedIds, "get", forget)
    path = tmp_path / "p.tsv"
    path.write_text(PAIRS)
    before = store_counts(migrated_db_url)
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "the store refused the batch" in result.output
    assert store_counts(migrated_db_url) == before
    indexes = _unique_name_indexes(migrated_db_url)
    assert indexes == {key: [["collection_id", "name"]] for key in indexes}


def test_postgresql_keeps_the_indexes_of_a_table_another_transaction_uses(
    migrated_db_url: str,
) -> None:
    """The drop needs the table to itself at once (``LOCK ... NOWAIT``), else drops nothing."""
    if not migrated_db_url.startswith("postgresql"):
        pytest.skip("SQLite's write transaction already holds the whole database")
    table = FACT_TABLES["pairwise"]
    with store_engine(migrated_db_url) as engine:
        declared = {str(i["name"]) for i in inspect(engine).get_indexes(table.name)}
        with engine.connect() as other, other.begin():
            other.exec_driver_sql(f"SELECT count(*) FROM {table.name}")  # holds ACCESS SHARE
            with engine.connect() as connection, connection.begin():
                rebuild = bulk_module.defer_indexes(connection, table)
                during = {str(i["name"]) for i in inspect(connection).get_indexes(table.name)}
                rebuild()
                assert connection.exec_driver_sql("SELECT 1").scalar_one() == 1  # usable
        assert during == declared


# Ingests into new collections of an empty store, at the same time: each may try to drop
# the indexes of the same empty tables (on PostgreSQL, all of them locked at once or none).


def test_parallel_first_ingests_into_new_collections(migrated_db_url: str, tmp_path: Path) -> None:
    paths = []
    for n in range(3):
        path = tmp_path / f"p{n}.tsv"
        path.write_text(PAIRS.replace("\td", f"\tc{n}d"))
        paths.append(path)
    go = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", INGEST_WORKER, migrated_db_url, str(p), str(go), f"c{n}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n, p in enumerate(paths)
    ]
    deadline = time.monotonic() + 120
    while not all(Path(f"{p}.ready").exists() for p in paths) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    for worker in workers:
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
        assert "stored 40 pairwise rows" in out
    with store_engine(migrated_db_url) as engine:
        for n in range(3):
            frame = load_pairwise(engine, f"c{n}")
            assert len(frame) == 40
            assert {*frame["winner"], *frame["loser"]} == {f"c{n}d{i}" for i in range(7)}
    indexes = _unique_name_indexes(migrated_db_url)
    assert indexes == {key: [["collection_id", "name"]] for key in indexes}
    assert _orphans_and_rows(migrated_db_url)[1]["pairwise_judgments"] == 120
