"""Migration 0011: name columns compare as bytes (``COLLATE "C"``) on PostgreSQL, as on SQLite."""

from __future__ import annotations

from sqlalchemy import text

from orlbuild.store import create_store_engine, downgrade, list_systems, upgrade
from orlbuild.store.bulk import ensure_collection, ensure_names
from orlbuild.store.models import Annotator, Item, Query, System
from tests.stores import disposed

NAME_TABLES = ("queries", "items", "annotators", "systems")

#: Names whose byte order differs from a locale's (case, accents, punctuation).
NAMES = ["b", "B", "a_1", "a-1", "A", "é", "e", "Z", "_z", "10", "9", "ü2", "u3"]


def _collations(url: str) -> dict[str, str | None]:
    """Each name table's ``name`` collation (PostgreSQL), or ``None`` for the default."""
    with disposed(create_store_engine(url)) as engine, engine.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT table_name, collation_name FROM information_schema.columns "
                "WHERE column_name = 'name' AND table_name IN "
                "('queries', 'items', 'annotators', 'systems')"
            )
        ).all()
    return {str(table): collation for table, collation in rows}


def test_name_columns_are_collated_c_on_postgresql_and_downgrade_restores(db_url: str) -> None:
    upgrade(db_url)
    postgres = db_url.startswith("postgresql")
    if postgres:
        assert _collations(db_url) == dict.fromkeys(NAME_TABLES, "C")
    with disposed(create_store_engine(db_url)) as engine:
        with engine.begin() as connection:
            cid = ensure_collection(connection, "default")
            for model in (Query, Item, Annotator, System):
                ensure_names(connection, model, cid, NAMES)
        downgrade(db_url, "0010_bulk_load_keys")
        if postgres:
            assert _collations(db_url) == dict.fromkeys(NAME_TABLES, None)
        with engine.connect() as connection:
            for table in NAME_TABLES:
                stored = connection.execute(text(f"SELECT name FROM {table}")).scalars()
                assert sorted(stored) == sorted(NAMES)
        upgrade(db_url)
        if postgres:
            assert _collations(db_url) == dict.fromkeys(NAME_TABLES, "C")
        with engine.begin() as connection:  # names are still found, not stored twice
            cid = ensure_collection(connection, "default")
            again = ensure_names(connection, Item, cid, NAMES)
            assert len(set(again.tolist())) == len(NAMES)
            assert connection.execute(text("SELECT count(*) FROM items")).scalar() == len(NAMES)


def test_names_sort_as_utf8_bytes_on_every_backend(migrated_db_url: str, tmp_path) -> None:
    from tests.ingest.conftest import run_cli

    run = tmp_path / "run.txt"
    for system in NAMES:
        run.write_text(f"q1 Q0 d1 1 2.0 {system}\nq1 Q0 d2 2 1.0 {system}\n")
        result = run_cli(migrated_db_url, "ingest", "run", str(run), "--system", system)
        assert result.exit_code == 0, result.output
    with disposed(create_store_engine(migrated_db_url)) as engine:
        listed = list_systems(engine)
        assert listed == sorted(NAMES, key=lambda name: name.encode())
        with engine.connect() as connection:  # and ORDER BY in SQL, on every name table
            ordered = connection.execute(text("SELECT name FROM systems ORDER BY name")).scalars()
            assert list(ordered) == listed
