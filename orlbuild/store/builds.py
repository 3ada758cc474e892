"""ORL builds in the store: tables, writing a build, reading it back, overrides.

A build is immutable (ORL.md, "Building ORLs"): once written, no function
here changes its rows. It records its method, every parameter with defaults
resolved (JSON), the package version, the seed, the ingest batches it read
(id and content hash, kept even if a batch is later force-deleted), its ORL
entries (rank, score, interval, native grade), every tie decision, per-query
failures and warnings, and - for a build derived by an auditor's override -
its parent build and the override (who, why).

The ``build_batches.batch_id`` foreign key to ``ingest_batches`` is what makes
``orlbuild batches delete`` refuse a batch that a build read
(:func:`orlbuild.store.batches.delete_batch` finds every such reference);
:func:`builds_using_batch` answers the same question directly.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import pandas as pd
from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    Engine,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    insert,
    select,
)
from sqlalchemy.orm import Mapped, mapped_column

from orlbuild import __version__
from orlbuild.builders.overrides import merge_adjacent_tiers, split_tier_at
from orlbuild.builders.parameters import BuildParameters
from orlbuild.builders.results import BuildOutcome, QueryFailure, QueryORL, TieDecision
from orlbuild.errors import BuildError, ConfigError, StoreError
from orlbuild.store.engine import Bind, as_utc, connect, finite_or_none, write_transaction
from orlbuild.store.models import NAME_LENGTH, Base, Collection
from orlbuild.store.read import (
    DEFAULT_COLLECTION,
    BatchInfo,
    batch_fingerprints,
    collection_id,
    load_graded,
    load_listwise,
    load_pairwise,
)

if TYPE_CHECKING:
    from scoring.orl import ORL

__all__ = [
    "Build",
    "BuildBatch",
    "BuildMessage",
    "BuildOverride",
    "BuildRecord",
    "OrlEntry",
    "TieDecisionRow",
    "build_and_store",
    "builds_using_batch",
    "get_build",
    "list_builds",
    "load_build_entries",
    "load_build_judgments",
    "load_build_messages",
    "load_build_orls",
    "load_query_orls",
    "load_tie_decisions",
    "override_build",
    "resolve_build",
    "store_build",
    "tiering_by_query",
]


# --- tables -------------------------------------------------------------------------------


class Build(Base):
    """One immutable ORL build."""

    __tablename__ = "builds"
    __table_args__ = (
        CheckConstraint("source IN ('graded', 'listwise', 'pairwise')", name="source"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    collection_id: Mapped[int] = mapped_column(
        ForeignKey("collections.id", ondelete="CASCADE"), nullable=False, index=True
    )
    name: Mapped[str | None] = mapped_column(String(NAME_LENGTH), nullable=True, index=True)
    source: Mapped[str] = mapped_column(String(16), nullable=False)
    method: Mapped[str] = mapped_column(String(32), nullable=False)
    parameters: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False)
    package_version: Mapped[str] = mapped_column(String(64), nullable=False)
    seed: Mapped[int] = mapped_column(Integer, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    created_by: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    parent_id: Mapped[int | None] = mapped_column(
        ForeignKey("builds.id", ondelete="SET NULL"), nullable=True, index=True
    )
    n_queries: Mapped[int] = mapped_column(Integer, nullable=False)
    n_failed: Mapped[int] = mapped_column(Integer, nullable=False)


class BuildBatch(Base):
    """An ingest batch a build read (its hash is kept even if the batch is force-deleted)."""

    __tablename__ = "build_batches"
    __table_args__ = (UniqueConstraint("build_id", "sha256", "kind"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    build_id: Mapped[int] = mapped_column(
        ForeignKey("builds.id", ondelete="CASCADE"), nullable=False, index=True
    )
    batch_id: Mapped[int | None] = mapped_column(
        ForeignKey("ingest_batches.id"), nullable=True, index=True
    )
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    file_name: Mapped[str] = mapped_column(String(1024), nullable=False)
    sha256: Mapped[str] = mapped_column(String(64), nullable=False)
    row_count: Mapped[int] = mapped_column(Integer, nullable=False)


class OrlEntry(Base):
    """One item of one query's ORL in a build."""

    __tablename__ = "orl_entries"
    __table_args__ = (
        UniqueConstraint("build_id", "query", "item"),
        CheckConstraint("rank >= 1", name="rank"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    build_id: Mapped[int] = mapped_column(
        ForeignKey("builds.id", ondelete="CASCADE"), nullable=False, index=True
    )
    query: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    item: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    rank: Mapped[int] = mapped_column(Integer, nullable=False)
    score: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    low: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    high: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    native_grade: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)


class TieDecisionRow(Base):
    """One stored tie-or-separate decision (ORL.md, "Audit trail")."""

    __tablename__ = "tie_decisions"
    __table_args__ = (CheckConstraint("decision IN ('tied', 'separated')", name="decision"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    build_id: Mapped[int] = mapped_column(
        ForeignKey("builds.id", ondelete="CASCADE"), nullable=False, index=True
    )
    query: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    leader: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    item: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    score_leader: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    score_item: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    diff: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    se: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    p_value: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    decision: Mapped[str] = mapped_column(String(16), nullable=False)
    rule: Mapped[str] = mapped_column(String(256), nullable=False)
    variance: Mapped[str] = mapped_column(String(64), nullable=False)
    # the --tiering evidence (migration 0004_tiering); NULL on older builds
    procedure: Mapped[str | None] = mapped_column(String(16), nullable=True)
    family_size: Mapped[int | None] = mapped_column(Integer, nullable=True)
    critical: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    z: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    bic_penalty: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    loglik_gain: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    bic_change: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)


class BuildOverride(Base):
    """An auditor's override that derived this build from its parent."""

    __tablename__ = "build_overrides"
    __table_args__ = (CheckConstraint("action IN ('merge-tiers', 'split-at')", name="action"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    build_id: Mapped[int] = mapped_column(
        ForeignKey("builds.id", ondelete="CASCADE"), nullable=False, index=True
    )
    parent_id: Mapped[int | None] = mapped_column(
        ForeignKey("builds.id", ondelete="SET NULL"), nullable=True
    )
    query: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    action: Mapped[str] = mapped_column(String(16), nullable=False)
    argument: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    reason: Mapped[str] = mapped_column(Text, nullable=False)
    created_by: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


class BuildMessage(Base):
    """A per-query failure or warning of a build (``query`` empty for build-level notes)."""

    __tablename__ = "build_messages"
    __table_args__ = (CheckConstraint("kind IN ('failure', 'warning')", name="kind"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    build_id: Mapped[int] = mapped_column(
        ForeignKey("builds.id", ondelete="CASCADE"), nullable=False, index=True
    )
    query: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    message: Mapped[str] = mapped_column(Text, nullable=False)


# --- records ------------------------------------------------------------------------------


@dataclass(frozen=True)
class BuildRecord:
    """Metadata of a stored build (what ``orl list`` and exports show)."""

    id: int
    name: str | None
    collection: str
    source: str
    method: str
    parameters: dict[str, Any]
    package_version: str
    seed: int
    created_at: datetime
    created_by: str
    parent_id: int | None
    n_queries: int
    n_failed: int
    batches: tuple[BatchInfo, ...]
    overrides: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """JSON-ready metadata (the ``build`` object of ``orl export --format json``)."""
        return {
            "id": self.id,
            "name": self.name,
            "collection": self.collection,
            "source": self.source,
            "method": self.method,
            "parameters": self.parameters,
            "package_version": self.package_version,
            "seed": self.seed,
            "created_at": self.created_at.isoformat(),
            "created_by": self.created_by,
            "parent": self.parent_id,
            "queries": self.n_queries,
            "failed_queries": self.n_failed,
            "batches": [
                {"id": b.id, "kind": b.kind, "file_name": b.file_name, "sha256": b.sha256}
                for b in self.batches
            ],
            "overrides": [dict(o, created_at=str(o["created_at"])) for o in self.overrides],
        }


def _now() -> datetime:
    return datetime.now(timezone.utc)


def default_user() -> str:
    """The OS user (``--by`` default of overrides)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return os.environ.get("USER") or "unknown"


# --- writing ------------------------------------------------------------------------------


def _entry_rows(build_id: int, orls: Iterable[QueryORL]) -> list[dict[str, Any]]:
    rows = []
    for orl in orls:
        grades = orl.native_grades or {}
        for rank, tier in enumerate(orl.tiers, start=1):
            for item in tier:
                interval = orl.intervals.get(item)
                rows.append(
                    {
                        "build_id": build_id,
                        "query": orl.query,
                        "item": item,
                        "rank": rank,
                        "score": finite_or_none(orl.scores.get(item)),
                        "low": None if interval is None else finite_or_none(interval[0]),
                        "high": None if interval is None else finite_or_none(interval[1]),
                        "native_grade": finite_or_none(grades.get(item)),
                    }
                )
    return rows


def _decision_rows(build_id: int, orls: Iterable[QueryORL]) -> list[dict[str, Any]]:
    return [
        {
            "build_id": build_id,
            "query": d.query,
            "position": position,
            "leader": d.leader,
            "item": d.item,
            "score_leader": finite_or_none(d.score_leader),
            "score_item": finite_or_none(d.score_item),
            "diff": finite_or_none(d.diff),
            "se": finite_or_none(d.se),
            "p_value": finite_or_none(d.p_value),
            "decision": d.decision,
            "rule": d.rule,
            "variance": d.variance,
            "procedure": d.procedure,
            "family_size": d.family_size,
            **{k: finite_or_none(getattr(d, k)) for k in EVIDENCE_FLOATS},
        }
        for orl in orls
        for position, d in enumerate(orl.decisions)
    ]


def _message_rows(build_id: int, outcome: BuildOutcome) -> list[dict[str, Any]]:
    rows = [
        {"build_id": build_id, "query": f.query, "kind": "failure", "message": f.cause}
        for f in outcome.failures
    ]
    rows += [
        {"build_id": build_id, "query": orl.query, "kind": "warning", "message": w}
        for orl in outcome.orls.values()
        for w in orl.warnings
    ]
    return rows


def store_build(
    engine: Engine,
    *,
    collection: str,
    params: BuildParameters,
    outcome: BuildOutcome,
    batches: Sequence[BatchInfo],
    name: str | None = None,
    created_by: str | None = None,
    parent_id: int | None = None,
    overrides: Sequence[dict[str, Any]] = (),
) -> int:
    """Write a build and everything it produced in one transaction.

    Parameters
    ----------
    engine
        The store.
    collection
        Collection the judgments came from.
    params
        The *resolved* parameters.
    outcome
        ORLs, failures and warnings.
    batches
        The ingest batches the build read (``id < 0``: a batch deleted since,
        known by its hash only).
    name
        Optional human name.
    created_by
        Who ran it (default: the OS user).
    parent_id
        The build this one is derived from (overrides).
    overrides
        For a derived build, its overrides oldest first (the parent's, then the
        new one): ``query, action, argument, reason, created_by`` and
        optionally ``created_at`` (default: now).

    Returns
    -------
    int
        The new build's id.
    """
    now = _now()
    with write_transaction(engine) as connection:
        cid = collection_id(connection, collection)
        build_id = connection.execute(
            insert(Build)
            .values(
                collection_id=cid,
                name=name,
                source=params.source,
                method=str(params.method),
                parameters=params.to_json(),
                package_version=__version__,
                seed=int(params.seed or 0),
                created_at=now,
                created_by=created_by or default_user(),
                parent_id=parent_id,
                n_queries=len(outcome.orls),
                n_failed=len(outcome.failures),
            )
            .returning(Build.id)
        ).scalar_one()
        if batches:
            connection.execute(
                insert(BuildBatch),
                [
                    {
                        "build_id": build_id,
                        "batch_id": b.id if b.id >= 0 else None,
                        "kind": b.kind,
                        "file_name": b.file_name,
                        "sha256": b.sha256,
                        "row_count": b.row_count,
                    }
                    for b in batches
                ],
            )
        for table, rows in (
            (OrlEntry, _entry_rows(build_id, outcome.orls.values())),
            (TieDecisionRow, _decision_rows(build_id, outcome.orls.values())),
            (BuildMessage, _message_rows(build_id, outcome)),
        ):
            if rows:
                connection.execute(insert(table), rows)
        if overrides:
            connection.execute(
                insert(BuildOverride),
                [
                    {"build_id": build_id, "parent_id": parent_id, "created_at": now, **o}
                    for o in overrides
                ],
            )
    return int(build_id)


JUDGMENT_LOADERS: dict[str, Callable[..., pd.DataFrame]] = {
    "pairwise": load_pairwise,
    "listwise": load_listwise,
    "graded": load_graded,
}


def build_and_store(
    engine: Engine,
    params: BuildParameters,
    *,
    collection: str = DEFAULT_COLLECTION,
    name: str | None = None,
    on_error: str = "stop",
    progress: Callable[[int], AbstractContextManager[Callable[[int], None]]] | None = None,
    created_by: str | None = None,
) -> tuple[int, BuildParameters, BuildOutcome]:
    """Read the collection's judgments of ``params.source``, build the ORLs, store the build.

    With ``on_error="stop"`` any failed query raises
    :class:`~orlbuild.errors.BuildError` before anything is written.

    Parameters
    ----------
    engine
        The store.
    params
        Build options (resolved against the data).
    collection
        Collection to read.
    name
        Optional build name.
    on_error
        ``"stop"`` or ``"skip"`` (:class:`~orlbuild.builders.vocabulary.OnError`).
    progress
        Called with the number of queries; returns a context manager yielding
        the ``advance(n)`` callable of a progress bar.
    created_by
        Who ran it (default: the OS user).

    Returns
    -------
    build_id : int
    params : BuildParameters
        Resolved parameters.
    outcome : BuildOutcome
    """
    # Imported here: the estimators pull in choix/scipy/networkx, which every other
    # command that opens the store (this module registers the build tables) would pay for.
    from orlbuild.builders.build import build_orls

    if params.source not in JUDGMENT_LOADERS:
        raise ConfigError(
            f"--source {params.source!r} is not valid; choose one of graded, listwise, pairwise"
        )
    frame = JUDGMENT_LOADERS[params.source](engine, collection)
    if frame.empty:
        raise BuildError(
            f"collection {collection!r} has no {params.source} judgments; ingest some first"
        )
    bar = progress(int(frame["query"].nunique())) if progress is not None else nullcontext(None)
    with bar as advance:
        resolved, outcome = build_orls(frame, params, on_error=on_error, advance=advance)
    fingerprints = batch_fingerprints(engine, frame["batch_id"].unique().tolist())
    build_id = store_build(
        engine,
        collection=collection,
        params=resolved,
        outcome=outcome,
        batches=[fingerprints[k] for k in sorted(fingerprints)],
        name=name,
        created_by=created_by,
    )
    return build_id, resolved, outcome


# --- reading ------------------------------------------------------------------------------


def resolve_build(bind: Bind, ref: str | int) -> int:
    """The id of a build given as an id or a name (the newest build of that name).

    A build derived by an override keeps its parent's name, so a name follows
    the audited version; use the id to read an earlier one.

    Raises
    ------
    StoreError
        When no build matches.
    """
    text = str(ref).strip()
    with connect(bind) as connection:
        if text.isdigit():
            found = connection.scalar(select(Build.id).where(Build.id == int(text)))
        else:
            found = connection.scalar(
                select(Build.id).where(Build.name == text).order_by(Build.id.desc()).limit(1)
            )
    if found is None:
        raise StoreError(f"no build {text!r} in the store; see `orlbuild orl list`")
    return int(found)


def get_build(bind: Bind, build: str | int) -> BuildRecord:
    """Metadata of one build (by id or name), with the batches it read."""
    build_id = resolve_build(bind, build)
    with connect(bind) as connection:
        b = connection.execute(
            select(
                Build.id,
                Build.name,
                Collection.name.label("collection"),
                Build.source,
                Build.method,
                Build.parameters,
                Build.package_version,
                Build.seed,
                Build.created_at,
                Build.created_by,
                Build.parent_id,
                Build.n_queries,
                Build.n_failed,
            )
            .join(Collection, Collection.id == Build.collection_id)
            .where(Build.id == build_id)
        ).one()
        bb = BuildBatch
        batch_rows = connection.execute(
            select(bb.batch_id, bb.kind, bb.file_name, bb.sha256, bb.row_count)
            .where(bb.build_id == build_id)
            .order_by(bb.id)
        ).all()
        o = BuildOverride
        override_rows = connection.execute(
            select(o.query, o.action, o.argument, o.reason, o.created_by, o.created_at)
            .where(o.build_id == build_id)
            .order_by(o.id)
        ).all()
    created_at = as_utc(b.created_at)
    batches = tuple(
        BatchInfo(
            id=-1 if r.batch_id is None else int(r.batch_id),
            kind=r.kind,
            file_name=r.file_name,
            sha256=r.sha256,
            row_count=int(r.row_count),
            created_at=created_at,
        )
        for r in batch_rows
    )
    return BuildRecord(
        id=int(b.id),
        name=b.name,
        collection=str(b.collection),
        source=b.source,
        method=b.method,
        parameters=dict(b.parameters),
        package_version=b.package_version,
        seed=int(b.seed),
        created_at=created_at,
        created_by=b.created_by,
        parent_id=None if b.parent_id is None else int(b.parent_id),
        n_queries=int(b.n_queries),
        n_failed=int(b.n_failed),
        batches=batches,
        overrides=tuple(dict(r._mapping) for r in override_rows),
    )


def list_builds(bind: Bind, collection: str | None = None) -> pd.DataFrame:
    """All builds, newest first: ``id, name, collection, source, method, queries, failed,
    created_at, created_by, parent``."""
    stmt = (
        select(
            Build.id,
            Build.name,
            Collection.name,
            Build.source,
            Build.method,
            Build.n_queries,
            Build.n_failed,
            Build.created_at,
            Build.created_by,
            Build.parent_id,
        )
        .join(Collection, Collection.id == Build.collection_id)
        .order_by(Build.id.desc())
    )
    if collection is not None:
        stmt = stmt.where(Collection.name == collection)
    columns = [
        "id",
        "name",
        "collection",
        "source",
        "method",
        "queries",
        "failed",
        "created_at",
        "created_by",
        "parent",
    ]
    with connect(bind) as connection:
        rows = connection.execute(stmt).all()
    frame = pd.DataFrame.from_records(rows, columns=columns)
    frame["parent"] = frame["parent"].astype("Int64")
    return frame


ENTRY_COLUMNS = ["query", "item", "rank", "score", "low", "high", "native_grade"]


def load_build_entries(
    bind: Bind, build_id: int, queries: Iterable[str] | None = None
) -> pd.DataFrame:
    """ORL entries of a build sorted by query, rank, item (columns :data:`ENTRY_COLUMNS`)."""
    e = OrlEntry
    stmt = select(e.query, e.item, e.rank, e.score, e.low, e.high, e.native_grade).where(
        e.build_id == build_id
    )
    if queries is not None:
        stmt = stmt.where(e.query.in_(sorted(set(queries))))
    with connect(bind) as connection:
        rows = connection.execute(stmt.order_by(e.query, e.rank, e.score.desc(), e.item)).all()
    frame = pd.DataFrame.from_records(rows, columns=ENTRY_COLUMNS)
    return frame.astype(
        {
            "rank": "int64",
            "score": "float64",
            "low": "float64",
            "high": "float64",
            "native_grade": "float64",
        }
    )


#: Numeric evidence of the --tiering procedures stored with each decision.
EVIDENCE_FLOATS = ("critical", "z", "bic_penalty", "loglik_gain", "bic_change")

DECISION_COLUMNS = [
    "build",
    "query",
    "leader",
    "item",
    "score_leader",
    "score_item",
    "diff",
    "se",
    "p_value",
    "decision",
    "rule",
    "variance",
    "procedure",
    "family_size",
    *EVIDENCE_FLOATS,
]


def load_tie_decisions(
    bind: Bind, build_ids: Sequence[int], query: str | None = None
) -> pd.DataFrame:
    """Tie decisions of the given builds, newest build first, in walking order.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`DECISION_COLUMNS`.
    """
    d = TieDecisionRow
    stmt = select(
        d.build_id,
        d.query,
        d.leader,
        d.item,
        d.score_leader,
        d.score_item,
        d.diff,
        d.se,
        d.p_value,
        d.decision,
        d.rule,
        d.variance,
        d.procedure,
        d.family_size,
        *(getattr(d, k) for k in EVIDENCE_FLOATS),
    ).where(d.build_id.in_(list(build_ids)))
    if query is not None:
        stmt = stmt.where(d.query == query)
    with connect(bind) as connection:
        rows = connection.execute(stmt.order_by(d.build_id.desc(), d.query, d.position)).all()
    frame = pd.DataFrame.from_records(rows, columns=DECISION_COLUMNS)
    frame["family_size"] = frame["family_size"].astype("Int64")
    return frame


TIERING_COLUMNS = [
    "build",
    "query",
    "procedure",
    "family_size",
    "critical",
    "bic_penalty",
    "variance",
    "sig",
    "mc_draws",
    "seed",
    "decisions",
    "separated",
]


def tiering_by_query(
    decisions: pd.DataFrame, parameters: dict[int, dict[str, Any]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-query summary of how tiers were decided, and the decisions with gaps filled.

    Decisions stored before ``--tiering`` existed have no procedure: those of a
    test (a p-value) read as their build's ``tiering``, which is ``leader`` for
    such builds (:meth:`BuildParameters.from_json`).

    Parameters
    ----------
    decisions
        :func:`load_tie_decisions` output.
    parameters
        Build id -> stored parameters.

    Returns
    -------
    summary : pandas.DataFrame
        One row per (build, query), columns :data:`TIERING_COLUMNS`: the
        procedure, its family size, the largest critical value a decision was
        compared with (``simultaneous``: the single-step ``c`` when the first
        step was used; ``leader``: the normal quantile) or BIC penalty
        (``model``), the variance, ``sig``, and the Monte Carlo draws and seed
        of the critical values (the build seed; the draws depend on it and on
        the number of items, :func:`orlbuild.builders.max_t.standard_normal_draws`).
    decisions : pandas.DataFrame
        The input with ``procedure`` filled for older builds.
    """
    filled = decisions.copy()
    legacy = {b: BuildParameters.from_json(p).tiering or "none" for b, p in parameters.items()}
    tested = filled["procedure"].isna() & filled["p_value"].notna()
    filled.loc[tested, "procedure"] = filled.loc[tested, "build"].map(legacy)
    rows = []
    for (build, query), part in filled.groupby(["build", "query"], sort=False):
        decided = part[part["procedure"].notna()]  # override decisions have none
        first = (decided if len(decided) else part).iloc[0]
        params = parameters.get(int(build), {})
        procedure = first["procedure"] if pd.notna(first["procedure"]) else "rule"
        rows.append(
            {
                "build": int(build),
                "query": str(query),
                "procedure": procedure,
                "family_size": _int_or_none(first["family_size"]),
                "critical": _none(decided["critical"].max()) if len(decided) else None,
                "bic_penalty": _none(first["bic_penalty"]),
                "variance": str(first["variance"]),
                "sig": params.get("sig"),
                "mc_draws": params.get("mc_draws") if procedure == "simultaneous" else None,
                "seed": params.get("seed") if procedure == "simultaneous" else None,
                "decisions": len(part),
                "separated": int((part["decision"] == "separated").sum()),
            }
        )
    return pd.DataFrame(rows, columns=TIERING_COLUMNS), filled


def load_build_messages(bind: Bind, build_id: int) -> pd.DataFrame:
    """Failures and warnings of a build: ``query, kind, message``."""
    m = BuildMessage
    stmt = select(m.query, m.kind, m.message).where(m.build_id == build_id).order_by(m.id)
    with connect(bind) as connection:
        rows = connection.execute(stmt).all()
    return pd.DataFrame.from_records(rows, columns=["query", "kind", "message"])


def load_build_orls(bind: Bind, build: str | int) -> dict[str, ORL]:
    """The ORLs of a build as :class:`scoring.ORL` objects, for scoring.

    Graded builds carry their native grades (``nDCG(gain=native)``).

    Parameters
    ----------
    bind
        Engine, connection or session.
    build
        Build id or name.

    Returns
    -------
    dict of str to scoring.ORL
        Query -> ORL, sorted by query.
    """
    from scoring.orl import ORL  # the scoring package is heavy to import; only needed here

    build_id = resolve_build(bind, build)
    entries = load_build_entries(bind, build_id)
    orls: dict[str, ORL] = {}
    for query, part in entries.groupby("query", sort=True):
        ranks = dict(zip(part["item"], part["rank"].astype(int).tolist(), strict=True))
        grades = part["native_grade"]
        native = None
        if grades.notna().all():
            native = dict(zip(part["item"], grades.tolist(), strict=True))
        orls[str(query)] = ORL(ranks, grades=native)
    return orls


def load_query_orls(bind: Bind, build_id: int) -> dict[str, QueryORL]:
    """The full per-query records of a build (tiers, scores, intervals, decisions)."""
    entries = load_build_entries(bind, build_id)
    decisions = load_tie_decisions(bind, [build_id])
    messages = load_build_messages(bind, build_id)
    by_query: dict[str, list[TieDecision]] = {}
    for row in decisions.itertuples(index=False):
        by_query.setdefault(str(row.query), []).append(
            TieDecision(
                query=str(row.query),
                leader=str(row.leader),
                item=str(row.item),
                score_leader=_nan(row.score_leader),
                score_item=_nan(row.score_item),
                diff=_nan(row.diff),
                se=_none(row.se),
                p_value=_none(row.p_value),
                decision=str(row.decision),
                rule=str(row.rule),
                variance=str(row.variance),
                procedure=None if row.procedure is None else str(row.procedure),
                family_size=_int_or_none(row.family_size),
                **{k: _none(getattr(row, k)) for k in EVIDENCE_FLOATS},
            )
        )
    warnings = messages[messages["kind"] == "warning"].groupby("query")["message"].apply(list)
    out: dict[str, QueryORL] = {}
    for query, part in entries.groupby("query", sort=True):
        q = str(query)
        tiers = [list(g["item"]) for _, g in part.groupby("rank", sort=True)]
        grades = part["native_grade"]
        out[q] = QueryORL(
            query=q,
            tiers=tiers,
            scores=dict(zip(part["item"], part["score"].tolist(), strict=True)),
            intervals={
                i: None if pd.isna(lo) else (float(lo), float(hi))
                for i, lo, hi in zip(part["item"], part["low"], part["high"], strict=True)
            },
            decisions=by_query.get(q, []),
            native_grades=dict(zip(part["item"], grades.tolist(), strict=True))
            if grades.notna().all()
            else None,
            warnings=list(warnings.get(q, [])),
        )
    return out


def _nan(value: Any) -> float:
    return float("nan") if value is None or pd.isna(value) else float(value)


def _int_or_none(value: Any) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def _none(value: Any) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def load_build_judgments(bind: Bind, build: BuildRecord) -> pd.DataFrame:
    """The judgments a build read (its source, restricted to its batches)."""
    frame = JUDGMENT_LOADERS[build.source](bind, build.collection)
    ids = {b.id for b in build.batches}
    return frame[frame["batch_id"].isin(ids)].reset_index(drop=True)


def builds_using_batch(bind: Bind, batch_id: int) -> list[int]:
    """Ids of the builds that read ingest batch ``batch_id`` (deleting it is refused then)."""
    stmt = (
        select(BuildBatch.build_id)
        .where(BuildBatch.batch_id == batch_id)
        .distinct()
        .order_by(BuildBatch.build_id)
    )
    with connect(bind) as connection:
        return [int(b) for b in connection.scalars(stmt)]


# --- overrides ----------------------------------------------------------------------------


def override_build(
    engine: Engine,
    build: str | int,
    *,
    query: str,
    reason: str,
    merge_tier: int | None = None,
    split_at: str | None = None,
    by: str | None = None,
) -> int:
    """Derive a new build from ``build`` with one query's tiers merged or split.

    The original build is never modified: every ORL, decision and message is
    copied into the new build, the override is applied to ``query``, and the
    override (who, why) is recorded with the new build, whose parent is the
    original (after the parent's own overrides, so a build lists its whole
    override history).

    Raises
    ------
    ConfigError
        Neither or both of ``merge_tier``/``split_at``, an empty reason, or an
        override that does not fit the ORL.
    StoreError
        Unknown build or query.
    """
    if (merge_tier is None) == (split_at is None):
        raise ConfigError("give exactly one of --merge-tiers T or --split-at ITEM")
    if not reason.strip():
        raise ConfigError("--reason must not be empty: say why the ORL is overridden")
    record = get_build(engine, build)
    orls = load_query_orls(engine, record.id)
    if query not in orls:
        raise StoreError(f"build {record.id} has no ORL for query {query!r}")
    if merge_tier is not None:
        orls[query] = merge_adjacent_tiers(orls[query], merge_tier)
        action, argument = "merge-tiers", str(merge_tier)
    else:
        orls[query] = split_tier_at(orls[query], str(split_at))
        action, argument = "split-at", str(split_at)
    messages = load_build_messages(engine, record.id)
    failures = [
        QueryFailure(str(r.query), str(r.message))
        for r in messages[messages["kind"] == "failure"].itertuples(index=False)
    ]
    params = BuildParameters.from_json(record.parameters)
    who = by or default_user()
    return store_build(
        engine,
        collection=record.collection,
        params=params,
        outcome=BuildOutcome(orls=orls, failures=failures),
        batches=record.batches,
        name=record.name,
        created_by=who,
        parent_id=record.id,
        overrides=[
            *record.overrides,
            {
                "query": query,
                "action": action,
                "argument": argument,
                "reason": reason.strip(),
                "created_by": who,
            },
        ],
    )
