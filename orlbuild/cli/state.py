"""Global CLI state shared by every sub-command (database URL, verbosity)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:  # the store (SQLAlchemy) loads only in commands that open it
    from orlbuild.output_files import StoredInput
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


def checked_output(
    ctx: typer.Context, path: Path | None, *, force: bool = False
) -> list[tuple[str, Path] | StoredInput]:
    """Refuse ``path`` before any work when it is the store, an input or cannot be written.

    The inputs are the files the stored batches were read from, matched by path and by
    content; ``force`` lets such a file be overwritten, with a warning naming it.
    Returns the protected files to pass on to the writer (docs/reliability.md, "Output files").
    """
    from orlbuild.errors import OrlbuildError
    from orlbuild.output_files import check_output, input_matches, sqlite_store_files

    url = get_state(ctx).db_url
    protected: list[tuple[str, Path] | StoredInput] = [
        ("the store", p) for p in sqlite_store_files(url)
    ]
    if path is None:
        return protected
    inputs: list[StoredInput] = []
    try:
        with opened_store(ctx) as engine:
            from orlbuild.services.batches import stored_inputs

            inputs = stored_inputs(engine)
    except OrlbuildError:  # no store (yet): the command says so when it opens it
        pass
    if force:
        for match in input_matches(path, inputs):
            typer.echo(f"warning: --force: overwriting {path}, {match}", err=True)
    else:
        protected += inputs
    check_output(path, protected=protected)
    return protected


@contextmanager
def opened_store(ctx: typer.Context, *, writes: bool = False) -> Iterator[Engine]:
    """The store of the ``--db`` URL, checked to be at the newest schema, disposed after.

    Commands that only read (``writes=False``) open an SQLite file read-only,
    so they work on a store that cannot be written.
    """
    from orlbuild.services.databases import open_database

    url = get_state(ctx).db_url
    engine = open_database(url, upgrade_if_empty=False, read_only=not writes)
    try:
        yield engine
    finally:
        engine.dispose()
