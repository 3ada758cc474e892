"""``orlbuild orl list|show|export|diff``: read stored builds."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from orlbuild.cli.options import (
    BuildArgument,
    FormatOption,
    OutputForceOption,
    QueryFilterOption,
    RawCellsOption,
)
from orlbuild.cli.render import collection_listing, emit, say
from orlbuild.cli.state import checked_output, opened_store
from orlbuild.services.deleted_batches import deleted_batches_notice
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
    text: Annotated[
        bool,
        typer.Option(
            "--text/--no-text",
            help="Print each item's stored title or text (shortened) beside it, when "
            "`ingest text` stored any.",
        ),
    ] = True,
    raw_cells: RawCellsOption = False,
) -> None:
    """Show a build's tiers with scores and 95% intervals."""
    from orlbuild.services.texts import add_text_column

    with opened_store(ctx) as engine:
        if rank_intervals:
            say(deleted_batches_notice(engine, build, "--rank-intervals"))
        shown = show_build(engine, build, query, rank_intervals=rank_intervals)
        entries = shown.entries
        if text:
            entries = add_text_column(engine, shown.record.collection, entries)
    record = shown.record
    payload = {"build": record.to_json(), "queries": shown.tiers_by_query()}
    if "text" in entries.columns:
        payload["texts"] = dict(zip(entries["item"], entries["text"], strict=True))
    title = f"build {record.id} ({record.method})"
    emit(fmt, frame=entries, payload=payload, title=title, raw_cells=raw_cells)


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
    force: OutputForceOption = False,
    all_orders: Annotated[
        bool,
        typer.Option(
            "--all-orders/--backed-orders",
            help="trec-prefs: every order the tiers state, or only those a test backs "
            "(default: unbacked boundaries merged, under-judged items left out).",
        ),
    ] = False,
    raw_cells: RawCellsOption = False,
) -> None:
    """Export a build's ORLs as JSON, TSV, TREC qrels (grade = T - rank + 1) or trec-prefs."""
    from orlbuild.orl_io.writing import trec_prefs_preferences
    from orlbuild.output_files import write_output

    protected = checked_output(ctx, output, force=force)
    with opened_store(ctx) as engine:
        exported = export_build(engine, build, fmt, all_orders=all_orders, raw_cells=raw_cells)
    if fmt is ExportFormat.trec_prefs and not trec_prefs_preferences(exported.text):
        hint = " (pass --all-orders to write every order the tiers state)" if not all_orders else ""
        say(
            f"warning: the trec-prefs export of build {exported.record.id} states no preference: "
            f"every query's items are at one level{hint}"
        )
    if output is None:
        sys.stdout.write(exported.text)
    else:
        write_output(output, exported.text, protected=protected)
        what = f"{exported.entries} entries of build {exported.record.id}"
        typer.echo(f"wrote {what} to {output}", err=True)


#: Rows of moved items a table shows without --limit (csv and json give all of them).
DIFF_TABLE_ROWS = 50


@orl_app.command("diff")
def diff_command(
    ctx: typer.Context,
    build_a: Annotated[str, typer.Argument(help="First build (id or name).")],
    build_b: Annotated[str, typer.Argument(help="Second build (id or name).")],
    query: QueryFilterOption = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=0,
            help=f"Show at most N moved items (0: all; default: {DIFF_TABLE_ROWS} in a table, "
            "all in csv and json).",
        ),
    ] = None,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Per query, the items that moved tier between two builds: a summary first (moved up,
    moved down, added, removed per query), then the items."""
    with opened_store(ctx) as engine:
        diff = diff_builds(engine, build_a, build_b, query=query)
    a, b = diff.a.id, diff.b.id
    states = diff.states if diff.states is not None else pd.DataFrame()
    shown = limit if limit is not None else (DIFF_TABLE_ROWS if fmt is OutputFormat.table else 0)
    moved = diff.moved if not shown else diff.moved.head(shown)
    summary = diff.summary()
    payload = {
        "a": a,
        "b": b,
        "totals": diff.totals(),
        "summary": summary.to_dict("records"),
        "moved": moved.to_dict("records"),
        "states": states.to_dict("records"),
    }
    if fmt is OutputFormat.csv:
        emit(fmt, frame=moved)
        return
    if fmt is OutputFormat.json:
        emit(fmt, frame=moved, payload=payload)
        return
    typer.echo(diff.headline())
    if len(summary):
        emit(fmt, frame=summary, title="per query (up, down, added, removed)")
    title = "moved items"
    if len(moved) < len(diff.moved):
        title += f" (the first {len(moved)} of {len(diff.moved)}; --limit 0 shows all)"
    emit(fmt, frame=moved, title=title)
    if len(states):
        emit(
            fmt, frame=states, title="tested decisions by state (separated, equivalent, undecided)"
        )


def register(app: typer.Typer) -> None:
    """Add the ``orl`` sub-commands to the root application."""
    app.add_typer(orl_app, name="orl")
