"""``orlbuild quality BUILD``: comparison counts, agreement with the ORL, cycles."""

from __future__ import annotations

from typing import Annotated

import pandas as pd
import typer

from orlbuild.cli.options import BuildArgument, FormatOption, RawCellsOption
from orlbuild.cli.render import emit, print_json, say
from orlbuild.cli.state import opened_store
from orlbuild.services.builds import assess_build
from orlbuild.services.deleted_batches import deleted_batches_notice
from orlbuild.vocabulary import OutputFormat

__all__ = ["register"]


def quality_command(
    ctx: typer.Context,
    build: BuildArgument,
    min_comparisons: Annotated[
        int, typer.Option(help="Flag items compared fewer times than this.")
    ] = 5,
    fmt: FormatOption = OutputFormat.table,
    raw_cells: RawCellsOption = False,
) -> None:
    """Check a build: comparisons per item/pair, agreement overall and per annotator, cycles.

    Per annotator (people and LLM judges alike): agreement with the ORL,
    Cohen's kappa with the other annotators on shared pairs, and position bias
    where the data say which item was shown first.

    csv prints the per-annotator agreement; json prints everything.
    """
    with opened_store(ctx) as engine:
        say(deleted_batches_notice(engine, build, "quality"))
        quality = assess_build(engine, build, min_comparisons=min_comparisons)
    record, report = quality.record, quality.report
    flagged = report.items[report.items["flagged"]]
    if fmt is OutputFormat.json:
        print_json(
            {
                "build": record.id,
                "agreement": report.agreement,
                "annotators": report.annotators.to_dict("records"),
                "items": report.items.to_dict("records"),
                "pairs": report.pairs.to_dict("records"),
                "flagged_items": flagged.to_dict("records"),
                "cycles": report.cycles.to_dict("records"),
                "judges": [] if quality.judges is None else quality.judges.to_dict("records"),
            }
        )
        return
    if fmt is OutputFormat.csv:
        emit(fmt, frame=report.annotators, raw_cells=raw_cells)
        return
    summary = pd.DataFrame(
        [
            ("raw preferences", f"{quality.preferences}"),
            ("agreement with the ORL (all preferences)", f"{report.agreement:.4f}"),
            (f"items with < {min_comparisons} comparisons", f"{len(flagged)}"),
            ("queries with majority-preference cycles", f"{report.cycles['query'].nunique()}"),
            (
                "position bias",
                "per annotator below"
                if report.annotators["position_bias"].notna().any()
                else "not recorded (only arena, evalica and crowd-kit files say which item "
                "was shown first)",
            ),
        ],
        columns=["check", "value"],
    )
    emit(fmt, frame=summary, title=f"quality of build {record.id}")
    emit(fmt, frame=report.annotators, title="agreement per annotator")
    if quality.judges is not None and len(quality.judges):
        emit(fmt, frame=quality.judges, title="LLM judges (docs/llm-judges.md)")
    if len(flagged):
        emit(fmt, frame=flagged, title=f"items under --min-comparisons {min_comparisons}")
    if len(report.cycles):
        per_query = report.cycles.groupby("query", sort=True).agg(
            shortest=("length", "min"), cycles=("cycle", "size"), example=("cycle", "first")
        )
        emit(fmt, frame=per_query, title="majority-preference cycles (all in --format json)")


def register(app: typer.Typer) -> None:
    """Add ``quality`` to the root application."""
    app.command("quality")(quality_command)
