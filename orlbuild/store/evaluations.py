"""Scoring systems against a stored build, and saved evaluations.

A system's run (stored with ``orlbuild ingest run`` or read from a file) is
scored against the ORLs of one build with :func:`scoring.evaluate`
(README, "Conventions and caveats"). ``orlbuild score --save`` keeps the result - build,
system, measures, per-query values, conventions and package version - in the
``evaluations`` and ``evaluation_values`` tables, so that ``orlbuild results``
can list, show and export past evaluations without recomputing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sqlalchemy import (
    Engine,
    insert,
    select,
)

from orlbuild import __version__
from orlbuild.errors import ConfigError, InputError, StoreError
from orlbuild.store.builds import BuildRecord, default_user, get_build, load_build_orls
from orlbuild.store.engine import Bind, as_utc, connect, finite_or_none, write_transaction
from orlbuild.store.models import Evaluation, EvaluationValue
from orlbuild.store.read import load_run, run_order_column

if TYPE_CHECKING:  # scoring (and SciPy behind it) loads only when a command scores
    from scoring import ORL
    from scoring.evaluate import Missing
    from scoring.run import ScorePrecision

__all__ = [
    "Evaluation",
    "EvaluationValue",
    "SavedEvaluation",
    "SystemPanels",
    "SystemScores",
    "build_summary",
    "check_measures_fit_build",
    "check_query_overlap",
    "list_evaluations",
    "load_evaluation",
    "missing_queries_note",
    "panels_for_systems",
    "save_evaluation",
    "score_run",
    "score_systems",
]


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
    per_query
        One row per query (index ``query``), one float column per measure.
    missing
        ``zero`` or ``skip`` (README, "Conventions and caveats").
    conventions
        How missing queries, run order, duplicates and undefined values were handled.
    queries_without_orl
        Run queries that have no ORL in the build (ignored).
    missing_queries
        ORL queries the run does not answer.
    run_file
        The file the run was read from, ``None`` for a stored run.
    """

    build: BuildRecord
    system: str
    per_query: pd.DataFrame
    missing: str
    conventions: dict[str, str]
    queries_without_orl: int = 0
    missing_queries: tuple[str, ...] = ()
    run_file: str | None = None

    @property
    def means(self) -> dict[str, float]:
        """Mean over queries per measure (undefined per-query values left out)."""
        return {str(m): float(v) for m, v in self.per_query.mean(axis=0, skipna=True).items()}


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
    missing: Missing = "zero",
    run_file: str | None = None,
    score_precision: ScorePrecision = "float32",
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
        descending, ties by item id descending (README, "Conventions and caveats"), or by rank
        when some entry has no score (:func:`~orlbuild.store.read.run_order_column`).
        A run sharing no query with the ORLs is an :class:`InputError`.
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
        ``float64`` (trec_eval 10); README, "Score precision".

    Returns
    -------
    SystemScores
    """
    record, orls = _build_and_orls(bind, build, measures)
    return _scores(record, orls, run, system, measures, missing, run_file, score_precision)


def score_systems(
    bind: Bind,
    build: str | int,
    systems: Sequence[str],
    *,
    measures: Sequence[str],
    missing: Missing = "zero",
    score_precision: ScorePrecision = "float32",
) -> dict[str, SystemScores]:
    """Score the stored runs of ``systems`` (in the build's collection) against a build.

    The build's ORLs are read once; each system's run is read from the
    build's collection. Parameters as in :func:`score_run`.
    """
    if len(set(systems)) != len(systems):
        raise ConfigError(f"a system is named twice: {list(systems)}")
    record, orls = _build_and_orls(bind, build, measures)
    return {
        system: _scores(
            record,
            orls,
            load_run(bind, record.collection, system),
            system,
            measures,
            missing,
            None,
            score_precision,
        )
        for system in systems
    }


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


#: How many ids a message names before it says "and N more".
NAMED_IDS = 5


def _some(names: Sequence[str]) -> str:
    """Up to :data:`NAMED_IDS` quoted names, then how many more there are."""
    shown = ", ".join(repr(str(n)) for n in names[:NAMED_IDS])
    rest = len(names) - NAMED_IDS
    return shown + (f" and {rest} more" if rest > 0 else "")


def missing_queries_note(system: str, queries: Sequence[str], missing: str) -> str:
    """The warning for a run that answers only some ORL queries, naming the missing ones.

    Parameters
    ----------
    system
        The run's system.
    queries
        The ORL queries the run does not answer; the first :data:`NAMED_IDS` are named.
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
        f"{_some(list(queries))}"
    )


def check_query_overlap(
    orls: Mapping[str, object],
    run: pd.DataFrame,
    system: str,
    *,
    build_id: int,
    run_file: str | None = None,
) -> None:
    """Refuse a run none of whose queries has an ORL (README, "Input formats": runs).

    Query ids are compared exactly, so ``Q01`` against ``q01`` scores nothing:
    that is an error naming a few ids from each side, never a mean of 0
    (README "Input formats", runs).

    Parameters
    ----------
    orls
        The build's ORLs by query.
    run
        The run (a ``query`` column).
    system
        The run's system, for the message.
    build_id
        The build, for the message.
    run_file
        The file the run was read from, named in the message when given.

    Raises
    ------
    InputError
        No run query is an ORL query.
    """
    run_queries = [str(q) for q in pd.unique(run["query"])]
    if set(run_queries) & {str(q) for q in orls}:
        return
    raise InputError(
        f"the run of {system!r} shares no query with the ORLs of build {build_id} "
        f"(run queries: {_some(sorted(run_queries)) or 'none'}; "
        f"ORL queries: {_some(sorted(str(q) for q in orls))})",
        file=run_file,
        hint="query ids are compared exactly (no case folding); check that the run and the "
        "judgments use the same ids",
    )


def _scores(
    record: BuildRecord,
    orls: dict[str, ORL],
    run: pd.DataFrame,
    system: str,
    measures: Sequence[str],
    missing: Missing,
    run_file: str | None,
    score_precision: ScorePrecision = "float32",
) -> SystemScores:
    """Evaluate one run with :func:`scoring.evaluate` and keep what it reported."""
    from scoring import evaluate

    check_query_overlap(orls, run, system, build_id=record.id, run_file=run_file)
    order_by = run_order_column(run)
    frame = evaluate(
        orls,
        run,
        list(measures),
        missing=missing,
        order_by=order_by,
        score_precision=score_precision,
    )
    return SystemScores(
        build=record,
        system=system,
        per_query=frame,
        missing=missing,
        conventions=dict(frame.attrs.get("conventions", {})),
        queries_without_orl=int(frame.attrs.get("queries_without_orl", 0)),
        missing_queries=tuple(frame.attrs.get("missing_queries", ())),
        run_file=run_file,
    )


@dataclass(frozen=True)
class SystemPanels:
    """Per-query scores of several systems, one panel per measure (for paired tests).

    Attributes
    ----------
    build
        The build scored against.
    panels
        Measure -> DataFrame (rows: queries every system scored with a defined
        value; columns: systems).
    notes
        Warnings: queries left out of a panel.
    """

    build: BuildRecord
    panels: dict[str, pd.DataFrame]
    notes: list[str]


def panels_for_systems(
    bind: Bind,
    build: str | int,
    systems: Sequence[str],
    *,
    measures: Sequence[str],
    missing: Missing = "zero",
    score_precision: ScorePrecision = "float32",
) -> SystemPanels:
    """Score the stored runs of ``systems`` and lay the scores out as paired panels.

    Raises
    ------
    ConfigError
        Fewer than two systems, or a measure without any query that every
        system scored with a defined value.
    """
    from scoring.statistics import score_panels

    if len(systems) < 2:
        raise ConfigError(f"comparing needs at least two --system options, got {list(systems)}")
    scored = score_systems(
        bind, build, systems, measures=measures, missing=missing, score_precision=score_precision
    )
    frames = {name: result.per_query for name, result in scored.items()}
    panels = score_panels(frames, measures)
    longest = max(len(frame) for frame in frames.values())
    notes = [
        missing_queries_note(name, result.missing_queries, missing)
        for name, result in scored.items()
        if result.missing_queries
    ]
    for measure, panel in panels.items():
        if panel.empty:
            raise ConfigError(
                f"no query has a defined {measure} for every system (with --missing skip, "
                "only queries all runs answer count); leave it out or use --missing zero"
            )
        if len(panel) < longest:
            notes.append(
                f"{measure}: {longest - len(panel)} queries left out (not scored by every "
                "system, or undefined); paired tests use the other "
                f"{len(panel)}"
            )
    return SystemPanels(next(iter(scored.values())).build, panels, notes)


# --- saved evaluations ---------------------------------------------------------------------


@dataclass(frozen=True)
class SavedEvaluation:
    """A saved evaluation read back from the store."""

    id: int
    build: BuildRecord
    system: str
    run_file: str | None
    measures: tuple[str, ...]
    means: dict[str, float | None]
    missing: str
    conventions: dict[str, str]
    package_version: str
    created_at: datetime
    created_by: str
    per_query: pd.DataFrame = field(repr=False)


def save_evaluation(engine: Engine, scores: SystemScores, *, created_by: str | None = None) -> int:
    """Store a :class:`SystemScores` with all its per-query values; return the new id."""
    frame = scores.per_query
    measures = [str(m) for m in frame.columns]
    with write_transaction(engine) as connection:
        evaluation_id = connection.execute(
            insert(Evaluation)
            .values(
                build_id=scores.build.id,
                system=scores.system,
                run_file=scores.run_file,
                measures=measures,
                means={m: finite_or_none(v) for m, v in scores.means.items()},
                missing=scores.missing,
                conventions=scores.conventions,
                n_queries=len(frame),
                package_version=__version__,
                created_at=datetime.now(timezone.utc),
                created_by=created_by or default_user(),
            )
            .returning(Evaluation.id)
        ).scalar_one()
        values = frame.to_numpy(dtype=np.float64)
        rows = [
            {
                "evaluation_id": evaluation_id,
                "query": str(query),
                "measure": measure,
                "value": finite_or_none(values[i, j]),
            }
            for i, query in enumerate(frame.index)
            for j, measure in enumerate(measures)
        ]
        if rows:
            connection.execute(insert(EvaluationValue), rows)
    return int(evaluation_id)


LIST_COLUMNS = [
    "id",
    "build",
    "system",
    "measures",
    "queries",
    "missing",
    "created_at",
    "created_by",
    "package_version",
]


def list_evaluations(
    bind: Bind, *, build: str | int | None = None, system: str | None = None
) -> pd.DataFrame:
    """Saved evaluations, newest first (columns :data:`LIST_COLUMNS`; times as ISO text).

    Parameters
    ----------
    bind
        Engine, connection or session.
    build
        Only evaluations against this build (id or name).
    system
        Only evaluations of this system.
    """
    e = Evaluation
    stmt = select(
        e.id,
        e.build_id,
        e.system,
        e.measures,
        e.n_queries,
        e.missing,
        e.created_at,
        e.created_by,
        e.package_version,
    ).order_by(e.id.desc())
    if build is not None:
        stmt = stmt.where(e.build_id == get_build(bind, build).id)
    if system is not None:
        stmt = stmt.where(e.system == system)
    with connect(bind) as connection:
        rows = [
            (*row[:3], ", ".join(row[3]), row[4], row[5], as_utc(row[6]).isoformat(), *row[7:])
            for row in connection.execute(stmt).all()
        ]
    return pd.DataFrame.from_records(rows, columns=LIST_COLUMNS)


def load_evaluation(bind: Bind, evaluation_id: int) -> SavedEvaluation:
    """A saved evaluation with its per-query values (queries in stored order).

    Raises
    ------
    StoreError
        No evaluation with that id.
    """
    table = Evaluation.__table__
    with connect(bind) as connection:
        saved = (
            connection.execute(select(table).where(table.c.id == evaluation_id)).mappings().first()
        )
        if saved is None:
            raise StoreError(f"no saved evaluation {evaluation_id}; see `orlbuild results list`")
        values = connection.execute(
            select(EvaluationValue.query, EvaluationValue.measure, EvaluationValue.value)
            .where(EvaluationValue.evaluation_id == evaluation_id)
            .order_by(EvaluationValue.id)
        ).all()
    per_query = _wide(values, saved["measures"])
    per_query.attrs["conventions"] = dict(saved["conventions"])
    return SavedEvaluation(
        id=int(saved["id"]),
        build=get_build(bind, int(saved["build_id"])),
        system=str(saved["system"]),
        run_file=saved["run_file"],
        measures=tuple(saved["measures"]),
        means={str(k): v for k, v in saved["means"].items()},
        missing=str(saved["missing"]),
        conventions=dict(saved["conventions"]),
        package_version=str(saved["package_version"]),
        created_at=as_utc(saved["created_at"]),
        created_by=str(saved["created_by"]),
        per_query=per_query,
    )


def _wide(values: Iterable[Any], measures: Sequence[str]) -> pd.DataFrame:
    """Long ``(query, measure, value)`` rows -> one row per query, one column per measure."""
    long = pd.DataFrame.from_records(list(values), columns=["query", "measure", "value"])
    rows, queries = pd.factorize(long["query"])
    columns = pd.Index(list(measures)).get_indexer(long["measure"])
    matrix = np.full((len(queries), len(measures)), np.nan)
    matrix[rows, columns] = long["value"].to_numpy(dtype=np.float64, na_value=np.nan)
    return pd.DataFrame(
        matrix, index=pd.Index(queries, name="query", dtype=object), columns=list(measures)
    )
