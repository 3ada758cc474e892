"""``orlbuild eval`` (files in, scores out - no database) and ``orlbuild measures``."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from orlbuild.cli.options import (
    AlphaOption,
    DuplicatesOption,
    FormatOption,
    MeasureOption,
    MissingOption,
    OutputFormat,
    PerQueryOption,
    ScorePrecisionOption,
    permutations_option,
    seed_option,
)
from orlbuild.cli.render import emit
from orlbuild.errors import InputError
from orlbuild.ingest.source import COMPRESSED_SUFFIXES, STDIN, InputFormat, sniff_trec
from orlbuild.vocabulary import GradeAggregate, values
from scoring.vocabulary import DuplicatePolicy, MissingPolicy, ScorePrecisionName

if TYPE_CHECKING:
    import pandas as pd

    from scoring import EvaluationResult
    from scoring.run import CodedRuns

GRADE_AGGREGATES = values(GradeAggregate)


def eval_command(
    orl_file: Annotated[
        Path, typer.Argument(help="ORLs: TREC qrels, .tsv (query item rank), .json; .gz/.bz2 ok.")
    ],
    run_files: Annotated[
        list[Path],
        typer.Argument(help="One or more TREC runs (or query,item,rank[,score]); .gz/.bz2 ok."),
    ],
    measure: MeasureOption,
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
            "--compare", help="Paired randomization test, Holm-corrected, between every two runs."
        ),
    ] = False,
    permutations: Annotated[
        int,
        typer.Option(
            "--permutations",
            callback=permutations_option,
            help="Sign flips of --compare's test.",
        ),
    ] = 1000,
    alpha: AlphaOption = 0.05,
    seed: Annotated[
        int, typer.Option("--seed", callback=seed_option, help="Seed of --compare's sign flips.")
    ] = 0,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Score one or more run files against an ORL file (no database needed)."""
    from orlbuild.orl_io.reading import read_orl_file, read_run_file
    from scoring import parse_measures

    if grade_agg not in GRADE_AGGREGATES:  # checked here: the message lists every word
        raise typer.BadParameter(f"use {', '.join(GRADE_AGGREGATES)}", param_hint="--grade-agg")

    if compare and len(run_files) < 2:
        raise typer.BadParameter("--compare needs at least two runs", param_hint="--compare")
    parse_measures(measure)  # report every bad name at once, before reading any file
    orls, notes = read_orl_file(orl_file, fmt=orl_format, grade_agg=grade_agg)
    names = system_names(run_files)
    together = _read_together(run_files, run_format)
    evaluations = None
    if together is not None:
        evaluations = _evaluate_together(
            orls, together, names, measure, missing.literal, score_precision.value
        )
    if evaluations is None:  # one run at a time: any error names its file
        evaluations = {}
        for name, run_file in zip(names, run_files, strict=True):
            run = read_run_file(
                run_file,
                fmt=run_format,
                duplicates=duplicates,
                notes=notes,
                score_precision=score_precision,
            )
            evaluations[name] = _evaluate_file(
                orls, run, measure, missing.literal, score_precision.value, str(run_file)
            )
    if len(evaluations) == 1:
        _emit_one(next(iter(evaluations.values())), notes, per_query, fmt, run_files[0], orl_file)
        return
    _emit_many(
        evaluations,
        notes,
        per_query=per_query,
        fmt=fmt,
        title=f"{len(evaluations)} runs vs {orl_file.name}",
        compare={"permutations": permutations, "alpha": alpha, "seed": seed} if compare else None,
    )


def _read_together(run_files: list[Path], fmt: InputFormat | None) -> CodedRuns | None:
    """Several TREC runs read in one C pass, as ``read_run_file`` would read each; else ``None``.

    ``None`` (each file is then read on its own, errors named exactly) unless
    there are several runs, all regular files in TREC run format (forced by
    ``--run-format trec`` or recognised by content), and
    :func:`orlbuild.ingest.trec_reader.fast_trec_runs` accepts them all.
    """
    from orlbuild.ingest.trec_reader import fast_trec_runs
    from orlbuild.orl_io.reading import first_line

    if len(run_files) < 2 or fmt not in (None, InputFormat.trec):
        return None
    for path in run_files:
        if str(path) == STDIN or not path.is_file():
            return None
        if fmt is None and sniff_trec(first_line(path)) is not InputFormat.trec:
            return None
    return fast_trec_runs(run_files)


def _evaluate_together(
    orls: Any,
    runs: CodedRuns,
    names: list[str],
    measures: list[str],
    missing: str,
    precision: str,
) -> dict[str, EvaluationResult] | None:
    """:func:`scoring.evaluation.evaluate_runs` by system name; ``None`` when a run fails.

    On ``None`` the caller scores each run on its own, so that the error names
    the run file.
    """
    from scoring import ScoringError
    from scoring.evaluation import evaluate_runs

    try:
        results = evaluate_runs(
            orls,
            runs,
            measures,
            missing=missing,  # type: ignore[arg-type]
            score_precision=precision,  # type: ignore[arg-type]
        )
    except ScoringError:
        return None
    return dict(zip(names, results, strict=True))


def _evaluate_file(
    orls: Any, run: pd.DataFrame, measures: list[str], missing: str, precision: str, label: str
) -> EvaluationResult:
    """:func:`scoring.evaluate_run`, with its errors (e.g. no shared query) naming the run file."""
    from scoring import ScoringError, evaluate_run

    try:
        return evaluate_run(
            orls,
            run,
            measures,
            missing=missing,  # type: ignore[arg-type]
            score_precision=precision,  # type: ignore[arg-type]
        )
    except ScoringError as exc:
        raise InputError(str(exc), file=label) from None


def system_names(run_files: list[Path]) -> list[str]:
    """Each run's name: its TREC run tag, else its file stem; repeats made distinct.

    Parameters
    ----------
    run_files
        The run files, in the order given.

    Returns
    -------
    list of str
        One name per file: the tag (sixth field) of a TREC run's first line,
        else the file stem (without ``.gz``/``.bz2``); a name two runs share is
        replaced by their file stems, and any name still repeated gets ``#2``,
        ``#3``, ...
    """
    from orlbuild.orl_io.reading import first_line

    stems = [_stem(p) for p in run_files]
    names = []
    for path, stem in zip(run_files, stems, strict=True):
        line = first_line(path)
        names.append(line.split()[5] if sniff_trec(line) is InputFormat.trec else stem)  # type: ignore[union-attr]
    names = [stem if names.count(n) > 1 else n for n, stem in zip(names, stems, strict=True)]
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return unique


def _stem(path: Path) -> str:
    """The file name without ``.gz``/``.bz2`` and its last extension."""
    if path.suffix.lower() in COMPRESSED_SUFFIXES:
        path = path.with_suffix("")
    return path.stem


def _emit_one(
    evaluation: EvaluationResult,
    notes: list[str],
    per_query: bool,
    fmt: OutputFormat,
    run_file: Path,
    orl_file: Path,
) -> None:
    """One run: the table and JSON shape of ``orlbuild score``."""
    from orlbuild.cli.score_tables import score_report

    table, payload = score_report(evaluation, per_query=per_query)
    payload["warnings"] = notes + payload["warnings"]
    if fmt is not OutputFormat.json:
        for note in payload["warnings"]:
            typer.echo(f"Warning: {note}", err=True)
    emit(fmt, frame=table, payload=payload, title=f"{run_file.name} vs {orl_file.name}")


def _emit_many(
    evaluations: dict[str, EvaluationResult],
    notes: list[str],
    *,
    per_query: bool,
    fmt: OutputFormat,
    title: str,
    compare: dict[str, Any] | None,
) -> None:
    """Several runs: a systems x measures table (docs/evaluating-files.md, "Evaluating files")."""
    import pandas as pd

    from orlbuild.cli.score_tables import score_payload, score_report

    systems: dict[str, Any] = {}
    warnings = list(notes)
    rows, means = [], []  # per-query tables, or one row of means per system
    for name, evaluation in evaluations.items():
        if per_query:
            table, payload = score_report(evaluation, per_query=True)
            rows.append(table.reset_index().assign(system=name))
        else:
            payload = score_payload(evaluation)
            means.append({"system": name, **payload["mean"]})
        systems[name] = {"mean": payload["mean"], "per_query": payload["per_query"]}
        warnings.extend(f"{name}: {w}" for w in payload["warnings"])
    conventions = dict(next(iter(evaluations.values())).conventions)
    out: dict[str, Any] = {"systems": systems, "conventions": conventions}
    shown = pd.concat(rows, ignore_index=True) if per_query else pd.DataFrame(means)
    first = ["system", "query"] if per_query else ["system"]
    shown = shown[first + [c for c in shown.columns if c not in first]]
    comparisons = None
    if compare is not None:
        from orlbuild.services.comparisons import compare_scores

        frames = {name: evaluation.per_query for name, evaluation in evaluations.items()}
        measures = list(next(iter(frames.values())).columns)
        comparison, dropped = compare_scores(
            frames, measures, test="randomization", correction="holm", **compare
        )
        comparisons = comparison.pairs if comparison is not None else pd.DataFrame()
        out["comparisons"] = comparisons.to_dict(orient="records")
        warnings.extend(dropped)
    out["warnings"] = warnings
    if fmt is not OutputFormat.json:
        for note in warnings:
            typer.echo(f"Warning: {note}", err=True)
    emit(fmt, frame=shown, payload=out, title=title)
    if comparisons is not None and fmt is OutputFormat.table:
        shown_columns = ["measure", "a", "b", "diff", "p_value", "p_adjusted", "significant"]
        emit(fmt, frame=comparisons[shown_columns], title="Paired randomization tests (Holm)")


def measures_command(fmt: FormatOption = OutputFormat.table) -> None:
    """List the measures, their parameters, the RDQ aliases, weight presets and penalties."""
    import pandas as pd

    from scoring import MEASURES
    from scoring.measures import RDQ
    from scoring.penalties import PENALTIES
    from scoring.weights import WEIGHT_PRESETS

    rows = []
    for alias, params in RDQ.ALIASES.items():
        preset = ",".join(
            f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items()
        )
        rows.append({"measure": f"{alias}@k", "parameters": preset, "description": "RDQ alias"})
    for name, cls in MEASURES.items():
        defaults = ", ".join(f"{f.name}={f.default}" for f in fields(cls) if f.name != "cutoff")
        suffix = "@k" if cls.NEEDS_CUTOFF else "[@k]"
        rows.append(
            {"measure": name + suffix, "parameters": defaults, "description": cls.DESCRIPTION}
        )
    frame = pd.DataFrame(rows)
    payload = {
        "measures": rows,
        "weight_presets": {name: list(values) for name, values in WEIGHT_PRESETS.items()},
        "penalties": list(PENALTIES),
    }
    emit(fmt, frame=frame, payload=payload, title="Measures")
    if fmt is OutputFormat.table:
        presets = pd.DataFrame(
            {
                "preset": list(WEIGHT_PRESETS),
                "weights (last repeats)": [
                    ", ".join(f"{w:g}" for w in v) for v in WEIGHT_PRESETS.values()
                ],
            }
        )
        emit(fmt, frame=presets, title="Weight presets")
        emit(fmt, frame=penalty_table(PENALTIES), title="Penalties")


def penalty_table(penalties: dict[str, Any]) -> pd.DataFrame:
    """One row per registered penalty: name, its ``alpha``/``lam`` parameters, first doc line."""
    import pandas as pd

    return pd.DataFrame(
        {
            "penalty": list(penalties),
            "parameters": ["alpha, lam" if p.uses_alpha_lam else "" for p in penalties.values()],
            "description": [
                ((p.fn.__doc__ or "").replace("``", "").strip().splitlines() or [""])[0]
                for p in penalties.values()
            ],
        }
    )


def register(app: typer.Typer) -> None:
    """Add ``eval`` and ``measures`` to the application."""
    app.command("eval")(eval_command)
    app.command("measures")(measures_command)
