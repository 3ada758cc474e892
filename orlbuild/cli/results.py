"""``orlbuild results list|show|export``: evaluations saved with ``orlbuild score --save``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from orlbuild.cli.options import FormatOption, OutputForceOption, PerQueryOption, RawCellsOption
from orlbuild.cli.render import emit, jsonable
from orlbuild.cli.score_tables import score_report
from orlbuild.cli.state import checked_output, opened_store
from orlbuild.services.evaluations import (
    SavedEvaluation,
    build_summary,
    list_evaluations,
    load_evaluation,
)
from orlbuild.vocabulary import OutputFormat, ScoresFileFormat

if TYPE_CHECKING:
    from scoring import EvaluationResult

results_app = typer.Typer(
    help="List, show and export saved evaluations (orlbuild score --save).",
    no_args_is_help=True,
)

EvaluationArgument = Annotated[int, typer.Argument(help="Evaluation id (see `results list`).")]


@results_app.command("list")
def list_command(
    ctx: typer.Context,
    build: Annotated[
        str | None, typer.Option("--build", "-b", help="Only evaluations of this build.")
    ] = None,
    system: Annotated[
        str | None, typer.Option("--system", "-s", help="Only evaluations of this system.")
    ] = None,
    fmt: FormatOption = OutputFormat.table,
    raw_cells: RawCellsOption = False,
) -> None:
    """List saved evaluations, newest first."""
    with opened_store(ctx) as engine:
        frame = list_evaluations(engine, build=build, system=system)
    emit(
        fmt,
        frame=frame,
        payload={"evaluations": frame.to_dict(orient="records")},
        title="Saved evaluations",
        raw_cells=raw_cells,
    )


@results_app.command("show")
def show_command(
    ctx: typer.Context,
    evaluation: EvaluationArgument,
    per_query: PerQueryOption = False,
    fmt: FormatOption = OutputFormat.table,
    raw_cells: RawCellsOption = False,
) -> None:
    """Show a saved evaluation as `orlbuild score` printed it."""
    saved = _load(ctx, evaluation)
    table, payload = score_report(_evaluation(saved), per_query=per_query, extra=_extra(saved))
    title = f"Evaluation {saved.id}: {saved.system}"
    note = payload["conventions"].get("ndcg")
    emit(fmt, frame=table, payload=payload, title=title, raw_cells=raw_cells, note=note)


@results_app.command("export")
def export_command(
    ctx: typer.Context,
    evaluation: EvaluationArgument,
    fmt: Annotated[
        ScoresFileFormat, typer.Option("--format", help="csv (one row per query) or json.")
    ] = ScoresFileFormat.csv,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file (default: stdout).")
    ] = None,
    force: OutputForceOption = False,
    raw_cells: RawCellsOption = False,
) -> None:
    """Export a saved evaluation's per-query values (CSV) or its full document (JSON)."""
    from orlbuild.output_files import write_output

    protected = checked_output(ctx, output, force=force)
    saved = _load(ctx, evaluation)
    if fmt is ScoresFileFormat.json:
        _, payload = score_report(_evaluation(saved), per_query=True, extra=_extra(saved))
        text = json.dumps(jsonable(payload), indent=2, ensure_ascii=False) + "\n"
    else:
        from orlbuild.orl_io.cells import safe_frame

        frame = saved.per_query.reset_index()
        frame = frame if raw_cells else safe_frame(frame)
        text = frame.to_csv(index=False, float_format="%.17g")
    if output is None:
        sys.stdout.write(text)
    else:
        write_output(output, text, protected=protected)
        typer.echo(f"wrote {output}", err=True)


def _load(ctx: typer.Context, evaluation: int) -> SavedEvaluation:
    """Read one saved evaluation."""
    with opened_store(ctx) as engine:
        return load_evaluation(engine, evaluation)


def _evaluation(saved: SavedEvaluation) -> EvaluationResult:
    """The saved scores as the renderers take them (warnings are not saved)."""
    from scoring import EvaluationResult

    return EvaluationResult(per_query=saved.per_query, conventions=dict(saved.conventions))


def _extra(saved: SavedEvaluation) -> dict[str, Any]:
    """The members that identify a saved evaluation in its JSON document."""
    return {
        "build": build_summary(saved.build),
        "system": saved.system,
        "evaluation": {
            "id": saved.id,
            "run_file": saved.run_file,
            "missing": saved.missing,
            "package_version": saved.package_version,
            "created_at": saved.created_at.isoformat(),
            "created_by": saved.created_by,
        },
    }


def register(app: typer.Typer) -> None:
    """Add the ``results`` sub-commands to the application."""
    app.add_typer(results_app, name="results")
