"""``orlbuild ingest text FILE --of queries|items``: load what the judges read."""

from __future__ import annotations

from typing import Annotated

import typer

from orlbuild.cli.input_options import IngestCollectionOption, InputFileArgument
from orlbuild.cli.state import opened_store
from orlbuild.services.texts import ingest_text
from orlbuild.vocabulary import DEFAULT_COLLECTION, TextFormat, TextOf

__all__ = ["text_command"]


def text_command(
    ctx: typer.Context,
    file: InputFileArgument,
    of: Annotated[
        TextOf,
        typer.Option(
            "--of", help="Whose texts the file holds: queries or items.", show_default=False
        ),
    ],
    collection: IngestCollectionOption = DEFAULT_COLLECTION,
    fmt: Annotated[
        TextFormat | None,
        typer.Option(
            "--format",
            "-f",
            help="Shape: tsv (id, text), title-tsv (id, title, text), jsonl, trec-topics "
            "(default: by content; gzip/bz2 recognised).",
        ),
    ] = None,
    keep_all: Annotated[
        bool,
        typer.Option(
            "--all", help="Keep every record, not only the names the collection already holds."
        ),
    ] = False,
    replace: Annotated[
        bool,
        typer.Option(
            "--replace",
            help="Store texts that differ from the stored ones, as a new batch (the old "
            "texts are kept in theirs).",
        ),
    ] = False,
) -> None:
    """Ingest query or item text: MS MARCO TSV, BEIR/Pyserini JSONL, TREC topics.

    By default only the queries or items the collection already names (judgments, runs,
    ORLs) are kept, reading the file once.
    """
    with opened_store(ctx, writes=True) as engine:
        result = ingest_text(
            engine, file, of=of, collection=collection, fmt=fmt, keep_all=keep_all, replace=replace
        )
    typer.echo(result.message)
    for note in result.notes:
        typer.echo(f"Warning: {note}", err=True)
