"""``orlbuild report``: a self-contained HTML report of a stored build and its systems."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, cast

import typer

from orlbuild.cli.state import get_state
from orlbuild.pipeline.config import CompareSpec, Correction, PowerSpec, Test
from orlbuild.pipeline.evaluation import evaluate_stored_build
from orlbuild.progress import progress_bar
from orlbuild.report import write_report
from orlbuild.store import open_store
from scoring import parse_measures
from scoring.evaluate import Missing

DEFAULT_MEASURES = ("RDQm2-a1@10", "nDCG@10")


class MissingChoice(str, Enum):
    """ORL queries a run does not answer."""

    zero = "zero"
    skip = "skip"


class TestChoice(str, Enum):
    """Paired significance test."""

    randomization = "randomization"
    t = "t"


class CorrectionChoice(str, Enum):
    """Multiple-comparison correction over the pairs of one measure."""

    holm = "holm"
    bonferroni = "bonferroni"
    none = "none"


def _budgets(text: str | None) -> tuple[int, ...] | None:
    """``"10,20,30"`` -> ``(10, 20, 30)``."""
    if text is None:
        return None
    try:
        values = tuple(sorted({int(v) for v in text.split(",") if v.strip()}))
    except ValueError:
        raise typer.BadParameter(f"use integers separated by commas, got {text!r}") from None
    if not values or values[0] < 1:
        raise typer.BadParameter(f"use positive integers, got {text!r}")
    return values


def report_command(
    ctx: typer.Context,
    build: Annotated[str, typer.Option("--build", help="Build id or name.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="HTML file to write.")] = Path(
        "report.html"
    ),
    system: Annotated[
        list[str] | None,
        typer.Option("--system", help="System to include (repeatable; default: all)."),
    ] = None,
    measure: Annotated[
        list[str] | None,
        typer.Option("--measure", "-m", help="Measure (repeatable; default RDQm2-a1@10, nDCG@10)."),
    ] = None,
    missing: Annotated[
        MissingChoice, typer.Option("--missing", help="ORL queries a run lacks.")
    ] = MissingChoice.zero,
    test: Annotated[TestChoice, typer.Option("--test")] = TestChoice.randomization,
    permutations: Annotated[int, typer.Option("--permutations", min=1)] = 1000,
    correction: Annotated[CorrectionChoice, typer.Option("--correction")] = CorrectionChoice.holm,
    alpha: Annotated[float, typer.Option("--alpha", min=0.0, max=1.0)] = 0.05,
    seed: Annotated[int, typer.Option("--seed", help="Seed of tests and subsamples.")] = 0,
    budgets: Annotated[
        str | None,
        typer.Option("--budgets", help="Power curves for these query budgets, e.g. 10,20,30."),
    ] = None,
    subsamples: Annotated[int, typer.Option("--subsamples", min=1)] = 300,
    title: Annotated[str | None, typer.Option("--title", help="Page title.")] = None,
) -> None:
    """Write one self-contained HTML report: scores with intervals, significance, ORLs, power."""
    measures = list(measure or DEFAULT_MEASURES)
    parse_measures(measures)  # every bad name at once, before opening the store
    compare = CompareSpec(
        test=cast(Test, test.value),
        permutations=permutations,
        correction=cast(Correction, correction.value),
        alpha=alpha,
        seed=seed,
    )
    chosen = _budgets(budgets)
    power = None
    if chosen is not None:
        power = PowerSpec(chosen, subsamples, permutations, alpha, seed, tuple(measures))
    state = get_state(ctx)
    engine = open_store(state.db_url)
    try:
        evaluation = evaluate_stored_build(
            engine,
            build,
            measures,
            systems=system,
            missing=cast(Missing, missing.value),
            compare=compare,
            power=power,
            progress=lambda total: progress_bar(total, "power analysis", quiet=state.quiet),
        )
    finally:
        engine.dispose()
    name = evaluation.build.get("name", build)
    data = evaluation.report_data(title or f"orlbuild report: build {name}")
    typer.echo(f"wrote {write_report(data, output)}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``report`` to the application."""
    app.command("report")(report_command)
