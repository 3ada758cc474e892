"""Batches (list, delete, refusal while a build uses one), status, and the read API."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from sqlalchemy import Column, ForeignKey, Integer, MetaData, Table, insert, select

from orlbuild.errors import StoreError
from orlbuild.services.ingests import ingest_file
from orlbuild.store import (
    batch_fingerprints,
    create_store_engine,
    list_batches,
    list_systems,
    load_pairwise,
    load_run,
)
from orlbuild.store.batches import delete_batch
from orlbuild.store.models import Build, BuildBatch, Collection
from tests.ingest.conftest import run_cli
from tests.stores import disposed, store_engine

PAIRS = "query\tannotator\twinner\tloser\ttie\nq1\ta1\td1\td2\t0\nq2\ta1\td2\td3\t1\n"
RUN = "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n"


@pytest.fixture
def filled_db_url(migrated_db_url: str, tmp_path: Path) -> str:
    """A store with batch 1 = two pairwise rows and batch 2 = a run of system 'bm25'."""
    (tmp_path / "p.tsv").write_text(PAIRS)
    (tmp_path / "r.trec").write_text(RUN)
    with store_engine(migrated_db_url) as engine:
        ingest_file(engine, "pairwise", tmp_path / "p.tsv")
        ingest_file(engine, "run", tmp_path / "r.trec", system="bm25")
    return migrated_db_url


def test_read_api_frames(filled_db_url: str) -> None:
    with store_engine(filled_db_url) as engine:
        pairs = load_pairwise(engine, "default")
        only_q2 = load_pairwise(engine, "default", queries=["q2", "unknown"])
        run = load_run(engine, "default", "bm25")
        fingerprints = batch_fingerprints(engine, pairs["batch_id"])
        assert list_systems(engine) == ["bm25"]
        with pytest.raises(StoreError, match="no collection 'nope'"):
            load_pairwise(engine, "nope")
        with pytest.raises(StoreError, match="no system 'x'"):
            load_run(engine, "default", "x")
        with pytest.raises(StoreError, match="no ingest batch with id 99"):
            batch_fingerprints(engine, [99])
    assert pairs.to_dict("records") == [
        {
            "query": "q1",
            "annotator": "a1",
            "winner": "d1",
            "loser": "d2",
            "tie": False,
            "count": 1,
            "winner_first": None,  # the native shape does not say which was shown first
            "batch_id": 1,
        },
        {
            "query": "q2",
            "annotator": "a1",
            "winner": "d2",
            "loser": "d3",
            "tie": True,
            "count": 1,
            "winner_first": None,  # the native shape does not say which was shown first
            "batch_id": 1,
        },
    ]
    assert only_q2["query"].tolist() == ["q2"]
    assert run[["item", "rank"]].to_numpy().tolist() == [["d1", 1], ["d2", 2]]
    info = fingerprints[1]
    assert (info.kind, info.row_count, len(info.sha256)) == ("pairwise", 2, 64)


def test_batches_list_cli(filled_db_url: str) -> None:
    result = run_cli(filled_db_url, "batches", "list", "--format", "json")
    assert result.exit_code == 0, result.output
    batches = json.loads(result.stdout)
    assert [(b["id"], b["kind"], b["row_count"], b["system"]) for b in batches] == [
        (1, "pairwise", 2, ""),
        (2, "run", 2, "bm25"),
    ]


def test_status_json_shape(filled_db_url: str) -> None:
    result = run_cli(filled_db_url, "status", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "collections": {
            "default": {
                "queries": 2,
                "items": 3,
                "annotators": 1,
                "listwise": 0,
                "pairwise": 2,
                "graded": 0,
                "runs": {"bm25": 2},
                "batches": 2,
            }
        }
    }
    table = run_cli(filled_db_url, "status", "--collection", "default", "--format", "csv")
    assert table.stdout.splitlines()[1].startswith("default,2,3,1,0,2,0,1,2,2")
    missing = run_cli(filled_db_url, "status", "--collection", "nope")
    assert missing.exit_code == 1 and "no collection 'nope'" in missing.output


def test_delete_batch_removes_its_rows_only(filled_db_url: str) -> None:
    result = run_cli(filled_db_url, "batches", "delete", "1")
    assert result.exit_code == 0 and "deleted batch 1 (2 rows)" in result.output
    with store_engine(filled_db_url) as engine:
        assert load_pairwise(engine).empty
        assert len(load_run(engine, "default", "bm25")) == 2
        assert list_batches(engine)["id"].tolist() == [2]
    assert run_cli(filled_db_url, "batches", "delete", "1").exit_code == 1


def _record_build_reading(url: str, batch_id: int) -> None:
    """Store a minimal build row that records it read ``batch_id``."""
    with disposed(create_store_engine(url)) as engine, engine.begin() as connection:
        cid = connection.scalar(select(Collection.id))
        build_id = connection.execute(
            insert(Build).values(
                collection_id=cid, source="pairwise", method="bt", parameters={},
                package_version="0", seed=0, created_at=datetime.now(timezone.utc),
                created_by="t", n_queries=0, n_failed=0,
            )
        ).inserted_primary_key[0]  # fmt: skip
        connection.execute(
            insert(BuildBatch).values(
                build_id=build_id, batch_id=batch_id, kind="pairwise", file_name="p.tsv",
                sha256="0" * 64, row_count=2,
            )
        )  # fmt: skip


def test_delete_is_refused_while_a_build_uses_the_batch(filled_db_url: str) -> None:
    _record_build_reading(filled_db_url, 1)
    refused = run_cli(filled_db_url, "batches", "delete", "1")
    assert refused.exit_code == 1
    assert "used by 1 row(s) of 'build_batches'" in refused.output
    assert "--force" in refused.output
    forced = run_cli(filled_db_url, "batches", "delete", "1", "--force")
    assert forced.exit_code == 0, forced.output
    with disposed(create_store_engine(filled_db_url)) as engine, engine.connect() as connection:
        kept = connection.execute(select(BuildBatch.batch_id, BuildBatch.sha256)).all()
    assert kept == [(None, "0" * 64)]  # the build keeps its record of what it read


def test_any_table_referencing_a_batch_blocks_deletion(filled_db_url: str) -> None:
    """The refusal is generic: a future table with a non-null reference also blocks it."""
    engine = create_store_engine(filled_db_url)
    metadata = MetaData()
    uses = Table(
        "batch_users",
        metadata,
        Column("id", Integer, primary_key=True),
        Column("batch_id", ForeignKey("ingest_batches.id"), nullable=False),
    )
    Table("ingest_batches", metadata, Column("id", Integer, primary_key=True))
    try:
        uses.create(engine)
        with engine.begin() as connection:
            connection.execute(insert(uses).values(batch_id=2))
        with pytest.raises(StoreError, match="batch 2 is used by 1 row"):
            delete_batch(engine, 2)
        assert delete_batch(engine, 2, force=True) == 2
        with engine.connect() as connection:
            assert connection.execute(select(uses)).all() == []
    finally:
        engine.dispose()
