"""Migrations are the source of the schema: up, down, up again; models agree with them."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

from orlbuild.errors import SchemaOutOfDateError
from orlbuild.store import (
    create_store_engine,
    current_revision,
    downgrade,
    head_revision,
    open_store,
    upgrade,
)
from orlbuild.store.models import Base


def _tables(url: str) -> set[str]:
    engine = create_store_engine(url)
    try:
        with engine.connect() as connection:
            return set(inspect(connection).get_table_names()) - {"alembic_version"}
    finally:
        engine.dispose()


def test_upgrade_downgrade_upgrade(db_url: str) -> None:
    upgrade(db_url)
    assert _tables(db_url) >= {"queries", "items", "pairwise_judgments", "ingest_batches"}
    downgrade(db_url, "base")
    assert _tables(db_url) == set()
    upgrade(db_url)
    engine = create_store_engine(db_url)
    try:
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_models_match_migrations(migrated_db_url: str) -> None:
    engine = create_store_engine(migrated_db_url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            diff = compare_metadata(context, Base.metadata)
    finally:
        engine.dispose()
    assert diff == []


def test_empty_database_is_refused_with_upgrade_hint(db_url: str) -> None:
    with pytest.raises(SchemaOutOfDateError, match="orlbuild db upgrade"):
        open_store(db_url)


def test_database_behind_head_is_refused(db_url: str) -> None:
    upgrade(db_url)
    downgrade(db_url, "base")
    with pytest.raises(SchemaOutOfDateError, match="orlbuild db upgrade"):
        open_store(db_url)


def test_unknown_revision_is_refused(migrated_db_url: str) -> None:
    engine = create_store_engine(migrated_db_url)
    try:
        with engine.begin() as connection:
            connection.execute(text("UPDATE alembic_version SET version_num = 'ffffffff'"))
    finally:
        engine.dispose()
    with pytest.raises(SchemaOutOfDateError, match="newer version"):
        open_store(migrated_db_url)


def test_open_store_can_create_a_new_database(db_url: str) -> None:
    engine = open_store(db_url, upgrade_if_empty=True)
    try:
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_sqlite_connections_use_wal_foreign_keys_and_busy_timeout(tmp_path) -> None:
    engine = create_store_engine(f"sqlite:///{tmp_path / 'x.db'}")
    try:
        with engine.connect() as connection:
            pragma = lambda name: connection.exec_driver_sql(f"PRAGMA {name}").scalar()  # noqa: E731
            assert pragma("journal_mode") == "wal"
            assert pragma("foreign_keys") == 1
            assert pragma("busy_timeout") >= 10_000
    finally:
        engine.dispose()
