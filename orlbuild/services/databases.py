"""Open the database a front end names, creating and migrating a new SQLite file on request.

The store (:mod:`orlbuild.store`) opens, checks and migrates databases; this
module holds the front ends' choices around it: the pipeline creates its own
SQLite file, and a URL is shown without its password.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from orlbuild.store import open_store, upgrade
from orlbuild.store.engine import Engine

__all__ = ["Engine", "displayed_url", "open_database"]

_SQLITE_PREFIX = "sqlite:///"


def displayed_url(url: str) -> str:
    """``url`` with its password hidden (a URL that cannot be parsed is shown as given)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def open_database(url: str, *, create_sqlite_file: bool = False) -> Engine:
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

    Returns
    -------
    Engine
        Dispose of it when done.
    """
    if create_sqlite_file and url.startswith(_SQLITE_PREFIX):
        Path(url[len(_SQLITE_PREFIX) :]).parent.mkdir(parents=True, exist_ok=True)
        upgrade(url)
        return open_store(url)
    return open_store(url, upgrade_if_empty=True)
