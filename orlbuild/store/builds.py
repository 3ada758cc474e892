"""ORL builds in the store: writing a build, reading it back.

A build is immutable (docs/tiers-and-audit.md, "Audit"): once written, no function
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

This is the one module that maps the build records of :mod:`orlbuild.records`
(``QueryORL``, ``TieDecision``, ``QueryFailure``, ``BuildOutcome``) to rows and
back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import pandas as pd
from sqlalchemy import (
    Connection,
    Engine,
    insert,
    select,
)
from sqlalchemy.exc import IntegrityError

from orlbuild import __version__
from orlbuild.errors import StoreError
from orlbuild.records import (
    BuildOutcome,
    PosteriorBoundary,
    QueryFailure,
    QueryORL,
    QueryPosterior,
    TieDecision,
)
from orlbuild.store.driver_errors import retry_on_disconnect
from orlbuild.store.engine import Bind, as_utc, connect, finite_or_none, write_transaction
from orlbuild.store.ids import checked_id
from orlbuild.store.models import (
    AnnotatorReliabilityRow,
    Build,
    BuildBatch,
    BuildMessage,
    BuildOverride,
    Collection,
    IngestBatch,
    OrlEntry,
    PosteriorBoundaryRow,
    QueryOrdersRow,
    QueryPosteriorRow,
    TieDecisionRow,
)
from orlbuild.store.read import (
    BatchInfo,
    collection_id,
    load_graded,
    load_listwise,
    load_pairwise,
)
from orlbuild.store.users import current_user
from orlbuild.vocabulary import Source

if TYPE_CHECKING:
    from scoring.orl import ORL

__all__ = [
    "VERSIONED_NAME",
    "BuildChangedError",
    "BuildRecord",
    "BuildRows",
    "build_versions",
    "builds_using_batch",
    "derived_builds",
    "float_or_none",
    "get_build",
    "int_or_none",
    "list_builds",
    "load_annotator_reliabilities",
    "load_build_entries",
    "load_build_judgments",
    "load_build_messages",
    "load_build_orls",
    "load_query_failures",
    "load_query_orders",
    "load_query_orls",
    "load_query_posteriors",
    "load_tie_decisions",
    "load_under_judged",
    "resolve_build",
    "store_build",
]


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
    posterior_lambda: float | None = None
    posterior_tau: float | None = None

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
            "posterior_prior": None
            if self.posterior_lambda is None
            else {"lambda": self.posterior_lambda, "tau": self.posterior_tau},
        }


def _now() -> datetime:
    return datetime.now(timezone.utc)


# --- writing ------------------------------------------------------------------------------


#: The columns of an ``orl_entries`` row after ``build_id``, in :class:`BuildRows` order.
ENTRY_ROW_COLUMNS = (
    "query",
    "item",
    "rank",
    "score",
    "low",
    "high",
    "native_grade",
    "under_judged",
    "top_probability",
)
#: The columns of a ``query_posteriors`` row after ``build_id``.
QUERY_POSTERIOR_COLUMNS = ("query", "expected_wrong", "stated_orders", "k_feasible", "k_posterior")
#: The columns of a ``query_orders`` row after ``build_id``.
QUERY_ORDER_COLUMNS = ("query", "stated_orders", "unbacked_orders")
#: The columns of a ``posterior_boundaries`` row after ``build_id``.
BOUNDARY_ROW_COLUMNS = (
    "query",
    "component",
    "position",
    "above",
    "below",
    "probability",
    "stated",
)


#: Numeric evidence of the --tiering procedures stored with each decision.
EVIDENCE_FLOATS = ("critical", "z", "bic_penalty", "loglik_gain", "bic_change")
#: A boundary's weakest crossing pair and its unbacked orders (decisions that open a tier).
BOUNDARY_FLOATS = ("weakest_z", "weakest_critical")
BOUNDARY_FIELDS = ("weakest_above", "weakest_below", "crossing_pairs", "unbacked_pairs")
#: The pair's state: separated, equivalent (within the build's --margin) or undecided.
STATE_FIELDS = ("state",)
#: A decision's pair, its test and its rule: the fields every decision has.
DECISION_TEST_FIELDS = (
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
)

#: The columns of a ``tie_decisions`` row after ``build_id``, in :class:`BuildRows` order
#: (the table's).
DECISION_ROW_COLUMNS = (
    "query",
    "position",
    *DECISION_TEST_FIELDS,
    *EVIDENCE_FLOATS,
    *BOUNDARY_FIELDS[:2],
    *BOUNDARY_FLOATS,
    *BOUNDARY_FIELDS[2:],
    *STATE_FIELDS,
)


class BuildRows:
    """The ``orl_entries`` and ``tie_decisions`` rows of a build, made query by query.

    A build adds each query's ORL as its result arrives (:meth:`add`), so that
    with ``--jobs`` the rows are made while the other processes still compute,
    not after the last query on one core while the others idle
    (docs/parallel.md); :func:`store_build` then only inserts them. Rows are
    plain tuples without the build id (the columns :data:`ENTRY_ROW_COLUMNS` and
    :data:`DECISION_ROW_COLUMNS`), in the order the ORLs were added.
    """

    def __init__(self) -> None:
        self.entries: list[tuple[Any, ...]] = []
        self.decisions: list[tuple[Any, ...]] = []
        self.posteriors: list[tuple[Any, ...]] = []
        self.boundaries: list[tuple[Any, ...]] = []
        self.orders: list[tuple[Any, ...]] = []
        self.queries: list[str] = []

    def add(self, orl: QueryORL) -> None:
        """Make the rows of one query's ORL."""
        self.queries.append(orl.query)
        grades = orl.native_grades or {}
        flagged = set(orl.under_judged)
        scores, intervals = orl.scores, orl.intervals
        posterior = orl.posterior
        top = posterior.top_probability if posterior is not None else {}
        if orl.stated_orders is not None and orl.unbacked_orders is not None:
            self.orders.append((orl.query, int(orl.stated_orders), int(orl.unbacked_orders)))
        if posterior is not None:
            self.posteriors.append(
                (
                    orl.query,
                    float(posterior.expected_wrong),
                    int(posterior.stated),
                    posterior.k_feasible,
                    posterior.k_posterior,
                )
            )
            self.boundaries.extend(
                (orl.query, b.component, b.position, b.above, b.below, b.probability, b.stated)
                for b in posterior.boundaries
            )
        append = self.entries.append
        for rank, tier in enumerate(orl.tiers, start=1):
            for item in tier:
                interval = intervals.get(item)
                append(
                    (
                        orl.query,
                        item,
                        rank,
                        finite_or_none(scores.get(item)),
                        None if interval is None else finite_or_none(interval[0]),
                        None if interval is None else finite_or_none(interval[1]),
                        finite_or_none(grades.get(item)),
                        item in flagged if flagged else None,
                        finite_or_none(top.get(item)),
                    )
                )
        self.decisions.extend(
            (
                d.query,
                position,
                d.leader,
                d.item,
                finite_or_none(d.score_leader),
                finite_or_none(d.score_item),
                finite_or_none(d.diff),
                finite_or_none(d.se),
                finite_or_none(d.p_value),
                d.decision,
                d.rule,
                d.variance,
                d.procedure,
                d.family_size,
                finite_or_none(d.critical),
                finite_or_none(d.z),
                finite_or_none(d.bic_penalty),
                finite_or_none(d.loglik_gain),
                finite_or_none(d.bic_change),
                d.weakest_above,
                d.weakest_below,
                finite_or_none(d.weakest_z),
                finite_or_none(d.weakest_critical),
                d.crossing_pairs,
                d.unbacked_pairs,
                d.state,
            )
            for position, d in enumerate(orl.decisions)
        )

    @classmethod
    def of(cls, orls: Iterable[QueryORL]) -> BuildRows:
        """The rows of ``orls``, in their order."""
        rows = cls()
        for orl in orls:
            rows.add(orl)
        return rows


def _insert_rows(
    connection: Connection,
    table: Any,
    columns: Sequence[str],
    build_id: int,
    rows: Sequence[tuple[Any, ...]],
) -> None:
    """Insert ``rows`` (``columns`` after ``build_id``), in their order.

    With a positional driver (SQLite's ``?``) the statement is compiled once
    and the tuples go to the driver's ``executemany`` as they are: SQLAlchemy
    would build and process a parameter dictionary per row, which was half of
    writing a 500-query build (the values are already plain ``int``, ``str``,
    ``float`` and ``bool``). Other drivers get the rows through SQLAlchemy.
    """
    if not rows:
        return
    keys = ("build_id", *columns)
    compiled = insert(table).compile(dialect=connection.dialect, column_keys=list(keys))
    if compiled.positional and compiled.positiontup == list(keys):
        connection.exec_driver_sql(str(compiled), [(build_id, *row) for row in rows])
        return
    connection.execute(
        insert(table), [dict(zip(keys, (build_id, *row), strict=True)) for row in rows]
    )


def _reliability_rows(build_id: int, outcome: BuildOutcome) -> list[dict[str, Any]]:
    return [
        {
            "build_id": build_id,
            "annotator": r.annotator,
            "reliability": float(r.reliability),
            "low": finite_or_none(r.low),
            "high": finite_or_none(r.high),
            "comparisons": float(r.comparisons),
            "flips": r.flips,
        }
        for r in outcome.reliabilities
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
    parameters: Mapping[str, Any],
    outcome: BuildOutcome,
    batches: Sequence[BatchInfo],
    name: str | None = None,
    created_by: str | None = None,
    parent_id: int | None = None,
    overrides: Sequence[dict[str, Any]] = (),
    known_children: Sequence[int] | None = None,
    rows: BuildRows | None = None,
) -> int:
    """Write a build and everything it produced in one transaction.

    Parameters
    ----------
    engine
        The store.
    collection
        Collection the judgments came from.
    parameters
        The *resolved* parameters as JSON (``BuildParameters.to_json``): their
        ``source``, ``method`` and ``seed`` fill the build's columns.
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
    known_children
        For a derived build: the builds derived from ``parent_id`` when the
        caller read it. The parent is locked and, if a build was derived from
        it since, nothing is written and :class:`BuildChangedError` is raised:
        two overrides of one build never silently drop each other.
    rows
        The entry and decision rows of ``outcome.orls``, made while the build
        ran (:class:`BuildRows`); made here when not given.

    Returns
    -------
    int
        The new build's id.

    Raises
    ------
    BuildChangedError
        A build was derived from ``parent_id`` since ``known_children`` was read.
    """
    now = _now()
    if rows is not None and rows.queries != list(outcome.orls):
        raise ValueError("the rows given are not those of the outcome's ORLs, in order")

    def write() -> int:
        with write_transaction(engine) as connection:
            if parent_id is not None and known_children is not None:
                _check_unchanged(connection, parent_id, known_children)
            live = _lock_batches(connection, [b.id for b in batches if b.id >= 0])
            try:
                return _insert_build(connection, live)
            except IntegrityError as exc:  # rolled back; the caller keeps the computation
                reason = str(exc.orig or exc).strip().splitlines()[0]
                raise StoreError(f"the store refused the build ({reason})") from exc

    def _insert_build(connection: Connection, live: set[int]) -> int:
        cid = collection_id(connection, collection)
        build_id = connection.execute(
            insert(Build)
            .values(
                collection_id=cid,
                name=name,
                source=str(parameters["source"]),
                method=str(parameters["method"]),
                parameters=dict(parameters),
                package_version=__version__,
                seed=int(parameters.get("seed") or 0),
                created_at=now,
                created_by=created_by or current_user(),
                parent_id=parent_id,
                n_queries=len(outcome.orls),
                n_failed=len(outcome.failures),
                posterior_lambda=outcome.prior_lambda,
                posterior_tau=outcome.prior_tau,
            )
            .returning(Build.id)
        ).scalar_one()
        if batches:
            connection.execute(
                insert(BuildBatch),
                [
                    {
                        "build_id": build_id,
                        "batch_id": b.id if b.id in live else None,
                        "kind": b.kind,
                        "file_name": b.file_name,
                        "sha256": b.sha256,
                        "row_count": b.row_count,
                    }
                    for b in batches
                ],
            )
        made = rows if rows is not None else BuildRows.of(outcome.orls.values())
        _insert_rows(connection, OrlEntry, ENTRY_ROW_COLUMNS, build_id, made.entries)
        _insert_rows(connection, TieDecisionRow, DECISION_ROW_COLUMNS, build_id, made.decisions)
        _insert_rows(
            connection, QueryPosteriorRow, QUERY_POSTERIOR_COLUMNS, build_id, made.posteriors
        )
        _insert_rows(
            connection, PosteriorBoundaryRow, BOUNDARY_ROW_COLUMNS, build_id, made.boundaries
        )
        _insert_rows(connection, QueryOrdersRow, QUERY_ORDER_COLUMNS, build_id, made.orders)
        for table, dicts in (
            (BuildMessage, _message_rows(build_id, outcome)),
            (AnnotatorReliabilityRow, _reliability_rows(build_id, outcome)),
        ):
            if dicts:
                connection.execute(insert(table), dicts)
        if overrides:
            connection.execute(
                insert(BuildOverride),
                [
                    {"build_id": build_id, "parent_id": parent_id, "created_at": now, **o}
                    for o in overrides
                ],
            )
        return int(build_id)

    # A lost connection is retried once: the computation behind the build is kept.
    return retry_on_disconnect(engine, write)


def _lock_batches(connection: Connection, ids: Sequence[int]) -> set[int]:
    """Lock the batch rows ``ids`` against deletion until commit; those that still exist.

    A build (or an override) racing a ``batches delete --force`` of a batch it read
    either locks the row first (PostgreSQL ``SELECT ... FOR SHARE``: the delete waits,
    then clears the new build's reference as it does the others'), or finds the row
    gone and records that batch by its hash only, as a batch deleted before the build
    (docs/reliability.md, "Batch ids and concurrent deletes"). On SQLite
    ``BEGIN IMMEDIATE`` already serialises the two.
    """
    if not ids:
        return set()
    found = connection.scalars(
        select(IngestBatch.id)
        .where(IngestBatch.id.in_(sorted(set(ids))))
        .with_for_update(read=True)
    ).all()
    return {int(i) for i in found}


class BuildChangedError(StoreError):
    """A build was derived from the parent since the caller read it (a concurrent override).

    Attributes
    ----------
    parent
        The build read.
    children
        The builds derived from it meanwhile, oldest first.
    """

    def __init__(self, parent: int, children: Sequence[int]) -> None:
        self.parent = parent
        self.children = tuple(children)
        newest = self.children[-1]
        super().__init__(
            f"build {parent} changed since you read it: build {newest} was derived from it "
            f"meanwhile; rerun (on build {newest} to keep its override too)"
        )


def _check_unchanged(connection: Connection, parent_id: int, known: Sequence[int]) -> None:
    """Lock build ``parent_id`` and refuse when a build not in ``known`` derives from it.

    On PostgreSQL the parent's row is locked (``SELECT ... FOR UPDATE``), so a
    concurrent override waits for this transaction and then sees its build; on
    SQLite ``BEGIN IMMEDIATE`` already serialises the writers.
    """
    connection.execute(select(Build.id).where(Build.id == parent_id).with_for_update())
    children = connection.scalars(
        select(Build.id).where(Build.parent_id == parent_id).order_by(Build.id)
    ).all()
    new = [int(c) for c in children if int(c) not in set(known)]
    if new:
        raise BuildChangedError(parent_id, new)


def derived_builds(bind: Bind, build_id: int) -> tuple[int, ...]:
    """The ids of the builds derived from ``build_id`` (by overrides), oldest first."""
    with connect(bind) as connection:
        found = connection.scalars(
            select(Build.id).where(Build.parent_id == build_id).order_by(Build.id)
        ).all()
    return tuple(int(i) for i in found)


JUDGMENT_LOADERS: dict[Source, Callable[..., pd.DataFrame]] = {
    Source.pairwise: load_pairwise,
    Source.listwise: load_listwise,
    Source.graded: load_graded,
}


# --- reading ------------------------------------------------------------------------------


#: ``NAME@N``: the N-th build stored under NAME (docs/tiers-and-audit.md, "Build names").
VERSIONED_NAME = re.compile(r"(?s)(.+)@([1-9][0-9]*)")


def resolve_build(bind: Bind, ref: str | int) -> int:
    """The id of a build given as an id, a name (its newest version) or ``NAME@N``.

    Every build stored under a name is a version of it, numbered from 1 in
    the order they were stored: ``NAME`` is the newest, ``NAME@1`` the first
    (docs/tiers-and-audit.md, "Build names"). A build derived by an override keeps its
    parent's name, so a name follows the audited version.

    Raises
    ------
    StoreError
        When no build matches.
    """
    text = str(ref).strip()
    with connect(bind) as connection:
        if text.isdigit():
            number = checked_id(connection, int(text), "build", "orlbuild orl list")
            found = connection.scalar(select(Build.id).where(Build.id == number))
        else:
            found = connection.scalar(
                select(Build.id).where(Build.name == text).order_by(Build.id.desc()).limit(1)
            )
            versioned = VERSIONED_NAME.fullmatch(text)
            if found is None and versioned is not None:
                versions = build_versions(connection, versioned.group(1))
                number = int(versioned.group(2))
                if versions and number > len(versions):
                    raise StoreError(
                        f"build {versioned.group(1)!r} has {len(versions)} version(s); "
                        f"no {text!r} (see `orlbuild orl list`)"
                    )
                found = versions[number - 1] if versions else None
    if found is None:
        raise StoreError(f"no build {text!r} in the store; see `orlbuild orl list`")
    return int(found)


def build_versions(bind: Bind, name: str) -> list[int]:
    """Ids of the builds stored under ``name``, oldest first (version ``i + 1`` is ``[i]``)."""
    with connect(bind) as connection:
        return [
            int(i)
            for i in connection.scalars(
                select(Build.id).where(Build.name == name.strip()).order_by(Build.id)
            )
        ]


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
                Build.posterior_lambda,
                Build.posterior_tau,
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
        posterior_lambda=float_or_none(b.posterior_lambda),
        posterior_tau=float_or_none(b.posterior_tau),
    )


def list_builds(bind: Bind, collection: str | None = None) -> pd.DataFrame:
    """All builds, newest first: ``id, name, version, collection, source, method, queries,
    failed, created_at, created_by, parent``.

    ``version`` is N of ``NAME@N`` (docs/tiers-and-audit.md, "Build names"), empty for
    unnamed builds.
    """
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
        named = connection.execute(
            select(Build.id, Build.name).where(Build.name.is_not(None)).order_by(Build.id)
        ).all()
    frame = pd.DataFrame.from_records(rows, columns=columns)
    frame["parent"] = frame["parent"].astype("Int64")
    versions = pd.DataFrame.from_records(named, columns=["id", "name"])
    number = versions.groupby("name").cumcount() + 1
    by_id = dict(zip(versions["id"].tolist(), number.tolist(), strict=True))
    frame.insert(2, "version", frame["id"].map(by_id).astype("Int64"))
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


DECISION_COLUMNS = [
    "build",
    "query",
    *DECISION_TEST_FIELDS,
    *EVIDENCE_FLOATS,
    *BOUNDARY_FIELDS,
    *BOUNDARY_FLOATS,
    *STATE_FIELDS,
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
        *(getattr(d, k) for k in BOUNDARY_FIELDS),
        *(getattr(d, k) for k in BOUNDARY_FLOATS),
        *(getattr(d, k) for k in STATE_FIELDS),
    ).where(d.build_id.in_(list(build_ids)))
    if query is not None:
        stmt = stmt.where(d.query == query)
    with connect(bind) as connection:
        rows = connection.execute(stmt.order_by(d.build_id.desc(), d.query, d.position)).all()
    frame = pd.DataFrame.from_records(rows, columns=DECISION_COLUMNS)
    frame["family_size"] = frame["family_size"].astype("Int64")
    for column in ("crossing_pairs", "unbacked_pairs"):
        frame[column] = frame[column].astype("Int64")
    return frame


def load_under_judged(bind: Bind, build_id: int) -> dict[str, set[str]]:
    """Query -> items flagged as under-judged in a build (placed by estimate, orders not backed)."""
    e = OrlEntry
    stmt = select(e.query, e.item).where(e.build_id == build_id, e.under_judged.is_(True))
    with connect(bind) as connection:
        rows = connection.execute(stmt).all()
    out: dict[str, set[str]] = {}
    for query, item in rows:
        out.setdefault(str(query), set()).add(str(item))
    return out


RELIABILITY_COLUMNS = ["annotator", "reliability", "low", "high", "comparisons", "flips"]


def load_annotator_reliabilities(bind: Bind, build_id: int) -> pd.DataFrame:
    """The annotators' reliabilities of a build (empty unless ``--annotators reliability``)."""
    r = AnnotatorReliabilityRow
    stmt = (
        select(r.annotator, r.reliability, r.low, r.high, r.comparisons, r.flips)
        .where(r.build_id == build_id)
        .order_by(r.annotator)
    )
    with connect(bind) as connection:
        rows = connection.execute(stmt).all()
    frame = pd.DataFrame.from_records(rows, columns=RELIABILITY_COLUMNS)
    frame["flips"] = frame["flips"].astype("Int64")
    return frame


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
    """The full per-query records of a stored build (tiers, scores, intervals, decisions).

    Parameters
    ----------
    bind
        Engine, connection or session.
    build_id
        The build.

    Returns
    -------
    dict of str to QueryORL
        Query -> record, sorted by query.
    """
    entries = load_build_entries(bind, build_id)
    decisions = load_tie_decisions(bind, [build_id])
    messages = load_build_messages(bind, build_id)
    flagged = load_under_judged(bind, build_id)
    posteriors = load_query_posteriors(bind, build_id)
    orders = load_query_orders(bind, build_id)
    by_query: dict[str, list[TieDecision]] = {}
    for row in decisions.itertuples(index=False):
        by_query.setdefault(str(row.query), []).append(
            TieDecision(
                query=str(row.query),
                leader=str(row.leader),
                item=str(row.item),
                score_leader=nan_or_float(row.score_leader),
                score_item=nan_or_float(row.score_item),
                diff=nan_or_float(row.diff),
                se=float_or_none(row.se),
                p_value=float_or_none(row.p_value),
                decision=str(row.decision),
                rule=str(row.rule),
                variance=str(row.variance),
                procedure=None if row.procedure is None else str(row.procedure),
                family_size=int_or_none(row.family_size),
                critical=float_or_none(row.critical),
                z=float_or_none(row.z),
                bic_penalty=float_or_none(row.bic_penalty),
                loglik_gain=float_or_none(row.loglik_gain),
                bic_change=float_or_none(row.bic_change),
                weakest_above=_name_or_none(row.weakest_above),
                weakest_below=_name_or_none(row.weakest_below),
                weakest_z=float_or_none(row.weakest_z),
                weakest_critical=float_or_none(row.weakest_critical),
                crossing_pairs=int_or_none(row.crossing_pairs),
                unbacked_pairs=int_or_none(row.unbacked_pairs),
                state=_name_or_none(row.state),
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
            under_judged=sorted(flagged.get(q, ())),
            stated_orders=orders[q][0] if q in orders else None,
            unbacked_orders=orders[q][1] if q in orders else None,
            posterior=posteriors.get(q),
        )
    return out


def load_query_orders(bind: Bind, build_id: int) -> dict[str, tuple[int, int]]:
    """Query -> ``(stated, unbacked)`` cross-tier orders stored with a build (none for
    queries no test tiered, nor for builds stored before migration 0019_query_facts that
    stated no unbacked order: unknown for them)."""
    q = QueryOrdersRow
    stmt = select(q.query, q.stated_orders, q.unbacked_orders).where(q.build_id == build_id)
    with connect(bind) as connection:
        rows = connection.execute(stmt.order_by(q.query)).all()
    return {str(r.query): (int(r.stated_orders), int(r.unbacked_orders)) for r in rows}


def load_query_posteriors(
    bind: Bind, build_id: int, queries: Iterable[str] | None = None
) -> dict[str, QueryPosterior]:
    """Query -> the posterior evidence stored with a build (none for builds stored before
    migration 0015_posterior_evidence, graded and ``direct`` builds, overridden queries)."""
    qp, pb, e = QueryPosteriorRow, PosteriorBoundaryRow, OrlEntry
    wanted = None if queries is None else sorted(set(queries))
    heads = select(qp.query, qp.expected_wrong, qp.stated_orders, qp.k_feasible, qp.k_posterior)
    gaps = select(
        pb.query, pb.component, pb.position, pb.above, pb.below, pb.probability, pb.stated
    )
    tops = select(e.query, e.item, e.top_probability).where(e.top_probability.is_not(None))
    heads, gaps, tops = (
        stmt.where(table.build_id == build_id)
        for stmt, table in ((heads, qp), (gaps, pb), (tops, e))
    )
    if wanted is not None:
        heads = heads.where(qp.query.in_(wanted))
        gaps = gaps.where(pb.query.in_(wanted))
        tops = tops.where(e.query.in_(wanted))
    with connect(bind) as connection:
        head_rows = connection.execute(heads.order_by(qp.query)).all()
        gap_rows = connection.execute(gaps.order_by(pb.query, pb.component, pb.position)).all()
        top_rows = connection.execute(tops.order_by(e.query, e.item)).all()
    boundaries: dict[str, list[PosteriorBoundary]] = {}
    for r in gap_rows:
        boundaries.setdefault(str(r.query), []).append(
            PosteriorBoundary(
                component=int(r.component),
                position=int(r.position),
                above=str(r.above),
                below=str(r.below),
                probability=float(r.probability),
                stated=bool(r.stated),
            )
        )
    top: dict[str, dict[str, float]] = {}
    for r in top_rows:
        top.setdefault(str(r.query), {})[str(r.item)] = float(r.top_probability)
    return {
        str(r.query): QueryPosterior(
            expected_wrong=float(r.expected_wrong),
            stated=int(r.stated_orders),
            boundaries=boundaries.get(str(r.query), []),
            top_probability=top.get(str(r.query), {}),
            k_feasible=int_or_none(r.k_feasible),
            k_posterior=int_or_none(r.k_posterior),
        )
        for r in head_rows
    }


def _name_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def load_query_failures(bind: Bind, build_id: int) -> list[QueryFailure]:
    """The queries a stored build failed on, with their causes, in stored order."""
    messages = load_build_messages(bind, build_id)
    return [
        QueryFailure(str(r.query), str(r.message))
        for r in messages[messages["kind"] == "failure"].itertuples(index=False)
    ]


def load_build_judgments(bind: Bind, build: BuildRecord) -> pd.DataFrame:
    """The judgments a build read (its source, restricted to its batches)."""
    frame = JUDGMENT_LOADERS[Source(build.source)](bind, build.collection)
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


def nan_or_float(value: Any) -> float:
    """``value`` as a float, NaN for a missing (``None``/NaN) value."""
    return float("nan") if value is None or pd.isna(value) else float(value)


def int_or_none(value: Any) -> int | None:
    """``value`` as an int, ``None`` for a missing (``None``/NA) value."""
    return None if value is None or pd.isna(value) else int(value)


def float_or_none(value: Any) -> float | None:
    """``value`` as a float, ``None`` for a missing (``None``/NaN) value."""
    return None if value is None or pd.isna(value) else float(value)
