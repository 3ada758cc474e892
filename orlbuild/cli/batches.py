"""``orlbuild batches list|delete``: the ingested files (provenance)."""

from __future__ import annotations

from typing import Annotated

import typer

from orlbuild.cli.render import collection_listing
from orlbuild.cli.state import opened_store
from orlbuild.services.batches import delete_ingest_batch, list_ingest_batches

batches_app = typer.Typer(help="List and delete ingest batches.", no_args_is_help=True)


batches_app.command("list")(
    collection_listing(
        list_ingest_batches,
        title="Ingest batches",
        doc="List the ingested files: id, kind, file, sha256, rows, when and by whom.",
    )
)


@batches_app.command("delete")
def delete_command(
    ctx: typer.Context,
    batch_id: Annotated[int, typer.Argument(metavar="ID", help="Batch id (see `batches list`).")],
    force: Annotated[
        bool, typer.Option("--force", help="Delete even if an ORL build used the batch.")
    ] = False,
    text: Annotated[
        bool, typer.Option("--text", help="ID is a text batch's (kind text in `batches list`).")
    ] = False,
) -> None:
    """Delete a batch and every row it stored (refused while a build uses it).

    Deleting a system's last run batch removes the system; deleting a text batch
    makes the texts it replaced current again.
    """
    with opened_store(ctx, writes=True) as engine:
        deleted = delete_ingest_batch(engine, batch_id, force=force, text=text)
    typer.echo(f"deleted {'text ' if text else ''}batch {batch_id} ({deleted.rows} rows)")
    if deleted.removed_system is not None:
        typer.echo(f"system {deleted.removed_system!r} has no run left and was removed", err=True)


def register(app: typer.Typer) -> None:
    """Add the ``batches`` sub-commands to the root application."""
    app.add_typer(batches_app, name="batches")
