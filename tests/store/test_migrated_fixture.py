"""The reused migrated stores of ``tests/conftest.py`` are fresh for every test.

``migrated_db_url`` no longer runs the migrations per test: SQLite copies a
migrated file, PostgreSQL empties one database between tests. These tests check
that what a test receives is still indistinguishable from a new migrated store.
"""

from __future__ import annotations

import os

import pytest
from migrated_postgres import MigratedPostgres
from sqlalchemy import create_engine, text

from orlbuild.store import current_revision, downgrade, head_revision
from tests.stores import disposed

PG_URL = os.environ.get("ORLBUILD_TEST_PG_URL")


def _revision(url: str) -> str | None:
    with disposed(create_engine(url)) as engine:
        return current_revision(engine)


def _count_collections(url: str) -> int:
    with disposed(create_engine(url)) as engine, engine.connect() as connection:
        return int(connection.execute(text("SELECT count(*) FROM collections")).scalar_one())


def _add_collection(url: str, name: str = "left over") -> int:
    with disposed(create_engine(url)) as engine, engine.begin() as connection:
        connection.execute(text("INSERT INTO collections (name) VALUES (:n)"), {"n": name})
        return int(connection.execute(text("SELECT max(id) FROM collections")).scalar_one())


def test_a_migrated_store_is_empty_and_at_head(migrated_db_url: str) -> None:
    assert _revision(migrated_db_url) == head_revision()
    assert _count_collections(migrated_db_url) == 0
    assert _add_collection(migrated_db_url) == 1  # identities start at 1


@pytest.mark.postgres
@pytest.mark.skipif(not PG_URL, reason="needs ORLBUILD_TEST_PG_URL")
def test_postgres_rows_are_emptied_and_identities_restart() -> None:
    pool = MigratedPostgres(str(PG_URL))
    try:
        url = pool.acquire()
        assert _add_collection(url) == 1
        assert _add_collection(url, "another") == 2
        idle = create_engine(url)  # a session the test forgot to close
        idle.connect()
        pool.release()
        again = pool.acquire()
        assert again == url  # the same database, reused
        assert _count_collections(again) == 0
        assert _add_collection(again) == 1
        idle.dispose()
    finally:
        pool.close()


@pytest.mark.postgres
@pytest.mark.skipif(not PG_URL, reason="needs ORLBUILD_TEST_PG_URL")
@pytest.mark.parametrize(
    "change",
    [
        "downgrade",
        "ALTER DATABASE {name} SET idle_session_timeout = '300ms'",
        "CREATE INDEX extra_index ON collections (name)",
        "REVOKE ALL ON collections FROM PUBLIC; GRANT SELECT ON collections TO PUBLIC",
    ],
)
def test_postgres_schema_changes_get_a_new_database(change: str) -> None:
    pool = MigratedPostgres(str(PG_URL))
    try:
        url = pool.acquire()
        if change == "downgrade":
            downgrade(url, "base")
        else:
            engine = create_engine(url, isolation_level="AUTOCOMMIT")
            with engine.connect() as connection:
                name = connection.execute(text("SELECT current_database()")).scalar_one()
                for statement in change.format(name=f'"{name}"').split(";"):
                    connection.execute(text(statement))
            engine.dispose()
        pool.release()
        again = pool.acquire()
        assert again != url
        assert _revision(again) == head_revision()
        assert _count_collections(again) == 0
    finally:
        pool.close()
