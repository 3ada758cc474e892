"""``orlbuild report``: a self-contained HTML report of a stored build and its systems."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from orlbuild.cli.input_options import ScorePrecisionOption
from orlbuild.cli.options import (
    BuildOption,
    JobsOption,
    MissingOption,
    OutputForceOption,
    SchedulerOption,
)
from orlbuild.cli.power_options import BudgetsOption, SubsamplesOption, parse_budgets
from orlbuild.cli.render import say
from orlbuild.cli.state import checked_output, get_state, opened_store
from orlbuild.cli.statistics_options import (
    AlphaOption,
    CorrectionOption,
    PermutationsOption,
    SeedOption,
    TestOption,
)
from orlbuild.progress import progress_bar
from scoring.settings import TestSettings
from scoring.vocabulary import MissingPolicy, ScorePrecisionName

DEFAULT_MEASURES = ("RDQm2-a1@10", "nDCG@10")


def report_command(
    ctx: typer.Context,
    build: BuildOption,
    output: Annotated[Path, typer.Option("--output", "-o", help="HTML file to write.")] = Path(
        "report.html"
    ),
    force: OutputForceOption = False,
    system: Annotated[
        list[str] | None,
        typer.Option("--system", "-s", help="System to include (repeatable; default: all)."),
    ] = None,
    all_systems: Annotated[
        bool,
        typer.Option(
            "--all-systems",
            help="Every system with a run in the build's collection (the default without "
            "--system).",
        ),
    ] = False,
    measure: Annotated[
        list[str] | None,
        typer.Option("--measure", "-m", help="Measure (repeatable; default RDQm2-a1@10, nDCG@10)."),
    ] = None,
    missing: MissingOption = MissingPolicy.zero,
    score_precision: ScorePrecisionOption = ScorePrecisionName.float32,
    test: TestOption = None,
    permutations: PermutationsOption = TestSettings.permutations,
    correction: CorrectionOption = None,
    alpha: AlphaOption = TestSettings.alpha,
    seed: SeedOption = TestSettings.seed,
    budgets: BudgetsOption = None,
    subsamples: SubsamplesOption = 300,
    title: Annotated[str | None, typer.Option("--title", help="Page title.")] = None,
    jobs: JobsOption = 1,
    scheduler: SchedulerOption = None,
) -> None:
    """Write one self-contained HTML report: scores with intervals, significance, ORLs, power."""
    # the evaluation stack (SciPy, matplotlib) loads only when the command runs
    from orlbuild.executor import resolve_executor
    from orlbuild.report import write_report
    from orlbuild.services.build_evaluation import (
        PowerSpec,
        evaluate_stored_build,
        systems_to_compare,
    )
    from orlbuild.services.deleted_batches import deleted_batches_notice
    from scoring import parse_measures

    protected = checked_output(ctx, output, force=force)
    measures = list(measure or DEFAULT_MEASURES)
    parse_measures(measures)  # every bad name at once, before opening the store
    compare = TestSettings(
        test=test,
        permutations=permutations,
        correction=correction,
        alpha=alpha,
        seed=seed,
    )
    chosen = parse_budgets(budgets)
    executor = resolve_executor(jobs, scheduler)
    power = None
    if chosen is not None:
        power = PowerSpec(tuple(chosen), subsamples, permutations, alpha, seed, tuple(measures))
    quiet = get_state(ctx).quiet
    with opened_store(ctx) as engine:
        chosen_systems = systems_to_compare(engine, build, system or [], all_systems=all_systems)
        gone = deleted_batches_notice(engine, build, "the report", needs_judgments=False)
        evaluation = evaluate_stored_build(
            engine,
            build,
            measures,
            # every system, and a warning for each whose runs were deleted
            systems=None if all_systems else chosen_systems or None,
            missing=missing,
            score_precision=score_precision,
            compare=compare,
            power=power,
            progress=lambda total: progress_bar(total, "power analysis", quiet=quiet),
            executor=executor,
        )
    for line in evaluation.plan_messages():  # also in the report's notes
        typer.echo(line, err=True)
    name = evaluation.build.get("name", build)
    say(gone)
    data = evaluation.report_data(
        title or f"orlbuild report: build {name}", notes=[gone] if gone else []
    )
    for note in evaluation.run_notes():  # also in the report's notes
        typer.echo(f"Warning: {note}", err=True)
    typer.echo(f"wrote {write_report(data, output, protected=protected)}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``report`` to the application."""
    app.command("report")(report_command)
