"""``orlbuild eval``: files in, scores out - no database."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from orlbuild.cli.input_options import DuplicatesOption, ScorePrecisionOption
from orlbuild.cli.measures import RelLevelOption, measures_at_level
from orlbuild.cli.options import FormatOption, MeasureOption, MissingOption, PerQueryOption
from orlbuild.cli.render import Columns, emit, report_plan
from orlbuild.cli.statistics_options import with_test_settings
from orlbuild.vocabulary import GradeAggregate, InputFormat, OutputFormat, SystemOrder, values
from scoring.settings import TestSettings
from scoring.vocabulary import DuplicatePolicy, MissingPolicy, ScorePrecisionName

if TYPE_CHECKING:
    from collections.abc import Mapping

    from orlbuild.services.file_evaluations import FileEvaluation
    from scoring import EvaluationResult

GRADE_AGGREGATES = values(GradeAggregate)


@with_test_settings
def eval_command(
    orl_file: Annotated[
        Path, typer.Argument(help="ORLs: TREC qrels, .tsv (query item rank), .json; .gz/.bz2 ok.")
    ],
    run_files: Annotated[
        list[Path],
        typer.Argument(help="One or more TREC runs (or query,item,rank[,score]); .gz/.bz2 ok."),
    ],
    measure: MeasureOption,
    rel_level: RelLevelOption = None,
    per_query: PerQueryOption = False,
    missing: MissingOption = MissingPolicy.zero,
    duplicates: DuplicatesOption = DuplicatePolicy.error,
    grade_agg: Annotated[
        str,
        typer.Option(
            "--grade-agg",
            metavar=f"<{'|'.join(GRADE_AGGREGATES)}>",
            help="Combine annotators' grades.",
        ),
    ] = GradeAggregate.median.value,
    orl_format: Annotated[
        InputFormat | None, typer.Option("--orl-format", help="Force the ORL file's format.")
    ] = None,
    run_format: Annotated[
        InputFormat | None, typer.Option("--run-format", help="Force the run files' format.")
    ] = None,
    score_precision: ScorePrecisionOption = ScorePrecisionName.float32,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare", help="Test every two runs, as `orlbuild compare` tests stored systems."
        ),
    ] = False,
    sort: Annotated[
        SystemOrder,
        typer.Option(
            "--sort", help="Several runs: by the first measure's mean, best first, or file order."
        ),
    ] = SystemOrder.mean,
    *,
    settings: TestSettings,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Score one or more run files against an ORL file (no database needed)."""
    from orlbuild.services.file_evaluations import evaluate_files

    if grade_agg not in GRADE_AGGREGATES:  # checked here: the message lists every word
        raise typer.BadParameter(f"use {', '.join(GRADE_AGGREGATES)}", param_hint="--grade-agg")
    if compare and len(run_files) < 2:
        raise typer.BadParameter("--compare needs at least two runs", param_hint="--compare")
    result = evaluate_files(
        orl_file,
        run_files,
        measures_at_level(measure, rel_level),
        missing=missing,
        duplicates=duplicates,
        grade_agg=grade_agg,
        orl_format=orl_format,
        run_format=run_format,
        score_precision=score_precision,
        compare=settings if compare else None,
    )
    if len(result.evaluations) == 1:
        name, evaluation = next(iter(result.evaluations.items()))
        _emit_one(
            evaluation,
            result.notes,
            per_query,
            fmt,
            f"{run_files[0].name} vs {orl_file.name}",
            result.undefined_reasons.get(name),
        )
    else:
        title = f"{len(result.evaluations)} runs vs {orl_file.name}"
        if sort is SystemOrder.mean:
            title += f", by mean {next(iter(result.evaluations.values())).measures[0]}"
        _emit_many(
            result,
            per_query=per_query,
            fmt=fmt,
            title=title,
            compared=settings if compare else None,
            sort=sort,
            missing=missing,
        )


def _emit_one(
    evaluation: EvaluationResult,
    notes: list[str],
    per_query: bool,
    fmt: OutputFormat,
    title: str,
    reasons: Mapping[str, Mapping[str, int]] | None = None,
) -> None:
    """One run: the table and JSON shape of ``orlbuild score`` (``reasons``: why measures are
    undefined where they are).

    The table of means is :class:`~orlbuild.cli.render.Columns`, drawn as
    ``score_report``'s frame is: without per-query rows, ``eval`` loads no
    pandas (docs/performance.md, "Speed of `orlbuild eval`").
    """
    from orlbuild.cli.score_tables import score_payload, score_report

    table: Any
    if per_query:
        table, payload = score_report(evaluation, per_query=True, reasons=reasons)
    else:
        payload = score_payload(evaluation, reasons=reasons)
        means = payload["mean"]
        table = Columns(
            {"measure": list(means), "mean": list(means.values())}, numeric=frozenset({"mean"})
        )
    payload["warnings"] = notes + payload["warnings"]
    if fmt is not OutputFormat.json:
        for note in payload["warnings"]:
            typer.echo(f"Warning: {note}", err=True)
    emit(fmt, frame=table, payload=payload, title=title, note=evaluation.conventions.get("ndcg"))


def _emit_many(
    result: FileEvaluation,
    *,
    per_query: bool,
    fmt: OutputFormat,
    title: str,
    compared: TestSettings | None,
    sort: SystemOrder = SystemOrder.mean,
    missing: MissingPolicy = MissingPolicy.zero,
) -> None:
    """Several runs: a systems x measures table (docs/evaluating-files.md, "Evaluating files"),
    best first by the first measure's mean unless ``sort`` is ``name`` (file order); with
    ``compared`` (``--compare``'s test settings) the JSON has the ``settings`` and ``pairs``
    of ``orlbuild compare``'s (docs/comparing-systems.md, "One JSON shape")."""
    import pandas as pd

    from orlbuild.cli.score_tables import score_payload, score_report
    from orlbuild.services.file_evaluations import run_warnings

    systems: dict[str, Any] = {}
    warnings = [*result.notes, *run_warnings(result.evaluations, result.undefined_reasons)]
    rows, means = [], []  # per-query tables, or one row of means per system
    for name, evaluation in _in_order(result.evaluations, sort):
        if per_query:
            table, payload = score_report(evaluation, per_query=True)
            rows.append(table.reset_index().assign(system=name))
        else:
            payload = score_payload(evaluation)
            means.append({"system": name, **payload["mean"]})
        systems[name] = {
            "mean": payload["mean"],
            "per_query": payload["per_query"],
            "warnings": payload["warnings"],
        }
    conventions = dict(next(iter(result.evaluations.values())).conventions)
    out: dict[str, Any] = {"systems": systems, "conventions": conventions}
    shown = pd.concat(rows, ignore_index=True) if per_query else pd.DataFrame(means)
    first = ["system", "query"] if per_query else ["system"]
    shown = shown[first + [c for c in shown.columns if c not in first]]
    comparison = result.comparison
    rank_table = None
    if compared is not None:
        from orlbuild.services.comparisons import comparison_settings

        pairs = comparison.pairs if comparison is not None else pd.DataFrame()
        if comparison is not None:
            out["settings"] = comparison_settings(
                comparison.plans,
                compared.permutations,
                compared.alpha,
                compared.seed,
                missing=missing.value,
                queries=result.comparison_queries,
            )
        out["pairs"] = pairs.to_dict(orient="records")
        warnings.extend(result.comparison_notes)
        if comparison is not None and comparison.ranks is not None:
            rank_table = rank_interval_table(comparison.ranks)
            for row in comparison.ranks.to_dict(orient="records"):
                entry = systems[str(row["system"])]
                entry.setdefault("rank_lo", {})[str(row["measure"])] = int(row["rank_lo"])
                entry.setdefault("rank_hi", {})[str(row["measure"])] = int(row["rank_hi"])
    out["warnings"] = warnings
    if fmt is not OutputFormat.json:
        for note in warnings:
            typer.echo(f"Warning: {note}", err=True)
    if comparison is not None:
        report_plan(comparison.notes, comparison.warnings)
    emit(fmt, frame=shown, payload=out, title=title, note=conventions.get("ndcg"))
    if comparison is not None and fmt is OutputFormat.table:
        shown_columns = ["measure", "a", "b", "diff", "p_value", "p_adjusted", "significant"]
        plan = next(iter(comparison.plans.values()))
        emit(fmt, frame=comparison.pairs[shown_columns], title=plan.describe())
    if rank_table is not None and fmt is OutputFormat.table:
        emit(fmt, frame=rank_table, title="Rank intervals (simultaneous 95%, 1 = best)")


def _in_order(evaluations: dict[str, EvaluationResult], sort: SystemOrder) -> list[Any]:
    """``(name, evaluation)`` pairs, by the first measure's ``all`` value, best first (a stable
    sort: equal means keep file order; undefined ones go last), or in file order."""
    from orlbuild.cli.score_tables import score_payload

    pairs = list(evaluations.items())
    if sort is SystemOrder.given or not pairs:
        return pairs
    first = pairs[0][1].measures[0]
    mean = {name: float(score_payload(e)["mean"][first]) for name, e in pairs}

    def key(pair: tuple[str, Any]) -> tuple[bool, float]:
        value = mean[pair[0]]
        return (math.isnan(value), 0.0 if math.isnan(value) else -value)

    return sorted(pairs, key=key)


def rank_interval_table(ranks: Any) -> Any:
    """Systems by measures, each cell ``lo-hi`` (the simultaneous rank interval)."""
    cells = ranks.assign(interval=ranks["rank_lo"].astype(str) + "-" + ranks["rank_hi"].astype(str))
    table = cells.pivot_table(index="system", columns="measure", values="interval", aggfunc="first")
    return table[list(dict.fromkeys(ranks["measure"]))].reset_index()


def register(app: typer.Typer) -> None:
    """Add ``eval`` to the application."""
    app.command("eval")(eval_command)
