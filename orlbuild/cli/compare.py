"""``orlbuild compare``: every pair of systems, per measure, tested; the systems in tiers.

docs/comparing-systems.md, "Comparing many systems": the studentized step-down randomized Tukey
HSD (``max-t``) by default for more than two systems, the paired randomization
test for two; the number of draws is raised (and said so) when it could not
reach a rejection.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

import typer

from orlbuild.cli.input_options import ScorePrecisionOption
from orlbuild.cli.options import (
    BuildOption,
    FormatOption,
    JobsOption,
    MeasureOption,
    MissingOption,
    SchedulerOption,
    SystemsOption,
)
from orlbuild.cli.render import emit, print_table, report_plan
from orlbuild.cli.score import warn
from orlbuild.cli.state import opened_store
from orlbuild.cli.statistics_options import count_callback, count_help, with_test_settings
from orlbuild.services.comparisons import compare_panels
from orlbuild.services.evaluations import SystemPanels, build_summary, panels_for_systems
from orlbuild.vocabulary import OutputFormat
from scoring.settings import TestSettings
from scoring.vocabulary import (
    MissingPolicy,
    ScorePrecisionName,
)

if TYPE_CHECKING:
    from scoring.statistics import TestPlan


ReferenceResamplesOption = Annotated[
    int,
    typer.Option(
        "--reference-resamples",
        callback=count_callback("reference_resamples"),
        help=count_help(
            "Rebuild the ORLs on B annotator-bootstrap resamples of the judgments and report "
            "the share of resamples keeping each verdict (0: off)",
            "reference_resamples",
        ),
    ),
]


@with_test_settings
def compare_command(
    ctx: typer.Context,
    build: BuildOption,
    system: SystemsOption,
    measure: MeasureOption,
    settings: TestSettings,
    missing: MissingOption = MissingPolicy.zero,
    score_precision: ScorePrecisionOption = ScorePrecisionName.float32,
    fmt: FormatOption = OutputFormat.table,
    reference_resamples: ReferenceResamplesOption = 0,
    jobs: JobsOption = 1,
    scheduler: SchedulerOption = None,
) -> None:
    """Test every pair of systems on every measure, and group the systems into tiers."""
    scored = load_panels(ctx, build, system, measure, missing, score_precision)
    comparison = compare_panels(scored.panels, settings)
    tiers = comparison.tiers()
    shown = comparison_settings(
        comparison.plans, settings.permutations, settings.alpha, settings.seed
    )
    shown["missing"] = missing.value
    shown["queries"] = {m: len(panel) for m, panel in scored.panels.items()}
    payload = {
        "build": build_summary(scored.build),
        "settings": shown,
        "systems": tiers.to_dict(orient="records"),
        "pairs": comparison.pairs.to_dict(orient="records"),
        "warnings": [*scored.notes, *comparison.warnings],
    }
    if reference_resamples:
        payload["reference"] = reference_payload(
            ctx, build, system, measure, reference_resamples, settings.seed, settings.alpha,
            settings.test, settings.permutations, jobs, scheduler, fmt,
        )  # fmt: skip
    warn(scored.notes, fmt)
    report_plan(comparison.notes, comparison.warnings)
    if fmt is OutputFormat.table:
        print_table(tiers, title="Systems: tiers (leader walk) and letters (same letter: n.s.)")
    title = next(iter(comparison.plans.values())).describe()
    emit(fmt, frame=comparison.pairs, payload=payload, title=title)


def reference_payload(
    ctx: typer.Context,
    build: str,
    systems: list[str],
    measures: list[str],
    resamples: int,
    seed: int,
    alpha: float,
    test: Any,
    permutations: int,
    jobs: int,
    scheduler: str | None,
    fmt: OutputFormat,
) -> dict[str, Any]:
    """Verdicts under reference resampling: JSON entries, and tables on the terminal."""
    from orlbuild.executor import resolve_executor
    from orlbuild.services.reference_resampling import (
        HOLD_THRESHOLD,
        reference_verdicts_for_build,
    )

    with opened_store(ctx) as engine:
        result = reference_verdicts_for_build(
            engine, build, systems, measures,
            resamples=resamples, seed=seed, alpha=alpha,
            test=None if test is None else test.value, permutations=permutations,
            executor=resolve_executor(jobs, scheduler),
        )  # fmt: skip
    pairs = result.pairs[["measure", "a", "b", "significant", "holds", "fragile"]]
    shown = result.systems[
        ["measure", "system", "tier", "rank_lo", "rank_hi", "tier_holds", "interval_holds"]
    ]
    if fmt is OutputFormat.table:
        title = (
            f"Under {result.resamples} reference resamples (fragile: holds under "
            f"< {HOLD_THRESHOLD:.0%})"
        )
        print_table(pairs, title=title)
        print_table(shown, title="Tiers and rank intervals under reference resamples")
    return {
        "resamples": result.resamples,
        "threshold": HOLD_THRESHOLD,
        "pairs": pairs.to_dict(orient="records"),
        "systems": result.systems.to_dict(orient="records"),
    }


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


def load_panels(
    ctx: typer.Context,
    build: str,
    systems: list[str],
    measures: list[str],
    missing: MissingPolicy,
    score_precision: ScorePrecisionName = ScorePrecisionName.float32,
) -> SystemPanels:
    """Open the store and score ``systems`` against ``build`` as paired panels."""
    with opened_store(ctx) as engine:
        return panels_for_systems(
            engine,
            build,
            systems,
            measures=measures,
            missing=missing,
            score_precision=score_precision,
        )


def register(app: typer.Typer) -> None:
    """Add ``compare`` to the application."""
    app.command("compare")(compare_command)
