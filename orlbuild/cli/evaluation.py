"""``orlbuild eval`` (files in, scores out - no database) and ``orlbuild measures``."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from orlbuild.cli.render import FormatOption, OutputFormat, emit
from orlbuild.cli.score_tables import score_report
from orlbuild.ingest.kinds import DuplicatePolicy
from orlbuild.ingest.source import InputFormat
from orlbuild.orl_files import read_orl_file, read_run_file
from scoring import MEASURES, evaluate, parse_measures
from scoring.measures import RDQ
from scoring.penalties import PENALTIES
from scoring.weights import WEIGHT_PRESETS

MeasureOption = Annotated[
    list[str],
    typer.Option("--measure", "-m", help="Measure name, e.g. RDQm2-a1@10 (repeatable)."),
]


def eval_command(
    orl_file: Annotated[Path, typer.Argument(help="ORLs: .qrels, .tsv (query item rank), .json.")],
    run_file: Annotated[Path, typer.Argument(help="A TREC run (or query,item,rank[,score]).")],
    measure: MeasureOption,
    per_query: Annotated[bool, typer.Option("--per-query", help="One row per query.")] = False,
    missing: Annotated[
        str, typer.Option("--missing", help="ORL queries absent from the run: zero|skip.")
    ] = "zero",
    duplicates: Annotated[
        DuplicatePolicy, typer.Option("--duplicates", help="Repeated run lines: error|keep-first.")
    ] = DuplicatePolicy.error,
    grade_agg: Annotated[
        str,
        typer.Option("--grade-agg", help="Combine annotators' grades: median|mean|max|majority."),
    ] = "median",
    orl_format: Annotated[
        InputFormat | None, typer.Option("--orl-format", help="Force the ORL file's format.")
    ] = None,
    run_format: Annotated[
        InputFormat | None, typer.Option("--run-format", help="Force the run file's format.")
    ] = None,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Score a run file against an ORL file (no database needed)."""
    if missing not in ("zero", "skip"):
        raise typer.BadParameter("use zero or skip", param_hint="--missing")
    from orlbuild.builders.parameters import GRADE_AGGREGATES

    if grade_agg not in GRADE_AGGREGATES:
        raise typer.BadParameter(f"use {', '.join(GRADE_AGGREGATES)}", param_hint="--grade-agg")
    parse_measures(measure)  # report every bad name at once, before reading any file
    orls, notes = read_orl_file(orl_file, fmt=orl_format, grade_agg=grade_agg)
    run = read_run_file(run_file, fmt=run_format, duplicates=duplicates)
    frame = evaluate(orls, run, measure, missing=missing)  # type: ignore[arg-type]
    table, payload = score_report(frame, per_query=per_query)
    payload["warnings"] = notes + payload["warnings"]
    if fmt is not OutputFormat.json:
        for note in payload["warnings"]:
            typer.echo(f"Warning: {note}", err=True)
    emit(fmt, frame=table, payload=payload, title=f"{run_file.name} vs {orl_file.name}")


def measures_command(fmt: FormatOption = OutputFormat.table) -> None:
    """List the measures, their parameters, the RDQ aliases, weight presets and penalties."""
    rows = []
    for alias, params in RDQ.ALIASES.items():
        preset = ",".join(
            f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items()
        )
        rows.append({"measure": f"{alias}@k", "parameters": preset, "description": "RDQ alias"})
    for name, cls in MEASURES.items():
        defaults = ", ".join(f"{f.name}={f.default}" for f in fields(cls) if f.name != "cutoff")
        suffix = "@k" if cls.NEEDS_CUTOFF else "[@k]"
        rows.append(
            {"measure": name + suffix, "parameters": defaults, "description": cls.DESCRIPTION}
        )
    frame = pd.DataFrame(rows)
    payload = {
        "measures": rows,
        "weight_presets": {name: list(values) for name, values in WEIGHT_PRESETS.items()},
        "penalties": list(PENALTIES),
    }
    emit(fmt, frame=frame, payload=payload, title="Measures")
    if fmt is OutputFormat.table:
        presets = pd.DataFrame(
            {
                "preset": list(WEIGHT_PRESETS),
                "weights (last repeats)": [
                    ", ".join(f"{w:g}" for w in v) for v in WEIGHT_PRESETS.values()
                ],
            }
        )
        emit(fmt, frame=presets, title="Weight presets")


def register(app: typer.Typer) -> None:
    """Add ``eval`` and ``measures`` to the application."""
    app.command("eval")(eval_command)
    app.command("measures")(measures_command)
