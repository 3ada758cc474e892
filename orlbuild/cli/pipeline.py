"""``orlbuild pipeline CONFIG.toml``: the whole job from one config file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from orlbuild.cli.options import FormatOption, JobsOption, SchedulerOption
from orlbuild.cli.render import emit, print_json, print_table
from orlbuild.cli.state import get_state
from orlbuild.vocabulary import OutputFormat

if TYPE_CHECKING:
    from orlbuild.pipeline.runner import PipelineResult


def pipeline_command(
    ctx: typer.Context,
    config: Annotated[Path, typer.Argument(help="The pipeline config (TOML).")],
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="Database URL instead of the config's (same as the global --db).",
            show_default=False,
        ),
    ] = None,
    jobs: JobsOption = 1,
    scheduler: SchedulerOption = None,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Ingest, build ORLs, score and compare systems, write the report - as CONFIG says.

    Inputs already stored are skipped and unchanged builds reused, so running a
    config twice is cheap. Without --db the SQLite file named in the config
    (default orlbuild.db next to it) is used and migrated. The summary lists the
    ORLs built, the mean scores and the significant differences (--format csv:
    the mean scores only).
    """
    # the pipeline stack (builders, SciPy, matplotlib) loads only when the command runs
    from orlbuild.executor import SCHEDULER_ENVIRONMENT_VARIABLE, resolve_executor
    from orlbuild.pipeline import load_config, run_pipeline

    state = get_state(ctx)
    settings = load_config(config)
    # --jobs/--scheduler (or $ORLBUILD_SCHEDULER) override the config's [execution] table.
    from_environment = bool(os.environ.get(SCHEDULER_ENVIRONMENT_VARIABLE))
    given = jobs != 1 or scheduler is not None or from_environment
    executor = resolve_executor(jobs, scheduler) if given else None
    result = run_pipeline(
        settings,
        db_url=db or state.db,
        quiet=state.quiet,
        log=lambda line: typer.echo(line, err=True),
        executor=executor,
    )
    _render(result, fmt)


def _render(result: PipelineResult, fmt: OutputFormat) -> None:
    """The summary: ORLs built, mean scores, significant differences, the report's path."""
    means = result.evaluation.means()
    if fmt is OutputFormat.json:
        print_json(result.to_json())
        return
    note = result.evaluation.conventions.get("ndcg")
    if fmt is OutputFormat.csv:
        emit(fmt, frame=means, note=note)
        return
    print_table(result.builds_frame(), title="ORLs built")
    scored = next(b for b in result.builds if b.name == result.scored_build)
    title = f"Mean scores against {scored.name} ({scored.queries} queries)"
    emit(OutputFormat.table, frame=means, title=title, note=note)
    compare = result.evaluation.compare
    if not result.evaluation.comparisons.empty:
        settings = f"{result.evaluation.test_label()}, alpha {compare.alpha:g}"
        print_table(result.evaluation.verdicts(), title=f"Differences between systems ({settings})")
    if result.report is not None:
        typer.echo(f"Report: {result.report}")


def register(app: typer.Typer) -> None:
    """Add ``pipeline`` to the application."""
    app.command("pipeline")(pipeline_command)
