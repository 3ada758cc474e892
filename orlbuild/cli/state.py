"""Global CLI state shared by every sub-command (database URL, verbosity)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:  # the store (SQLAlchemy) loads only in commands that open it
    from orlbuild.services.databases import Engine

DEFAULT_DB_URL = "sqlite:///orlbuild.db"
DB_ENV_VAR = "ORLBUILD_DB"


@dataclass
class AppState:
    """Options given before the sub-command.

    Attributes
    ----------
    db
        The ``--db`` option, or ``None`` when not given.
    debug
        Show tracebacks instead of one-line errors.
    quiet
        Suppress progress bars.
    """

    db: str | None = None
    debug: bool = False
    quiet: bool = False

    @property
    def db_url(self) -> str:
        """The database URL: ``--db`` > ``$ORLBUILD_DB`` > ``sqlite:///orlbuild.db``."""
        return self.db or os.environ.get(DB_ENV_VAR) or DEFAULT_DB_URL


def get_state(ctx: typer.Context) -> AppState:
    """Return the :class:`AppState` of the root context (a default one if absent)."""
    root = ctx.find_root()
    if not isinstance(root.obj, AppState):
        root.obj = AppState()
    return root.obj


@contextmanager
def opened_store(ctx: typer.Context) -> Iterator[Engine]:
    """The store of the ``--db`` URL, checked to be at the newest schema, disposed after."""
    from orlbuild.services.databases import open_database

    engine = open_database(get_state(ctx).db_url, upgrade_if_empty=False)
    try:
        yield engine
    finally:
        engine.dispose()
