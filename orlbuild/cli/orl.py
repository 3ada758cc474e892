"""``orlbuild orl list|show|export|diff``: read stored builds."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from orlbuild.cli.options import BuildArgument, FormatOption, QueryFilterOption
from orlbuild.cli.render import collection_listing, emit
from orlbuild.cli.state import checked_output, opened_store
from orlbuild.services.orls import diff_builds, export_build, list_stored_builds, show_build
from orlbuild.vocabulary import ExportFormat, OutputFormat

__all__ = ["register"]

orl_app = typer.Typer(help="List, show, export and compare built ORLs.", no_args_is_help=True)


orl_app.command("list")(
    collection_listing(
        list_stored_builds, title="builds", doc="List the stored builds, newest first."
    )
)


@orl_app.command("show")
def show_command(
    ctx: typer.Context,
    build: BuildArgument,
    query: QueryFilterOption = None,
    fmt: FormatOption = OutputFormat.table,
    rank_intervals: Annotated[
        bool,
        typer.Option(
            "--rank-intervals",
            help="Add each item's simultaneous rank interval (rank_lo, rank_hi) at level "
            "1 - sig; pairwise builds only (refits the build's judgments).",
        ),
    ] = False,
) -> None:
    """Show a build's tiers with scores and 95% intervals."""
    with opened_store(ctx) as engine:
        shown = show_build(engine, build, query, rank_intervals=rank_intervals)
    record = shown.record
    payload = {"build": record.to_json(), "queries": shown.tiers_by_query()}
    emit(fmt, frame=shown.entries, payload=payload, title=f"build {record.id} ({record.method})")


@orl_app.command("export")
def export_command(
    ctx: typer.Context,
    build: BuildArgument,
    fmt: Annotated[
        ExportFormat, typer.Option("--format", help="json, tsv, qrels or trec-prefs.")
    ] = (ExportFormat.json),
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
    all_orders: Annotated[
        bool,
        typer.Option(
            "--all-orders/--backed-orders",
            help="trec-prefs: every order the tiers state, or only those a test backs "
            "(default: unbacked boundaries merged, under-judged items left out).",
        ),
    ] = False,
) -> None:
    """Export a build's ORLs as JSON, TSV, TREC qrels (grade = T - rank + 1) or trec-prefs."""
    from orlbuild.output_files import write_output

    protected = checked_output(ctx, output)
    with opened_store(ctx) as engine:
        exported = export_build(engine, build, fmt, all_orders=all_orders)
    if output is None:
        sys.stdout.write(exported.text)
    else:
        write_output(output, exported.text, protected=protected)
        what = f"{exported.entries} entries of build {exported.record.id}"
        typer.echo(f"wrote {what} to {output}", err=True)


@orl_app.command("diff")
def diff_command(
    ctx: typer.Context,
    build_a: Annotated[str, typer.Argument(help="First build (id or name).")],
    build_b: Annotated[str, typer.Argument(help="Second build (id or name).")],
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Per query, the items that moved tier between two builds."""
    with opened_store(ctx) as engine:
        diff = diff_builds(engine, build_a, build_b)
    a, b = diff.a.id, diff.b.id
    states = diff.states if diff.states is not None else pd.DataFrame()
    payload = {"a": a, "b": b, "moved": diff.moved.to_dict("records")}
    payload["states"] = states.to_dict("records")
    emit(fmt, frame=diff.moved, payload=payload, title=f"build {a} -> build {b}")
    if fmt is OutputFormat.table and len(states):
        emit(
            fmt, frame=states, title="tested decisions by state (separated, equivalent, undecided)"
        )


def register(app: typer.Typer) -> None:
    """Add the ``orl`` sub-commands to the root application."""
    app.add_typer(orl_app, name="orl")
