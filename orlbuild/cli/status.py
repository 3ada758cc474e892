"""``orlbuild status``: what the store holds, per collection."""

from __future__ import annotations

import typer

from orlbuild.cli.render import collection_listing
from orlbuild.services.databases import store_counts


def register(app: typer.Typer) -> None:
    """Add ``status`` to the root application."""
    app.command("status")(
        collection_listing(
            store_counts,
            title="Store status",
            doc="Count queries, items, annotators, judgments, run entries and batches.",
        )
    )
