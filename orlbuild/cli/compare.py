"""``orlbuild compare``: every pair of systems, per measure, tested; the systems in tiers.

docs/comparing-systems.md, "Comparing many systems": the studentized step-down randomized Tukey
HSD (``max-t``) by default for more than two systems, the paired randomization
test for two; the number of draws is raised (and said so) when it could not
reach a rejection.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import typer

from orlbuild.cli.options import (
    AlphaOption,
    BuildOption,
    CorrectionOption,
    FormatOption,
    MeasureOption,
    MissingOption,
    OutputFormat,
    PermutationsOption,
    ScorePrecisionOption,
    SeedOption,
    SystemsOption,
    TestOption,
)
from orlbuild.cli.render import emit, print_table
from orlbuild.cli.score import warn
from orlbuild.cli.state import opened_store
from orlbuild.services.evaluations import (
    SystemPanels,
    build_summary,
    compare_panels,
    panels_for_systems,
)
from scoring.vocabulary import (
    MissingPolicy,
    ScorePrecisionName,
)

if TYPE_CHECKING:
    from scoring.statistics import TestPlan


def compare_command(
    ctx: typer.Context,
    build: BuildOption,
    system: SystemsOption,
    measure: MeasureOption,
    test: TestOption = None,
    permutations: PermutationsOption = 1000,
    correction: CorrectionOption = None,
    alpha: AlphaOption = 0.05,
    seed: SeedOption = 0,
    missing: MissingOption = MissingPolicy.zero,
    score_precision: ScorePrecisionOption = ScorePrecisionName.float32,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Test every pair of systems on every measure, and group the systems into tiers."""
    scored = load_panels(ctx, build, system, measure, missing, score_precision.value)
    comparison = compare_panels(
        scored.panels,
        test=None if test is None else test.value,
        permutations=permutations,
        correction=None if correction is None else correction.value,
        alpha=alpha,
        seed=seed,
    )
    tiers = comparison.tiers()
    settings = comparison_settings(comparison.plans, permutations, alpha, seed)
    settings["missing"] = missing.value
    settings["queries"] = {m: len(panel) for m, panel in scored.panels.items()}
    payload = {
        "build": build_summary(scored.build),
        "settings": settings,
        "systems": tiers.to_dict(orient="records"),
        "pairs": comparison.pairs.to_dict(orient="records"),
        "warnings": [*scored.notes, *comparison.warnings],
    }
    warn(scored.notes, fmt)
    report_plan(comparison.notes, comparison.warnings)
    if fmt is OutputFormat.table:
        print_table(tiers, title="Systems: tiers (leader walk) and letters (same letter: n.s.)")
    title = next(iter(comparison.plans.values())).describe()
    emit(fmt, frame=comparison.pairs, payload=payload, title=title)


def comparison_settings(
    plans: Mapping[str, TestPlan], requested: int, alpha: float, seed: int
) -> dict[str, Any]:
    """The ``settings`` of the JSON document: the test as run, with what was changed."""
    first = next(iter(plans.values()))
    draws = [p.permutations for p in plans.values() if p.permutations is not None]
    return {
        "test": first.test.value,
        "permutations": max(draws) if draws else None,
        "permutations_requested": requested,
        "exact": {m: p.exact for m, p in plans.items()},
        "correction": first.correction,
        "alpha": alpha,
        "seed": seed,
        "smallest_attainable_p": {m: p.smallest_p for m, p in plans.items()},
        "notes": list(dict.fromkeys(p.note for p in plans.values() if p.note)),
    }


def report_plan(notes: list[str], warnings: list[str]) -> None:
    """Say on standard error what the test plan changed, and what it could not fix."""
    for note in notes:
        typer.echo(f"Note: {note}", err=True)
    for warning in warnings:
        typer.echo(f"Warning: {warning}", err=True)


def load_panels(
    ctx: typer.Context,
    build: str,
    systems: list[str],
    measures: list[str],
    missing: MissingPolicy,
    score_precision: str = "float32",
) -> SystemPanels:
    """Open the store and score ``systems`` against ``build`` as paired panels."""
    with opened_store(ctx) as engine:
        return panels_for_systems(
            engine,
            build,
            systems,
            measures=measures,
            missing=missing.literal,
            score_precision=score_precision,  # type: ignore[arg-type]
        )


def register(app: typer.Typer) -> None:
    """Add ``compare`` to the application."""
    app.command("compare")(compare_command)
