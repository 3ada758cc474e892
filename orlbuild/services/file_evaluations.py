"""Evaluate files: an ORL file and run files in, per-run scores (and their comparison) out.

The use case behind ``orlbuild eval`` (docs/evaluating-files.md, "Evaluating files"): no store
is opened. Several TREC runs are read in one pass and scored together; when
that fails, each run is read and scored on its own so that an error names its
file. With :class:`~scoring.settings.TestSettings` the runs are compared as
``orlbuild compare`` compares stored systems
(:func:`orlbuild.services.comparisons.compare_scores`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orlbuild.errors import InputError
from orlbuild.ingest.run_names import eval_system_names
from orlbuild.ingest.run_order import rank_order_note_of_file
from orlbuild.ingest.source import STDIN, sniff_trec
from orlbuild.services.undefined_scores import undefined_reasons
from orlbuild.vocabulary import InputFormat
from scoring.settings import TestSettings
from scoring.vocabulary import DuplicatePolicy, MissingPolicy, ScorePrecisionName

if TYPE_CHECKING:
    import pandas as pd

    from scoring import EvaluationResult
    from scoring.run import CodedRuns
    from scoring.statistics import SystemComparison

__all__ = ["FileEvaluation", "evaluate_files", "run_warnings"]


@dataclass(frozen=True)
class FileEvaluation:
    """What ``orlbuild eval`` shows.

    Attributes
    ----------
    evaluations
        Run name -> its scores (:func:`~orlbuild.ingest.run_names.eval_system_names`), in
        the order given.
    notes
        Warnings about the files (ignored columns, kept duplicates...).
    comparison
        Every pair of runs tested per measure, when asked for.
    comparison_notes
        One per measure whose paired panel lost queries.
    undefined_reasons
        Run name -> why each measure is undefined where it is
        (:func:`orlbuild.services.undefined_scores.undefined_reasons`).
    comparison_queries
        Measure -> the queries of its paired panel, when compared.
    """

    evaluations: dict[str, EvaluationResult]
    notes: list[str]
    comparison: SystemComparison | None = None
    comparison_notes: list[str] = field(default_factory=list)
    undefined_reasons: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    comparison_queries: dict[str, int] = field(default_factory=dict)


def evaluate_files(
    orl_file: Path,
    run_files: Sequence[Path],
    measures: Sequence[str],
    *,
    missing: MissingPolicy = MissingPolicy.zero,
    duplicates: DuplicatePolicy = DuplicatePolicy.error,
    grade_agg: str = "median",
    orl_format: InputFormat | None = None,
    run_format: InputFormat | None = None,
    score_precision: ScorePrecisionName = ScorePrecisionName.float32,
    compare: TestSettings | None = None,
) -> FileEvaluation:
    """Score every run file against the ORL file and, with ``compare``, test every pair.

    Parameters
    ----------
    orl_file
        ORLs: TREC qrels, ``query item rank`` TSV or JSON (docs/input-formats.md, "Input formats").
    run_files
        One or more runs.
    measures
        Measure names (:func:`scoring.parse_measures`).
    missing, duplicates, score_precision
        As in :func:`scoring.evaluate_run` and
        :func:`orlbuild.orl_io.eval_files.read_run_file`.
    grade_agg
        How annotators' grades of the ORL file are combined.
    orl_format, run_format
        Force the formats instead of detecting them.
    compare
        Test every pair of runs with these settings (at least two runs).

    Returns
    -------
    FileEvaluation

    Raises
    ------
    InputError
        Bad input; the message names the file.
    """
    from orlbuild.orl_io.eval_files import (
        comment_notes,
        read_eval_files,
        read_orl_file,
        read_run_file,
    )
    from scoring import parse_measures

    parse_measures(measures)  # report every bad name at once, before reading any file
    names = eval_system_names(run_files)
    both = read_eval_files(orl_file, run_files, orl_format=orl_format, run_format=run_format)
    together: tuple[CodedRuns, list[int]] | None
    if both is not None:  # TREC qrels and runs: ids hashed once, shared by ORLs and runs
        orls, notes, coded_runs, run_comments = both
        together = coded_runs, run_comments
    else:
        orls, notes = read_orl_file(orl_file, fmt=orl_format, grade_agg=grade_agg)
        together = _read_together(run_files, run_format)
    evaluations = None
    if together is not None:
        coded, comments = together
        evaluations = _evaluate_together(orls, coded, names, measures, missing, score_precision)
        if evaluations is not None:
            notes.extend(
                note
                for path, count in zip(run_files, comments, strict=True)
                for note in comment_notes(path, count)
            )
            notes.extend(filter(None, map(rank_order_note_of_file, run_files)))
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
                orls, run, measures, missing, score_precision, str(run_file)
            )
    reasons = {name: undefined_reasons(e, orls) for name, e in evaluations.items()}
    if compare is None or len(evaluations) < 2:
        return FileEvaluation(evaluations, notes, undefined_reasons=reasons)
    from orlbuild.services.comparisons import compare_panels, panels_from_scores

    frames = {name: evaluation.per_query for name, evaluation in evaluations.items()}
    measured = list(next(iter(frames.values())).columns)
    tiers = {query: orl.n_tiers for query, orl in orls.items()}
    panels, dropped = panels_from_scores(frames, measured, tiers=tiers)
    comparison = compare_panels(panels, compare) if panels else None
    queries = {measure: len(panel) for measure, panel in panels.items()}
    return FileEvaluation(evaluations, notes, comparison, dropped, reasons, queries)


def _read_together(
    run_files: Sequence[Path], fmt: InputFormat | None
) -> tuple[CodedRuns, list[int]] | None:
    """The TREC runs read in one C pass as integer codes, with each file's comment lines.

    ``None`` (each file is then read on its own, errors named exactly) unless
    the runs are all regular files in TREC run format (forced by
    ``--run-format trec`` or recognised by content) and
    :func:`orlbuild.ingest.trec_reader.fast_trec_runs` accepts them all. One
    run takes this path too: its ids stay codes, so ordering the ties by
    document id sorts integers, not strings.
    """
    from orlbuild.ingest.trec_reader import fast_trec_runs
    from orlbuild.orl_io.eval_files import first_line

    if not run_files or fmt not in (None, InputFormat.trec):
        return None
    for path in run_files:
        if str(path) == STDIN or not path.is_file():
            return None
        if fmt is None and sniff_trec(first_line(path)) is not InputFormat.trec:
            return None
    return fast_trec_runs(list(run_files))


def _evaluate_together(
    orls: Any,
    runs: CodedRuns,
    names: list[str],
    measures: Sequence[str],
    missing: MissingPolicy,
    precision: ScorePrecisionName,
) -> dict[str, EvaluationResult] | None:
    """:func:`scoring.evaluation.evaluate_runs` by system name; ``None`` when a run fails.

    On ``None`` the caller scores each run on its own, so that the error names
    the run file.
    """
    from scoring import ScoringError
    from scoring.evaluation import evaluate_runs

    try:
        results = evaluate_runs(orls, runs, measures, missing=missing, score_precision=precision)
    except ScoringError:
        return None
    return dict(zip(names, results, strict=True))


def _evaluate_file(
    orls: Any,
    run: pd.DataFrame,
    measures: Sequence[str],
    missing: MissingPolicy,
    precision: ScorePrecisionName,
    label: str,
) -> EvaluationResult:
    """:func:`scoring.evaluate_run`, with its errors (e.g. no shared query) naming the run file."""
    from scoring import ScoringError, evaluate_run

    try:
        return evaluate_run(orls, run, measures, missing=missing, score_precision=precision)
    except ScoringError as exc:
        raise InputError(str(exc), file=label) from None


def run_warnings(
    evaluations: Mapping[str, EvaluationResult],
    reasons: Mapping[str, Mapping[str, Mapping[str, int]]] | None = None,
) -> list[str]:
    """What went wrong across several runs, one warning per cause (docs/evaluating-files.md,
    "Evaluating files").

    Runs of one experiment usually share their problems (the same 7 queries
    without an ORL in all 63 runs): each cause is said once, naming its
    queries (the first few and how many) and how many runs it affects.

    Parameters
    ----------
    evaluations
        Run name -> its scores.
    reasons
        Run name -> :func:`~orlbuild.services.undefined_scores.undefined_reasons`: the
        reasons are summed over the runs and named in each measure's warning.

    Returns
    -------
    list of str
        At most one warning for run queries without an ORL, one for ORL
        queries missing from runs, and one per measure undefined for some
        queries.
    """
    from scoring.messages import first_and_more

    runs = len(evaluations)
    ignored: dict[str, None] = {}
    missing: dict[str, None] = {}
    hit_ignored = hit_missing = 0
    undefined: dict[str, list[str]] = {}
    n_orl = 0
    for name, evaluation in evaluations.items():
        ignored.update(dict.fromkeys(evaluation.ignored_queries))
        hit_ignored += bool(evaluation.ignored_queries)
        missing.update(dict.fromkeys(evaluation.missing_queries))
        hit_missing += bool(evaluation.missing_queries)
        n_orl = max(n_orl, len(evaluation.per_query) + len(evaluation.missing_queries))
        counts = evaluation.per_query.isna().sum()
        for measure, count in counts[counts > 0].items():
            undefined.setdefault(str(measure), []).append(f"{name} ({int(count)})")
    notes = []
    if ignored:
        notes.append(
            f"{len(ignored)} run queries have no ORL and were ignored, in {hit_ignored} of "
            f"{runs} runs: {first_and_more(ignored)}"
        )
    if missing:
        notes.append(
            f"{len(missing)} ORL queries are missing from {hit_missing} of {runs} runs: "
            f"{first_and_more(missing)}"
        )
    for measure, where in undefined.items():
        why: dict[str, int] = {}
        for run_reasons in (reasons or {}).values():
            for reason, count in run_reasons.get(measure, {}).items():
                why[reason] = why.get(reason, 0) + count
        said = "".join(f"; {reason} ({count})" for reason, count in why.items())
        notes.append(
            f"{measure} is undefined for some queries in {len(where)} of {runs} runs (left out "
            f"of their means): {first_and_more(where, quote=False)}{said}"
        )
    return notes
