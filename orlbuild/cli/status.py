"""``orlbuild status``: what the store holds, per collection."""

from __future__ import annotations

import typer

from orlbuild.cli.options import CollectionFilterOption, FormatOption
from orlbuild.cli.render import emit
from orlbuild.cli.state import opened_store
from orlbuild.services.databases import store_counts
from orlbuild.vocabulary import OutputFormat


def status_command(
    ctx: typer.Context,
    collection: CollectionFilterOption = None,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Count queries, items, annotators, judgments, run entries and batches."""
    with opened_store(ctx) as engine:
        payload, frame = store_counts(engine, collection)
    emit(fmt, frame=frame, payload=payload, title="Store status")


def register(app: typer.Typer) -> None:
    """Add ``status`` to the root application."""
    app.command("status")(status_command)
