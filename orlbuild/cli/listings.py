"""``orlbuild systems list [--collection C]`` and ``orlbuild collections list``: what the
store holds, with counts."""

from __future__ import annotations

import typer

from orlbuild.cli.render import collection_listing
from orlbuild.services.listings import list_collections_counted, list_systems_counted

__all__ = ["register"]

systems_app = typer.Typer(help="List the systems that have runs.", no_args_is_help=True)
collections_app = typer.Typer(help="List the collections.", no_args_is_help=True)

systems_app.command("list")(
    collection_listing(
        list_systems_counted,
        title="Systems",
        doc="List the systems with a run: collection, runs (batches), queries and rows.",
    )
)
collections_app.command("list")(
    collection_listing(
        list_collections_counted,
        title="Collections",
        doc="List the collections: names, judgments, systems, batches and builds stored.",
    )
)


def register(app: typer.Typer) -> None:
    """Add ``systems list`` and ``collections list`` to the root application."""
    app.add_typer(systems_app, name="systems")
    app.add_typer(collections_app, name="collections")
