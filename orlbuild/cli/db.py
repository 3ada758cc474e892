"""``orlbuild db upgrade|downgrade|current``: schema migrations of the store."""

from __future__ import annotations

from typing import Annotated

import typer

from orlbuild.cli.state import get_state
from orlbuild.services.databases import (
    database_revision,
    downgrade_database,
    newest_revision,
    upgrade_database,
    written_by_newer,
)

db_app = typer.Typer(help="Create and migrate the database schema.", no_args_is_help=True)


@db_app.command("upgrade")
def upgrade_command(
    ctx: typer.Context,
    revision: Annotated[str, typer.Argument(help="Target revision.")] = "head",
) -> None:
    """Migrate the database up to REVISION (default: the newest); creates it if needed."""
    reached = upgrade_database(get_state(ctx).db_url, revision)
    typer.echo(f"database at revision {reached or 'base'}", err=True)


@db_app.command("downgrade")
def downgrade_command(
    ctx: typer.Context,
    revision: Annotated[str, typer.Argument(help="Target revision; 'base' drops everything.")],
    yes: Annotated[
        bool,
        typer.Option("--yes", help="Drop tables even when they hold rows (their data is lost)."),
    ] = False,
) -> None:
    """Migrate the database down to REVISION.

    A downgrade that would drop tables holding rows is refused (naming them and
    their row counts) unless --yes is given.
    """
    reached = downgrade_database(get_state(ctx).db_url, revision, allow_data_loss=yes)
    typer.echo(f"database at revision {reached or 'base'}", err=True)


@db_app.command("current")
def current_command(ctx: typer.Context) -> None:
    """Print the database's revision and whether it is the newest."""
    current = database_revision(get_state(ctx).db_url)
    head = newest_revision()
    state = "head" if current == head else "needs `orlbuild db upgrade`"
    if written_by_newer(current):
        state = "written by a newer orlbuild: upgrade orlbuild, not the store"
    typer.echo(f"{current or 'base'} ({state}; newest is {head})")


def register(app: typer.Typer) -> None:
    """Add the ``db`` sub-commands to the root application."""
    app.add_typer(db_app, name="db")
