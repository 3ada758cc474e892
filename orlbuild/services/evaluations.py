"""Evaluations: scoring systems against a stored build, and one path from scores to power.

The use cases behind ``orlbuild score``, ``compare``, ``power``, ``report``
and the pipeline's scoring step (docs/comparing-systems.md, "Comparing many systems"):

1. **score** - a system's run (stored with ``orlbuild ingest run``, or read
   from a file) against the ORLs of one build, with
   :func:`scoring.evaluate_run` (docs/conventions.md, "Conventions and caveats");
   :func:`score_and_save` also keeps the result for ``orlbuild results``;
2. **panels** - the per-query scores of several systems laid out as one
   paired panel per measure (:func:`panels_for_systems` scores stored runs
   and lays them out with :func:`orlbuild.services.comparisons.panels_from_scores`);
3. **tests** - every pair per measure
   (:func:`orlbuild.services.comparisons.compare_panels`);
4. **power** - power and stability per measure
   (:func:`orlbuild.services.comparisons.power_for_panels`).

Steps 2-4 live in :mod:`orlbuild.services.comparisons` (no store, so
``orlbuild eval --compare`` takes the same path on files); their names are
re-exported here.

Every front end goes through these functions, so a panel, a test and a power
curve are computed the same way whichever command asked for them. The store
(:mod:`orlbuild.store.evaluations`) only persists and reads saved evaluations;
its readers (:func:`list_evaluations`, :func:`load_evaluation`) are re-exported
here so that the front ends reach the store through this module only.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from orlbuild.errors import ConfigError, InputError, StoreError
from orlbuild.executor import (
    Executor,
    map_ordered,
    start_workers,
)
from orlbuild.services.comparisons import (
    panels_from_scores,
)
from orlbuild.services.undefined_scores import undefined_reasons
from orlbuild.store import evaluations as stored_evaluations
from orlbuild.store.builds import BuildRecord, get_build, load_build_orls
from orlbuild.store.engine import Bind
from orlbuild.store.evaluations import save_evaluation
from orlbuild.store.read import load_run, run_order_column
from orlbuild.vocabulary import ExecutorKind, UndefinedPanels
from scoring.aggregation import aggregate_columns
from scoring.messages import first_and_more
from scoring.vocabulary import MissingPolicy, ScorePrecisionName

if TYPE_CHECKING:  # scoring (and SciPy behind it) loads only when a command scores
    from scoring import ORL, EvaluationResult
    from scoring.run import OrderBy

__all__ = [
    "SavedEvaluation",
    "SystemPanels",
    "SystemScores",
    "build_summary",
    "check_measures_fit_build",
    "list_evaluations",
    "load_evaluation",
    "missing_queries_note",
    "panels_for_systems",
    "score_and_save",
    "score_run",
    "score_systems",
    "unstored_scores_document",
]

# The saved evaluations, as the services hand them to the front ends (``orlbuild results``).
SavedEvaluation = stored_evaluations.SavedEvaluation
list_evaluations = stored_evaluations.list_evaluations
load_evaluation = stored_evaluations.load_evaluation

#: Several systems are scored on a parallel executor, one task each, only when
#: the first system's run has this many entries: shipping a run to a worker
#: costs about half of scoring it, and on two processes runs of 500,000
#: entries gained nothing while runs of 2,000,000 gained 1.2-1.5x (docs/performance.md,
#: "Scoring several systems in parallel").
SCORE_PARALLEL_MIN_ENTRIES = 1_000_000


# --- scoring against a build ----------------------------------------------------------------


@dataclass(frozen=True)
class SystemScores:
    """A system's per-query scores against one build.

    Attributes
    ----------
    build
        The build scored against.
    system
        System name (for a run file: ``--system`` or the file's name).
    evaluation
        What :func:`scoring.evaluate_run` returned: per-query values,
        conventions, overlap warnings, missing queries.
    missing
        ``zero`` or ``skip`` (docs/conventions.md, "Conventions and caveats").
    run_file
        The file the run was read from, ``None`` for a stored run.
    undefined_reasons
        Why each measure is undefined where it is
        (:func:`orlbuild.services.undefined_scores.undefined_reasons`).
    orl_tiers
        Query -> the number of tiers of its ORL (why a query is left out of a
        paired panel, :func:`orlbuild.services.undefined_scores.left_out_reasons`).
    """

    build: BuildRecord
    system: str
    evaluation: EvaluationResult
    missing: str
    run_file: str | None = None
    undefined_reasons: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    orl_tiers: Mapping[str, int] = field(default_factory=dict)

    @property
    def per_query(self) -> pd.DataFrame:
        """One row per query (index ``query``), one float column per measure."""
        return self.evaluation.per_query

    @property
    def conventions(self) -> dict[str, str]:
        """How missing queries, run order, duplicates and undefined values were handled."""
        return dict(self.evaluation.conventions)

    @property
    def missing_queries(self) -> tuple[str, ...]:
        """ORL queries the run does not answer."""
        return self.evaluation.missing_queries

    @property
    def queries_without_orl(self) -> int:
        """Run queries that have no ORL in the build (ignored)."""
        return self.evaluation.queries_without_orl

    @property
    def means(self) -> dict[str, float]:
        """The ``all`` value per measure: the mean over queries (undefined values left out),
        the sum for a counting measure (:func:`scoring.aggregation.aggregate`)."""
        from scoring.aggregation import aggregate_columns

        frame = self.per_query
        return aggregate_columns([str(m) for m in frame.columns], frame.to_numpy(dtype=float))


def build_summary(build: BuildRecord) -> dict[str, Any]:
    """The ``build`` object of score and results documents."""
    return {
        "id": build.id,
        "name": build.name,
        "collection": build.collection,
        "source": build.source,
        "method": build.method,
    }


def check_measures_fit_build(build: BuildRecord, measures: Sequence[str]) -> None:
    """Refuse ``nDCG(grade=native)`` on a build that did not come from graded labels.

    Raises
    ------
    UnknownMeasureError
        A measure name does not parse (all bad names at once).
    ConfigError
        A native-grade measure on a listwise or pairwise build.
    """
    from scoring import parse_measures

    native = [
        name
        for name, measure in zip(measures, parse_measures(measures), strict=True)
        if getattr(measure, "grade", None) == "native"
    ]
    if native and build.source != "graded":
        raise ConfigError(
            f"{', '.join(native)} needs native grades, but build {build.id} was built from "
            f"{build.source} judgments; use a build from graded labels, or grade=bi|ic|lc "
            "(grades derived from the ORL ranks)"
        )


def score_run(
    bind: Bind,
    build: str | int,
    run: pd.DataFrame,
    *,
    system: str,
    measures: Sequence[str],
    missing: MissingPolicy = MissingPolicy.zero,
    run_file: str | None = None,
    score_precision: ScorePrecisionName = ScorePrecisionName.float32,
) -> SystemScores:
    """Score one run (columns ``query, item, rank, score``) against a stored build.

    Parameters
    ----------
    bind
        Engine, connection or session of the store.
    build
        Build id or name.
    run
        The run as :func:`orlbuild.store.load_run` returns it; ordered by score
        descending, ties by item id descending (docs/evaluating-files.md, "Score precision"), or
        by rank when some entry has no score
        (:func:`~orlbuild.store.read.run_order_column`). A run sharing no
        query with the ORLs is an :class:`InputError`.
    system
        Name shown in outputs and saved evaluations.
    measures
        Measure names; every bad name is reported at once.
    missing
        ``zero`` (ORL queries absent from the run score 0) or ``skip``.
    run_file
        The file the run came from, if any (recorded by ``--save``).
    score_precision
        Compare run scores as ``float32`` (default, trec_eval <= 9.0.8) or
        ``float64`` (trec_eval 10); docs/evaluating-files.md, "Score precision".

    Returns
    -------
    SystemScores
    """
    record, orls = _build_and_orls(bind, build, measures)
    task = _scoring_task(record, orls, run, system, measures, missing, run_file, score_precision)
    return _system_scores(record, system, _evaluate(task), missing, run_file, orls)


def score_systems(
    bind: Bind,
    build: str | int,
    systems: Sequence[str],
    *,
    measures: Sequence[str],
    missing: MissingPolicy = MissingPolicy.zero,
    score_precision: ScorePrecisionName = ScorePrecisionName.float32,
    executor: Executor | None = None,
) -> dict[str, SystemScores]:
    """Score the stored runs of ``systems`` (in the build's collection) against a build.

    The build's ORLs are read once; each system's run is read from the
    build's collection. On a parallel ``executor`` several systems are one
    task each: this process reads the next run from the store while the
    workers (and this process, when it would otherwise wait) score the
    previous ones, and the results come back in the order of ``systems``;
    only when the first run has at least :data:`SCORE_PARALLEL_MIN_ENTRIES`
    entries, below which scoring here is as fast. The values are those of a
    serial run (every system is the same
    :func:`scoring.evaluate_run` call wherever it runs). One system is scored
    here: a run is not cut into query chunks, whose batch kernels would sum
    in another order (docs/parallel.md, "Running on many cores or a cluster").
    Parameters as in :func:`score_run`.
    """
    if len(set(systems)) != len(systems):
        raise ConfigError(f"a system is named twice: {list(systems)}")
    record, orls = _build_and_orls(bind, build, measures)

    def read(names: Sequence[str]) -> Iterator[_ScoringTask]:
        for system in names:
            run = load_run(bind, record.collection, system)
            yield _scoring_task(record, orls, run, system, measures, missing, None, score_precision)

    if not systems:
        return {}
    first = next(read(systems[:1]))
    tasks = itertools.chain([first], read(systems[1:]))
    # Shipping a run costs about half of scoring it: only long runs gain (docs/parallel.md,
    # "Running on many cores or a cluster"); the first run stands for the others.
    if _parallel(executor) and len(systems) > 1 and len(first.run) >= SCORE_PARALLEL_MIN_ENTRIES:
        start_workers(executor, ["orlbuild.services.evaluations", "scoring"])
        results: Iterable[EvaluationResult] = map_ordered(
            _evaluate, tasks, executor=executor, chunk_size=1, n_tasks=len(systems)
        )
    else:
        results = map(_evaluate, tasks)
    return {
        system: _system_scores(record, system, result, missing, None, orls)
        for system, result in zip(systems, results, strict=True)
    }


def score_and_save(engine: Engine, scores: SystemScores, *, created_by: str | None = None) -> int:
    """Keep a scored system for ``orlbuild results``; return the new evaluation's id.

    When the store refuses the write (after the one retry on a dropped
    connection), the scores are saved to a JSON file the one-line error names
    (:func:`unstored_scores_document`, docs/reliability.md, "When the database fails").

    Each measure is saved under its full spelled-out name
    (:attr:`scoring.EvaluationResult.spelled_out`, e.g.
    ``nDCG(grade=native,gain=linear)@10`` for ``nDCG@10``), so that a saved score
    keeps its meaning whatever later versions make of a bare name.
    """
    full = scores.evaluation.spelled_out
    per_query = scores.per_query.rename(columns=lambda label: full.get(str(label), label))
    names = [str(m) for m in per_query.columns]
    means = aggregate_columns(names, per_query.to_numpy(dtype=np.float64))  # sums for counts
    try:
        return save_evaluation(
            engine,
            build_id=scores.build.id,
            system=scores.system,
            run_file=scores.run_file,
            per_query=per_query,
            means=means,
            missing=scores.missing,
            conventions=scores.conventions,
            created_by=created_by,
        )
    except StoreError as error:
        from orlbuild.output_files import keep_unstored

        raise keep_unstored(
            error,
            "evaluation",
            lambda: unstored_scores_document(scores),
            "its per-query scores are saved in {path}",
        ) from error


def unstored_scores_document(scores: SystemScores) -> str:
    """The JSON document of scores that could not be stored: ``stored: false``, the build,
    the system, how it was scored, the means and ``per_query`` (NaN: ``null``)."""
    import json
    import math

    def value(number: object) -> float | None:
        result = float(number)  # type: ignore[arg-type]
        return result if math.isfinite(result) else None

    frame = scores.per_query
    document = {
        "stored": False,
        "build": build_summary(scores.build),
        "system": scores.system,
        "run_file": scores.run_file,
        "missing": scores.missing,
        "conventions": scores.conventions,
        "means": {m: value(v) for m, v in scores.means.items()},
        "per_query": {
            str(query): {str(m): value(v) for m, v in row.items()}
            for query, row in frame.iterrows()
        },
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _build_and_orls(
    bind: Bind, build: str | int, measures: Sequence[str]
) -> tuple[BuildRecord, dict[str, ORL]]:
    """The build's record and ORLs, after checking that the measures fit it."""
    record = get_build(bind, build)
    check_measures_fit_build(record, measures)
    orls = load_build_orls(bind, record.id)
    if not orls:
        raise StoreError(f"build {record.id} has no ORL to score against")
    return record, orls


def missing_queries_note(system: str, queries: Sequence[str], missing: str) -> str:
    """The warning for a run that answers only some ORL queries, naming the missing ones.

    Parameters
    ----------
    system
        The run's system.
    queries
        The ORL queries the run does not answer; the first few are named.
    missing
        ``zero`` or ``skip``: what those queries count as.

    Returns
    -------
    str
        E.g. ``bm25: 1 ORL queries are missing from the run (scored 0): 'q23'``.
    """
    treatment = "scored 0" if missing == "zero" else "left out"
    return (
        f"{system}: {len(queries)} ORL queries are missing from the run ({treatment}): "
        f"{first_and_more(list(queries))}"
    )


def _refuse_disjoint_run(
    orls: Mapping[str, object],
    run: pd.DataFrame,
    system: str,
    *,
    build_id: int,
    run_file: str | None = None,
) -> None:
    """Refuse a run none of whose queries has an ORL (docs/input-formats.md, "Input formats", runs).

    :func:`scoring.evaluation.check_query_overlap` decides, before the run is
    sent to a worker; its error becomes an :class:`InputError` naming the system,
    the build and the run file.
    """
    from scoring import ScoringError
    from scoring.evaluation import check_query_overlap

    try:
        check_query_overlap([str(q) for q in orls], [str(q) for q in pd.unique(run["query"])])
    except ScoringError as exc:
        raise InputError(
            f"the run of {system!r} vs build {build_id}: {exc}",
            file=run_file,
            hint="check that the run and the judgments use the same query ids",
        ) from None


@dataclass(frozen=True)
class _ScoringTask:
    """A build's ORLs and one system's run: what one worker scores (plain data)."""

    orls: Mapping[str, ORL]
    run: pd.DataFrame
    measures: tuple[str, ...]
    missing: MissingPolicy
    order_by: OrderBy
    score_precision: ScorePrecisionName


def _parallel(executor: Executor | None) -> bool:
    return executor is not None and executor.kind is not ExecutorKind.SERIAL


def _scoring_task(
    record: BuildRecord,
    orls: dict[str, ORL],
    run: pd.DataFrame,
    system: str,
    measures: Sequence[str],
    missing: MissingPolicy,
    run_file: str | None,
    score_precision: ScorePrecisionName,
) -> _ScoringTask:
    """Check that the run shares a query with the ORLs, and bundle what scoring it needs."""
    _refuse_disjoint_run(orls, run, system, build_id=record.id, run_file=run_file)
    return _ScoringTask(orls, run, tuple(measures), missing, run_order_column(run), score_precision)


def _evaluate(task: _ScoringTask) -> EvaluationResult:
    """:func:`scoring.evaluate_run` on one task (module level: it runs in workers).

    With one BLAS thread wherever it runs: the batch kernels' matrix products
    may sum in another order on several threads, and the values must not
    depend on where a system was scored.
    """
    from threadpoolctl import threadpool_limits

    from scoring import evaluate_run

    with threadpool_limits(limits=1, user_api="blas"):
        return evaluate_run(
            task.orls,
            task.run,
            list(task.measures),
            missing=task.missing,
            order_by=task.order_by,
            score_precision=task.score_precision,
        )


def _system_scores(
    record: BuildRecord,
    system: str,
    result: EvaluationResult,
    missing: MissingPolicy,
    run_file: str | None,
    orls: Mapping[str, ORL],
) -> SystemScores:
    return SystemScores(
        build=record,
        system=system,
        evaluation=result,
        missing=missing,
        run_file=run_file,
        undefined_reasons=undefined_reasons(result, orls),
        orl_tiers={query: orl.n_tiers for query, orl in orls.items()},
    )


# --- scores -> panels -> tests -> power -----------------------------------------------------


@dataclass(frozen=True)
class SystemPanels:
    """Per-query scores of several systems, one panel per measure (for paired tests).

    Attributes
    ----------
    build
        The build scored against.
    panels
        Measure -> DataFrame (rows: queries every system scored with a defined
        value, in the first system's order; columns: systems).
    notes
        Warnings: ORL queries a run misses, queries left out of a panel.
    scores
        System -> its scores (per-query values, conventions, missing queries).
    """

    build: BuildRecord
    panels: dict[str, pd.DataFrame]
    notes: list[str]
    scores: dict[str, SystemScores]


def panels_for_systems(
    bind: Bind,
    build: str | int,
    systems: Sequence[str],
    *,
    measures: Sequence[str],
    missing: MissingPolicy = MissingPolicy.zero,
    score_precision: ScorePrecisionName = ScorePrecisionName.float32,
    undefined: UndefinedPanels = UndefinedPanels.error,
) -> SystemPanels:
    """Score the stored runs of ``systems`` and lay the scores out as paired panels.

    ``undefined`` as in :func:`panels_from_scores`.

    Raises
    ------
    ConfigError
        Fewer than two systems, or (``undefined="error"``) a measure without
        any query that every system scored with a defined value.
    """
    if len(systems) < 2:
        raise ConfigError(f"comparing needs at least two --system options, got {list(systems)}")
    scored = score_systems(
        bind, build, systems, measures=measures, missing=missing, score_precision=score_precision
    )
    notes = [
        missing_queries_note(name, result.missing_queries, missing)
        for name, result in scored.items()
        if result.missing_queries
    ]
    panels, dropped = panels_from_scores(
        {name: result.per_query for name, result in scored.items()},
        measures,
        undefined=undefined,
        tiers=next(iter(scored.values())).orl_tiers,
    )
    return SystemPanels(next(iter(scored.values())).build, panels, notes + dropped, scored)
