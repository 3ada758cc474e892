"""``orlbuild power``: power@n, N80, discriminative power and ranking stability per measure."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import pandas as pd
import typer

from orlbuild.cli.compare import (
    AllSystemsOption,
    OptionalSystemsOption,
    load_panels,
    measure_note,
)
from orlbuild.cli.input_options import ScorePrecisionOption
from orlbuild.cli.options import (
    BuildOption,
    FormatOption,
    JobsOption,
    MeasureOption,
    MissingOption,
    OutputForceOption,
    SchedulerOption,
)
from orlbuild.cli.power_options import BudgetsOption, SubsamplesOption, parse_budgets
from orlbuild.cli.render import emit
from orlbuild.cli.score import warn
from orlbuild.cli.state import checked_output, get_state
from orlbuild.cli.statistics_options import (
    AlphaOption,
    PermutationsOption,
    SeedOption,
    TestOption,
)
from orlbuild.progress import progress_bar
from orlbuild.services.comparisons import power_budgets, power_for_panels, power_steps
from orlbuild.services.evaluations import build_summary
from orlbuild.vocabulary import OutputFormat
from scoring.settings import TestSettings
from scoring.vocabulary import MissingPolicy, ScorePrecisionName

if TYPE_CHECKING:  # SciPy and matplotlib load only when the command runs
    from scoring.statistics import PowerResult


def power_command(
    ctx: typer.Context,
    build: BuildOption,
    measure: MeasureOption,
    system: OptionalSystemsOption = None,
    all_systems: AllSystemsOption = False,
    budgets: BudgetsOption = None,
    subsamples: SubsamplesOption = 300,
    permutations: PermutationsOption = TestSettings.permutations,
    alpha: AlphaOption = TestSettings.alpha,
    test: TestOption = None,
    seed: SeedOption = TestSettings.seed,
    missing: MissingOption = MissingPolicy.zero,
    score_precision: ScorePrecisionOption = ScorePrecisionName.float32,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Write power and stability curves (PNG).")
    ] = None,
    force: OutputForceOption = False,
    jobs: JobsOption = 1,
    scheduler: SchedulerOption = None,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """How many queries each measure needs to separate the systems, and how stably it ranks them.

    With more than two systems the default test is the studentized step-down
    randomized Tukey HSD (``max-t``): power@n
    is then the share of query subsets on which a pair separates in a
    comparison of all the systems (family-wise).
    """
    from orlbuild.executor import resolve_executor

    protected = checked_output(ctx, plot, force=force)
    chosen = parse_budgets(budgets)
    executor = resolve_executor(jobs, scheduler)
    scored = load_panels(
        ctx, build, system or [], measure, missing, score_precision, all_systems=all_systems
    )
    plan = power_budgets(scored.panels, chosen)
    total = power_steps(plan, subsamples)
    with progress_bar(total, "power analysis", quiet=get_state(ctx).quiet) as advance:
        results = power_for_panels(
            scored.panels,
            plan,
            subsamples=subsamples,
            permutations=permutations,
            alpha=alpha,
            test=None if test is None else test.value,
            seed=seed,
            executor=executor,
            advance=advance,
        )
    if plot is not None:
        from orlbuild.report.figures import save_power_stability

        save_power_stability(results, plot, protected=protected)
        typer.echo(f"wrote {plot}", err=True)
    warn(scored.notes, fmt)
    first = next(iter(results.values()))
    conventions = measure_note(scored)
    payload = {
        "build": build_summary(scored.build),
        "systems": [str(c) for c in next(iter(scored.panels.values())).columns],
        "settings": {
            "test": first.test,
            "permutations": first.permutations,
            "alpha": alpha,
            "subsamples": subsamples,
            "seed": seed,
        },
        "measures": {name: result.to_dict() for name, result in results.items()},
        "conventions": conventions,
        "warnings": scored.notes,
    }
    title = f"Power and stability ({first.test}, alpha = {alpha:g})"
    note = conventions.get("ndcg")
    emit(fmt, frame=power_table(results), payload=payload, title=title, note=note)


def power_table(results: dict[str, PowerResult]) -> pd.DataFrame:
    """One row per (measure, budget) with the measure's summaries repeated on each row."""
    frames = []
    for name, result in results.items():
        frame = result.summary().reset_index()
        frame.insert(0, "measure", name)
        frame["n80"] = result.n80
        frame["discriminative_power"] = result.discriminative_power
        frame["tau80_budget"] = result.tau80_budget
        frame["auc_tau"] = result.auc_tau
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def register(app: typer.Typer) -> None:
    """Add ``power`` to the application."""
    app.command("power")(power_command)
