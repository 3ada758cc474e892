"""PostgreSQL: names another transaction stores meanwhile are not stored twice (``store/bulk.py``).

New names go in by a plain ``INSERT ... SELECT`` of the names not yet stored,
in a savepoint; when a concurrent transaction commits one of them first, the
unique index refuses it and the names go in again with ``ON CONFLICT DO
NOTHING``. This drives that fallback deterministically: transaction A holds an
uncommitted name, B's insert of the same name waits for A, A commits, B
falls back and gets A's id.
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest
from sqlalchemy import create_engine, insert, select

from orlbuild.store.bulk import _ids_staged_copy, ensure_collection
from orlbuild.store.models import Item

pytestmark = pytest.mark.skipif(
    not os.environ.get("ORLBUILD_TEST_PG_URL"), reason="a PostgreSQL race"
)


def test_a_name_committed_meanwhile_is_reused(migrated_db_url: str) -> None:
    if not migrated_db_url.startswith("postgresql"):
        pytest.skip("the staged-names path is PostgreSQL's")
    engine = create_engine(migrated_db_url)
    table = Item.__table__
    try:
        with engine.begin() as setup:
            collection = ensure_collection(setup, "c")
        holder = engine.connect()
        first = holder.begin()
        held = holder.execute(
            insert(table).values(collection_id=collection, name="shared").returning(table.c.id)
        ).scalar_one()
        result: dict[str, object] = {}

        def other() -> None:
            try:
                with engine.begin() as connection:
                    result["ids"] = _ids_staged_copy(
                        connection, table, collection, ["shared", "fresh"]
                    )
            except Exception as exc:  # reported by the assertion below
                result["error"] = exc

        thread = threading.Thread(target=other)
        thread.start()
        time.sleep(1.0)  # the other insert now waits on "shared"
        assert thread.is_alive()
        first.commit()
        holder.close()
        thread.join(30)
        assert "error" not in result, result.get("error")
        ids = np.asarray(result["ids"])
        with engine.connect() as connection:
            stored = dict(
                connection.execute(
                    select(table.c.name, table.c.id).where(table.c.collection_id == collection)
                ).all()
            )
        assert stored == {"shared": held, "fresh": int(ids[1])}
        assert int(ids[0]) == held
    finally:
        engine.dispose()
