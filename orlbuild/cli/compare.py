"""``orlbuild compare``: every pair of systems, per measure, tested; the systems in tiers.

docs/comparing-systems.md, "Comparing many systems": the studentized step-down randomized Tukey
HSD (``max-t``) by default for more than two systems, the paired randomization
test for two; the number of draws is raised (and said so) when it could not
reach a rejection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from orlbuild.cli.input_options import ScorePrecisionOption
from orlbuild.cli.options import (
    BuildOption,
    JobsOption,
    MeasureOption,
    MissingOption,
    SchedulerOption,
)
from orlbuild.cli.render import emit, print_table, report_plan
from orlbuild.cli.score import warn
from orlbuild.cli.state import checked_output, opened_store
from orlbuild.cli.statistics_options import count_callback, count_help, with_test_settings
from orlbuild.errors import ConfigError
from orlbuild.services.comparisons import compare_panels, comparison_settings
from orlbuild.services.evaluations import SystemPanels, build_summary, panels_for_systems
from orlbuild.vocabulary import CompareFormat, CompareTable, OutputFormat, SystemOrder
from scoring.settings import TestSettings
from scoring.vocabulary import (
    MissingPolicy,
    ScorePrecisionName,
)

if TYPE_CHECKING:
    import pandas as pd

    from scoring.statistics import SystemComparison

__all__ = [
    "AllSystemsOption",
    "OptionalSystemsOption",
    "SortOption",
    "compare_command",
    "load_panels",
]

#: ``--system`` of the commands that also take ``--all-systems``.
OptionalSystemsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--system",
        "-s",
        help="A system with a stored run (repeat for each system; or --all-systems).",
        show_default=False,
    ),
]
AllSystemsOption = Annotated[
    bool,
    typer.Option(
        "--all-systems",
        help="Every system with a run in the build's collection (instead of --system).",
    ),
]
SortOption = Annotated[
    SystemOrder,
    typer.Option(
        "--sort",
        help="mean: systems by the first measure's mean, best first; name: in the order given.",
    ),
]
CompareFormatOption = Annotated[
    CompareFormat,
    typer.Option(
        "--format",
        help="Output format; markdown and latex write the leaderboard with a footnote.",
    ),
]
TableOption = Annotated[
    CompareTable,
    typer.Option("--table", help="What --format csv prints: the pairs or the leaderboard."),
]
CompareOutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Write to this file instead of standard output; with --format csv two files, "
        "STEM.pairs.csv and STEM.leaderboard.csv.",
        show_default=False,
    ),
]
#: Confidence level of the leaderboard's intervals of the means.
LEADERBOARD_LEVEL = 0.95


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
    measure: MeasureOption,
    settings: TestSettings,
    system: OptionalSystemsOption = None,
    all_systems: AllSystemsOption = False,
    missing: MissingOption = MissingPolicy.zero,
    score_precision: ScorePrecisionOption = ScorePrecisionName.float32,
    sort: SortOption = SystemOrder.mean,
    fmt: CompareFormatOption = CompareFormat.table,
    table: TableOption = CompareTable.pairs,
    output: CompareOutputOption = None,
    reference_resamples: ReferenceResamplesOption = 0,
    jobs: JobsOption = 1,
    scheduler: SchedulerOption = None,
) -> None:
    """Test every pair of systems on every measure, and group the systems into tiers."""
    if output is not None and fmt is CompareFormat.table:
        raise ConfigError("--output needs --format csv, json, markdown or latex")
    targets = _output_files(output, fmt)
    protected: list[tuple[str, Path]] = []
    for target in targets:
        protected = checked_output(ctx, target)
    scored = load_panels(
        ctx, build, system or [], measure, missing, score_precision, all_systems=all_systems
    )
    order = system_order(scored.panels, measure, sort)
    panels = {m: panel.loc[:, order] for m, panel in scored.panels.items()}
    comparison = compare_panels(panels, settings)
    tiers = ordered_tiers(comparison.tiers(), order, sort)
    shown = comparison_settings(
        comparison.plans,
        settings.permutations,
        settings.alpha,
        settings.seed,
        missing=missing.value,
        queries={m: len(panel) for m, panel in panels.items()},
    )
    conventions = measure_note(scored)
    payload = {
        "build": build_summary(scored.build),
        "settings": shown,
        "conventions": conventions,
        "systems": tiers.to_dict(orient="records"),
        "pairs": comparison.pairs.to_dict(orient="records"),
        "warnings": [*scored.notes, *comparison.warnings],
    }
    if reference_resamples:
        payload["reference"] = reference_payload(
            ctx, build, order, measure, reference_resamples, settings.seed, settings.alpha,
            settings.test, settings.permutations, jobs, scheduler,
            OutputFormat.table if fmt is CompareFormat.table else OutputFormat.json,
        )  # fmt: skip
    warn(scored.notes, OutputFormat.json if fmt is CompareFormat.json else OutputFormat.table)
    report_plan(comparison.notes, comparison.warnings)
    title = next(iter(comparison.plans.values())).describe()
    if fmt is CompareFormat.table:
        emit(
            OutputFormat.table,
            frame=tiers,
            title="Systems: tiers (leader walk) and letters (same letter: n.s.)",
            note=conventions.get("ndcg"),
        )
        emit(OutputFormat.table, frame=comparison.pairs, title=title)
        return
    if fmt is CompareFormat.json:
        _write(targets, None, payload=payload)
        return
    from orlbuild.report.leaderboard_tables import leaderboard_frame

    board = leaderboard_frame(panels, tiers, level=LEADERBOARD_LEVEL)
    if fmt is CompareFormat.csv:
        if "ndcg" in conventions:  # a CSV file holds the data; what its names mean goes here
            typer.echo(f"Note: {conventions['ndcg']}", err=True)
        if targets:
            _write_csv(targets[0], comparison.pairs, protected)
            _write_csv(targets[1], board, protected)
            return
        emit(
            OutputFormat.csv, frame=board if table is CompareTable.leaderboard else comparison.pairs
        )
        return
    text = leaderboard_text(fmt, board, comparison, settings.alpha, order, conventions)
    _write(targets, text, protected=protected)


def system_order(
    panels: Mapping[str, pd.DataFrame], measures: Sequence[str], sort: SystemOrder
) -> list[str]:
    """The systems as the output lists them: by the first measure's mean, best first (ties
    in the order given), or in the order given (``--sort name``)."""
    first = next(iter(panels.values()))
    given = [str(c) for c in first.columns]
    if sort is SystemOrder.given:
        return given
    measure = next((m for m in measures if m in panels), next(iter(panels)))
    means = panels[measure].mean(axis=0)
    position = {s: k for k, s in enumerate(given)}
    return sorted(given, key=lambda s: (-float(means[s]), position[s]))


def ordered_tiers(tiers: pd.DataFrame, order: Sequence[str], sort: SystemOrder) -> pd.DataFrame:
    """``tiers`` best first per measure, or with ``--sort name`` in ``order`` per measure."""
    if sort is SystemOrder.mean:
        return tiers
    position = {s: k for k, s in enumerate(order)}
    keys = tiers["system"].map(position)
    measures = {m: k for k, m in enumerate(dict.fromkeys(tiers["measure"]))}
    frame = tiers.assign(_m=tiers["measure"].map(measures), _s=keys)
    return (
        frame.sort_values(["_m", "_s"], kind="stable")
        .drop(columns=["_m", "_s"])
        .reset_index(drop=True)
    )


def leaderboard_text(
    fmt: CompareFormat,
    board: pd.DataFrame,
    comparison: SystemComparison,
    alpha: float,
    order: Sequence[str],
    conventions: Mapping[str, str] | None = None,
) -> str:
    """The leaderboard in Markdown or LaTeX, with the footnote on the test (and on the grades
    and gain of each nDCG, from ``conventions``; :func:`measure_note`)."""
    from orlbuild.report.leaderboard_tables import (
        leaderboard_footnote,
        leaderboard_latex,
        leaderboard_markdown,
    )

    test = next(iter(comparison.plans.values())).describe()
    implied = int(comparison.pairs["implied"].sum())
    footnote = leaderboard_footnote(test, alpha, LEADERBOARD_LEVEL, implied)
    if conventions and "ndcg" in conventions:
        footnote += f" {conventions['ndcg']}."
    render = leaderboard_markdown if fmt is CompareFormat.markdown else leaderboard_latex
    return render(board, order, footnote, level=LEADERBOARD_LEVEL)


def _output_files(output: Path | None, fmt: CompareFormat) -> list[Path]:
    """The files ``-o`` names: two for CSV (pairs, leaderboard), else the one given."""
    if output is None:
        return []
    if fmt is CompareFormat.csv:
        stem = output.with_suffix("") if output.suffix == ".csv" else output
        return [
            stem.with_name(stem.name + ".pairs.csv"),
            stem.with_name(stem.name + ".leaderboard.csv"),
        ]
    return [output]


def _write_csv(path: Path, frame: pd.DataFrame, protected: list[tuple[str, Path]]) -> None:
    """``frame`` as CSV (the renderer's number format) to ``path``."""
    from orlbuild.output_files import write_output

    text = frame.to_csv(index=False, float_format="%.6g")
    typer.echo(f"wrote {write_output(path, text, protected=protected)}", err=True)


def _write(
    targets: list[Path],
    text: str | None,
    *,
    payload: Any = None,
    protected: list[tuple[str, Path]] | None = None,
) -> None:
    """``text`` (or the JSON ``payload``) to the ``-o`` file, or to standard output."""
    import json

    from orlbuild.cli.render import jsonable, print_json

    if not targets:
        if text is None:
            print_json(payload)
        else:
            typer.echo(text, nl=False)
        return
    from orlbuild.output_files import write_output

    content = text if text is not None else json.dumps(jsonable(payload), indent=2) + "\n"
    path = write_output(targets[0], content, protected=protected or [])
    typer.echo(f"wrote {path}", err=True)


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


def measure_note(scored: SystemPanels) -> dict[str, str]:
    """``{"ndcg": "nDCG@10 = nDCG(grade=lc,gain=linear)@10: ..."}``: the grades and gain of
    each nDCG compared (docs/measures.md, "Baselines"), from the first system's scores
    (every system is scored against the same build); empty without an nDCG."""
    first = next(iter(scored.scores.values()), None)
    note = None if first is None else first.conventions.get("ndcg")
    return {"ndcg": note} if note else {}


def load_panels(
    ctx: typer.Context,
    build: str,
    systems: list[str],
    measures: list[str],
    missing: MissingPolicy,
    score_precision: ScorePrecisionName = ScorePrecisionName.float32,
    *,
    all_systems: bool = False,
) -> SystemPanels:
    """Open the store and score ``systems`` (or, with ``all_systems``, every system with a
    run in the build's collection) against ``build`` as paired panels."""
    from orlbuild.services.build_evaluation import systems_to_compare

    with opened_store(ctx) as engine:
        names = systems_to_compare(engine, build, systems, all_systems=all_systems)
        return panels_for_systems(
            engine,
            build,
            names,
            measures=measures,
            missing=missing,
            score_precision=score_precision,
        )


def register(app: typer.Typer) -> None:
    """Add ``compare`` to the application."""
    app.command("compare")(compare_command)
