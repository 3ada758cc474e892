"""``orlbuild compare``: every pair of systems, per measure, with a paired significance test."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import typer

from orlbuild.cli.evaluation import MeasureOption, ScorePrecisionName, ScorePrecisionOption
from orlbuild.cli.render import FormatOption, OutputFormat, emit
from orlbuild.cli.score import (
    BuildOption,
    MissingOption,
    MissingPolicy,
    SystemsOption,
    warn,
)
from orlbuild.cli.state import opened_store
from orlbuild.store.evaluations import SystemPanels, build_summary, panels_for_systems


class PairedTestName(str, Enum):
    """``--test``: the paired two-sided test (RDQ.md section 9)."""

    randomization = "randomization"
    t = "t"


class CorrectionName(str, Enum):
    """``--correction``: multiple-comparison adjustment over the pairs of a measure."""

    holm = "holm"
    bonferroni = "bonferroni"
    none = "none"


TestOption = Annotated[
    PairedTestName,
    typer.Option("--test", help="Paired test: randomization (sign flips) or t."),
]
PermutationsOption = Annotated[
    int, typer.Option("--permutations", min=1, help="Sign flips of the randomization test.")
]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of sign flips (and subsets).")]
CorrectionOption = Annotated[
    CorrectionName,
    typer.Option("--correction", help="Adjust p-values over the pairs of each measure."),
]
AlphaOption = Annotated[
    float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level.")
]


def compare_command(
    ctx: typer.Context,
    build: BuildOption,
    system: SystemsOption,
    measure: MeasureOption,
    test: TestOption = PairedTestName.randomization,
    permutations: PermutationsOption = 1000,
    correction: CorrectionOption = CorrectionName.holm,
    alpha: AlphaOption = 0.05,
    seed: SeedOption = 0,
    missing: MissingOption = MissingPolicy.zero,
    score_precision: ScorePrecisionOption = ScorePrecisionName.float32,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Test every pair of systems on every measure (paired, two-sided)."""
    from scoring.statistics import compare_systems  # SciPy loads only when the command runs

    scored = load_panels(ctx, build, system, measure, missing, score_precision.value)
    pairs = compare_systems(
        scored.panels,
        test=test.value,
        permutations=permutations,
        correction=correction.value,
        alpha=alpha,
        seed=seed,
    )
    settings: dict[str, Any] = {
        "test": test.value,
        "permutations": permutations if test is PairedTestName.randomization else None,
        "correction": correction.value,
        "alpha": alpha,
        "seed": seed,
        "missing": missing.value,
        "queries": {m: len(panel) for m, panel in scored.panels.items()},
    }
    payload = {
        "build": build_summary(scored.build),
        "settings": settings,
        "pairs": pairs.to_dict(orient="records"),
        "warnings": scored.notes,
    }
    warn(scored.notes, fmt)
    emit(fmt, frame=pairs, payload=payload, title=f"Paired {test.value} tests ({correction.value})")


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
