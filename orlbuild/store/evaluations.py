"""Saved evaluations: persisting and reading back scored systems.

``orlbuild score --save`` keeps a system's scores against one build - build,
system, measures, per-query values, conventions and package version - in the
``evaluations`` and ``evaluation_values`` tables, so that ``orlbuild results``
can list, show and export past evaluations without recomputing. Scoring
itself is a use case of :mod:`orlbuild.services.evaluations`; this module only
writes and reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import (
    Engine,
    insert,
    select,
)

from orlbuild import __version__
from orlbuild.errors import StoreError
from orlbuild.store.builds import BuildRecord, get_build
from orlbuild.store.driver_errors import retry_on_disconnect
from orlbuild.store.engine import Bind, as_utc, connect, finite_or_none, write_transaction
from orlbuild.store.ids import checked_id
from orlbuild.store.models import Evaluation, EvaluationValue
from orlbuild.store.users import current_user

__all__ = [
    "LIST_COLUMNS",
    "SavedEvaluation",
    "list_evaluations",
    "load_evaluation",
    "save_evaluation",
]


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


def save_evaluation(
    engine: Engine,
    *,
    build_id: int,
    system: str,
    per_query: pd.DataFrame,
    means: Mapping[str, float],
    missing: str,
    conventions: Mapping[str, str],
    run_file: str | None = None,
    created_by: str | None = None,
) -> int:
    """Store a system's per-query scores against a build; return the new evaluation's id.

    Parameters
    ----------
    engine
        The store.
    build_id
        The build scored against.
    system
        The system's name.
    per_query
        One row per query (index: query ids), one float column per measure;
        NaN is stored as NULL (undefined).
    means
        The ``all`` row, one value per measure, as the caller aggregated it (a mean, or a
        sum for the counting measures: docs/conventions.md, "Aggregation"); NaN is stored
        as NULL.
    missing
        ``zero`` or ``skip``.
    conventions
        How the scores were computed (kept as given).
    run_file
        The file the run was read from, ``None`` for a stored run.
    created_by
        Who saved it (default :func:`~orlbuild.store.users.current_user`).
    """
    frame = per_query
    measures = [str(m) for m in frame.columns]

    def write() -> int:
        with write_transaction(engine) as connection:
            evaluation_id = connection.execute(
                insert(Evaluation)
                .values(
                    build_id=build_id,
                    system=system,
                    run_file=run_file,
                    measures=measures,
                    means={m: finite_or_none(means[m]) for m in measures},
                    missing=missing,
                    conventions=dict(conventions),
                    n_queries=len(frame),
                    package_version=__version__,
                    created_at=datetime.now(timezone.utc),
                    created_by=created_by or current_user(),
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

    return retry_on_disconnect(engine, write)  # a lost connection is retried once


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
        checked_id(connection, evaluation_id, "saved evaluation", "orlbuild results list")
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
