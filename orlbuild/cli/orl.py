"""``orlbuild orl list|show|export|diff``: read stored builds."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer

from orlbuild.cli.options import CollectionFilterOption, FormatOption, OutputFormat
from orlbuild.cli.render import emit
from orlbuild.cli.state import opened_store
from orlbuild.orl_io.writing import diff_orl_entries, export_orls
from orlbuild.store.builds import get_build, list_builds, load_build_entries

__all__ = ["register"]

orl_app = typer.Typer(help="List, show, export and compare built ORLs.", no_args_is_help=True)


class ExportFormat(str, Enum):
    """Formats of ``orl export`` (README, "Input formats": ORL exports)."""

    json = "json"
    tsv = "tsv"
    qrels = "qrels"
    trec_prefs = "trec-prefs"


@orl_app.command("list")
def list_command(
    ctx: typer.Context,
    collection: CollectionFilterOption = None,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """List the stored builds, newest first."""
    with opened_store(ctx) as engine:
        frame = list_builds(engine, collection)
    frame["created_at"] = frame["created_at"].astype(str)
    emit(fmt, frame=frame, title="builds")


def _tiers_payload(entries: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    """query -> tiers, each with its items' scores and intervals."""
    out: dict[str, list[dict[str, Any]]] = {}
    for (query, _rank), part in entries.groupby(["query", "rank"], sort=True):
        items = part.drop(columns=["query", "rank"]).to_dict("records")
        out.setdefault(str(query), []).append({"rank": int(part["rank"].iloc[0]), "items": items})
    return out


@orl_app.command("show")
def show_command(
    ctx: typer.Context,
    build: Annotated[str, typer.Argument(help="Build id or name.")],
    query: Annotated[str | None, typer.Option(help="Only this query.")] = None,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Show a build's tiers with scores and 95% intervals."""
    with opened_store(ctx) as engine:
        record = get_build(engine, build)
        entries = load_build_entries(engine, record.id, None if query is None else [query])
    payload = {"build": record.to_json(), "queries": _tiers_payload(entries)}
    emit(fmt, frame=entries, payload=payload, title=f"build {record.id} ({record.method})")


@orl_app.command("export")
def export_command(
    ctx: typer.Context,
    build: Annotated[str, typer.Argument(help="Build id or name.")],
    fmt: Annotated[
        ExportFormat, typer.Option("--format", help="json, tsv, qrels or trec-prefs.")
    ] = (ExportFormat.json),
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
) -> None:
    """Export a build's ORLs as JSON, TSV or TREC qrels (grade = T - rank + 1)."""
    with opened_store(ctx) as engine:
        record = get_build(engine, build)
        entries = load_build_entries(engine, record.id)
    text = export_orls(entries, fmt.value, build=record.to_json())
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {len(entries)} entries of build {record.id} to {output}", err=True)


@orl_app.command("diff")
def diff_command(
    ctx: typer.Context,
    build_a: Annotated[str, typer.Argument(help="First build (id or name).")],
    build_b: Annotated[str, typer.Argument(help="Second build (id or name).")],
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Per query, the items that moved tier between two builds."""
    with opened_store(ctx) as engine:
        a, b = get_build(engine, build_a), get_build(engine, build_b)
        diff = diff_orl_entries(load_build_entries(engine, a.id), load_build_entries(engine, b.id))
    payload = {"a": a.id, "b": b.id, "moved": diff.to_dict("records")}
    emit(fmt, frame=diff, payload=payload, title=f"build {a.id} -> build {b.id}")


def register(app: typer.Typer) -> None:
    """Add the ``orl`` sub-commands to the root application."""
    app.add_typer(orl_app, name="orl")
