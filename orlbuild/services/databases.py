"""The database a front end names: open it, migrate it, say what it holds.

The store (:mod:`orlbuild.store`) opens, checks and migrates databases; this
module holds the front ends' use cases around it: open (the pipeline creates
its own SQLite file), the schema commands of ``orlbuild db``, the counts of
``orlbuild status``, and a URL shown without its password.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import sqlalchemy
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from orlbuild.store import open_store, upgrade
from orlbuild.store.engine import create_store_engine, hide_password
from orlbuild.store.schema import current_revision, downgrade, head_revision
from orlbuild.store.status import status_frame, store_status

__all__ = [
    "Engine",
    "database_revision",
    "displayed_url",
    "downgrade_database",
    "newest_revision",
    "open_database",
    "store_counts",
    "upgrade_database",
    "written_by_newer",
]

#: The store handle that front ends get from :func:`open_database` and hand back to the
#: services (named here so that the CLI and the pipeline never import the store).
Engine = sqlalchemy.Engine

_SQLITE_PREFIX = "sqlite:///"


def displayed_url(url: str) -> str:
    """``url`` with its password hidden (a URL that cannot be parsed is shown as given)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return hide_password(url)


def open_database(
    url: str,
    *,
    create_sqlite_file: bool = False,
    upgrade_if_empty: bool = True,
    read_only: bool = False,
) -> Engine:
    """Open the store at ``url``.

    Parameters
    ----------
    url
        SQLite or PostgreSQL URL.
    create_sqlite_file
        ``url`` names an SQLite file this front end owns: create it (and its
        folder) if needed and migrate it to the newest schema. Otherwise an
        empty database is migrated, and an older schema stops with the usual
        hint to run ``orlbuild db upgrade``.
    upgrade_if_empty
        Migrate an empty database (the pipeline); ``False`` for the commands,
        which ask for ``orlbuild db upgrade`` instead.
    read_only
        The caller only reads: an SQLite file is opened read-only, so that a
        store that cannot be written still serves it.

    Returns
    -------
    Engine
        Dispose of it when done.
    """
    if create_sqlite_file and url.startswith(_SQLITE_PREFIX):
        Path(url[len(_SQLITE_PREFIX) :]).parent.mkdir(parents=True, exist_ok=True)
        upgrade(url)
        return open_store(url)
    return open_store(url, upgrade_if_empty=upgrade_if_empty, read_only=read_only)


def database_revision(url: str) -> str | None:
    """The schema revision of the database at ``url`` (``None``: no schema yet).

    Only reads: an SQLite file is opened read-only (docs/reliability.md, "When the database fails").
    """
    engine = create_store_engine(url, read_only=True)
    try:
        return current_revision(engine)
    finally:
        engine.dispose()


def written_by_newer(revision: str | None) -> bool:
    """Whether a store at ``revision`` was migrated by a newer orlbuild (an unknown revision)."""
    from orlbuild.store.schema import is_known_revision

    return revision is not None and not is_known_revision(revision)


def newest_revision() -> str:
    """The newest schema revision this orlbuild ships."""
    return head_revision()


def upgrade_database(url: str, revision: str = "head") -> str | None:
    """Migrate the database at ``url`` up to ``revision`` (creating it); the revision reached."""
    upgrade(url, revision)
    return database_revision(url)


def downgrade_database(url: str, revision: str, *, allow_data_loss: bool = False) -> str | None:
    """Migrate down to ``revision``; the revision reached.

    Raises
    ------
    StoreError
        The downgrade would drop tables holding rows and ``allow_data_loss`` is
        false; nothing was changed.
    """
    downgrade(url, revision, allow_data_loss=allow_data_loss)
    return database_revision(url)


def store_counts(engine: Engine, collection: str | None = None) -> tuple[dict, pd.DataFrame]:
    """What the store holds (``orlbuild status``): the document and its table.

    Parameters
    ----------
    engine
        An open store.
    collection
        One collection, or ``None`` for all.
    """
    payload = store_status(engine, collection)
    return payload, status_frame(payload)
