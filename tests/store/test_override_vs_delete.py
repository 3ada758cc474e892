"""An override racing a forced delete of its build's batch is atomic (issue 39).

On PostgreSQL the override's insert of its build's batch references failed with a
``ForeignKeyViolation`` traceback when the batch was deleted between the override's read
and its write, and its computed ORLs were lost. The write now locks the batches it cites
(or finds them gone and records them by hash, as a batch deleted before the build).
Both backends (tests/conftest.py).
"""

from __future__ import annotations

import threading
from typing import Any

import pandas as pd
import pytest

import orlbuild.services.builds as builds_service
from orlbuild.builders.parameters import BuildParameters
from orlbuild.errors import StoreError
from orlbuild.records import OverrideRequest
from orlbuild.services.batches import delete_ingest_batch
from orlbuild.services.builds import build_and_store, override_build
from orlbuild.store.builds import get_build
from tests.builders.store_data import store_judgments
from tests.stores import store_engine


def _stored_build(url: str, name: str = "audited") -> tuple[int, int]:
    """A listwise build over one batch: (build id, batch id)."""
    frame = pd.DataFrame(
        [(q, item, rank) for q in ("q1", "q2") for rank, item in enumerate("abc", 1)],
        columns=["query", "item", "rank"],
    )
    batch = store_judgments(url, "listwise", frame, file_name=name)
    with store_engine(url) as engine:
        built = build_and_store(engine, BuildParameters(source="listwise"), name=name)
    return built.id, batch


def test_a_batch_deleted_between_read_and_write_leaves_a_stored_override(
    migrated_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    build, batch = _stored_build(migrated_db_url)
    real = builds_service.store_build

    def delete_first(*args: Any, **kwargs: Any) -> int:
        with store_engine(migrated_db_url) as other:
            delete_ingest_batch(other, batch, force=True)
        return real(*args, **kwargs)

    monkeypatch.setattr(builds_service, "store_build", delete_first)
    with store_engine(migrated_db_url) as engine:
        derived = override_build(engine, build, OverrideRequest("q1", "merge", merge_tier=1))
        record = get_build(engine, derived)
    assert record.parent_id == build
    assert record.batches and all(b.id < 0 for b in record.batches)  # known by hash only


@pytest.mark.parametrize("round_", range(4))
def test_an_override_racing_a_forced_delete_is_stored_or_refused_in_one_line(
    migrated_db_url: str, monkeypatch: pytest.MonkeyPatch, round_: int
) -> None:
    build, batch = _stored_build(migrated_db_url)
    barrier = threading.Barrier(2, timeout=30)
    real = builds_service.store_build

    def held(*args: Any, **kwargs: Any) -> int:
        barrier.wait()
        return real(*args, **kwargs)

    monkeypatch.setattr(builds_service, "store_build", held)
    outcomes: dict[str, Any] = {}

    def auditor() -> None:
        with store_engine(migrated_db_url) as engine:
            try:
                outcomes["override"] = override_build(
                    engine, build, OverrideRequest("q1", "race", merge_tier=1)
                )
            except StoreError as error:
                outcomes["override"] = error

    def deleter() -> None:
        with store_engine(migrated_db_url) as engine:
            barrier.wait()
            outcomes["delete"] = delete_ingest_batch(engine, batch, force=True).rows

    threads = [threading.Thread(target=auditor), threading.Thread(target=deleter)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert outcomes["delete"] == 6
    result = outcomes["override"]
    if isinstance(result, StoreError):  # refused: one line, its computation saved
        assert "\n" not in str(result) and "computed but not stored" in str(result)
    else:
        with store_engine(migrated_db_url) as engine:
            record = get_build(engine, result)
        assert record.batches and all(
            b.id < 0 for b in record.batches
        )  # the reference went with the batch
