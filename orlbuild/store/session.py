"""Opening the store: an engine that is checked to be at the newest schema revision."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

from sqlalchemy import Engine, inspect

from orlbuild.errors import SchemaOutOfDateError
from orlbuild.store.driver_errors import database_errors
from orlbuild.store.engine import create_store_engine
from orlbuild.store.schema import UPGRADE_HINT, require_head, upgrade

__all__ = ["open_store"]


def open_store(url: str, *, upgrade_if_empty: bool = False, read_only: bool = False) -> Engine:
    """Open the store at ``url``, refusing a database that is not at the newest revision.

    Parameters
    ----------
    url
        SQLite or PostgreSQL URL.
    upgrade_if_empty
        Migrate a database that has no tables at all (e.g. a new SQLite file
        the caller creates itself) to the newest revision first. A database
        with an older schema is never upgraded implicitly.
    read_only
        Open an SQLite file read-only, for commands that only read
        (docs/reliability.md, "When the database fails"); ``mode=ro`` URIs are
        read-only anyway.

    Returns
    -------
    Engine
        Ready for the read API (``load_*``) and for ingestion. Dispose of it
        when done.

    Raises
    ------
    SchemaOutOfDateError
        The database is empty or behind; the message says to run
        ``orlbuild db upgrade``.
    """
    engine = create_store_engine(url, read_only=read_only and not upgrade_if_empty)
    database = str(engine.url.database or "")
    if database.startswith("file:"):  # an SQLite URI: file:PATH?mode=ro
        database = unquote(database[len("file:") :])
    sqlite_file = engine.dialect.name == "sqlite" and database not in ("", ":memory:")
    if sqlite_file and not upgrade_if_empty and not Path(database).exists():
        engine.dispose()
        # Checked before connecting, which would leave an empty file behind.
        raise SchemaOutOfDateError(f"there is no database file {database}; {UPGRADE_HINT}")
    try:
        with database_errors(engine):
            if upgrade_if_empty:
                with engine.connect() as connection:
                    empty = not inspect(connection).get_table_names()
                if empty:
                    upgrade(url)
            require_head(engine)
    except BaseException:
        engine.dispose()
        raise
    return engine
