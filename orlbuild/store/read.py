"""The read API: judgments, runs and batches as pandas DataFrames with string ids.

ORL builders and scorers call these functions and never build SQL
themselves. Every ``load_*`` function takes an engine, a connection or an ORM
session, a collection name, and optionally the query names to restrict to;
its result is sorted and has a fixed set of columns even when empty.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd
from sqlalchemy import Connection, func, select

from orlbuild.errors import StoreError
from orlbuild.gc_pause import paused_gc
from orlbuild.store.bulk import IN_LIST_CHUNK
from orlbuild.store.engine import Bind, connect
from orlbuild.store.models import (
    Annotator,
    Collection,
    GradedJudgment,
    IngestBatch,
    Item,
    ListwiseJudgment,
    PairwiseJudgment,
    Query,
    RunEntry,
    System,
)
from orlbuild.vocabulary import DEFAULT_COLLECTION

if TYPE_CHECKING:
    from scoring.run import OrderBy

__all__ = [
    "BATCH_COLUMNS",
    "BatchInfo",
    "batch_fingerprints",
    "collection_id",
    "list_batches",
    "list_collections",
    "list_systems",
    "load_graded",
    "load_listwise",
    "load_pairwise",
    "load_run",
    "run_order_column",
    "systems_without_run",
]


BATCH_COLUMNS = [
    "id",
    "collection",
    "kind",
    "file_name",
    "sha256",
    "row_count",
    "created_at",
    "created_by",
    "reading",
    "system",
]

T = TypeVar("T")


@dataclass(frozen=True)
class BatchInfo:
    """What a build records about a batch it read."""

    id: int
    kind: str
    file_name: str
    sha256: str
    row_count: int
    created_at: datetime


def _chunks(values: Sequence[T], size: int = IN_LIST_CHUNK) -> Iterator[Sequence[T]]:
    """Consecutive slices of at most ``size`` values."""
    for start in range(0, len(values), size):
        yield values[start : start + size]


def collection_id(connection: Connection, collection: str) -> int:
    """The id of ``collection``; :class:`StoreError` naming the known ones if absent."""
    found = connection.scalar(select(Collection.id).where(Collection.name == collection))
    if found is None:
        known = list_collections(connection)
        raise StoreError(
            f"no collection {collection!r} in the store (known: {', '.join(known) or 'none'}); "
            "ingest data first or pass --collection"
        )
    return int(found)


def list_collections(bind: Bind) -> list[str]:
    """Names of all collections, sorted."""
    with connect(bind) as connection:
        return list(connection.scalars(select(Collection.name).order_by(Collection.name)))


def _with_run(stmt: Any) -> Any:
    """Restrict a select over :class:`System` to systems that still have a run batch."""
    has_batch = select(IngestBatch.id).where(IngestBatch.system_id == System.id).exists()
    return stmt.where(has_batch)


def list_systems(bind: Bind, collection: str = DEFAULT_COLLECTION) -> list[str]:
    """Names of the systems with a run in ``collection``, sorted.

    A system whose run batches were all deleted is not listed (no ghost systems).
    """
    with connect(bind) as connection:
        cid = collection_id(connection, collection)
        stmt = select(System.name).where(System.collection_id == cid).order_by(System.name)
        return list(connection.scalars(_with_run(stmt)))


def systems_without_run(bind: Bind, collection: str = DEFAULT_COLLECTION) -> list[str]:
    """Systems of ``collection`` left without any run batch, sorted.

    Deleting a system's last batch deletes the system, so only stores written
    before that rule can hold such systems; scoring and reports skip them.
    """
    with connect(bind) as connection:
        cid = collection_id(connection, collection)
        has_batch = select(IngestBatch.id).where(IngestBatch.system_id == System.id).exists()
        stmt = select(System.name).where(System.collection_id == cid, ~has_batch)
        return sorted(connection.scalars(stmt))


def run_order_column(run: pd.DataFrame) -> OrderBy:
    """``"score"`` when every entry of a run has a score, else ``"rank"`` (docs/input-formats.md,
    "Input formats").

    A run ingested without scores (``query, item, rank``) is ordered by its
    rank column wherever it is scored (docs/input-formats.md, "Input formats").
    """
    scores = run["score"].to_numpy(dtype=np.float64) if "score" in run else np.empty(0)
    return "score" if len(scores) and np.isfinite(scores).all() else "rank"


def _query_ids(connection: Connection, cid: int, queries: Iterable[str]) -> list[int]:
    """Ids of the named queries (unknown names are simply absent)."""
    names = sorted({str(q) for q in queries})
    ids: list[int] = []
    for part in _chunks(names):
        stmt = select(Query.id).where(Query.collection_id == cid, Query.name.in_(part))
        ids.extend(connection.scalars(stmt))
    return sorted(ids)


_NAME_TABLES: dict[str, Any] = {"query": Query, "annotator": Annotator, "item": Item}


def _names(connection: Connection, model: Any, cid: int) -> pd.Series:
    """All names of one kind in a collection, indexed by id."""
    rows = connection.execute(select(model.id, model.name).where(model.collection_id == cid)).all()
    ids, names = zip(*rows, strict=True) if rows else ((), ())
    return pd.Series(list(names), index=pd.Index(list(ids), dtype="int64"), dtype=object)


def _load_facts(
    bind: Bind,
    collection: str,
    queries: Iterable[str] | None,
    model: Any,
    columns: dict[str, str],
    sort: list[str],
    where: Any = None,
) -> pd.DataFrame:
    """Fetch fact rows by id, then turn name ids into names with vectorised lookups.

    ``columns`` maps output column -> fact attribute; attributes ending in
    ``_id`` (other than ``batch_id``) are replaced by the names they refer to.
    """
    attributes = [getattr(model, attribute) for attribute in columns.values()]
    with connect(bind) as connection, paused_gc():
        cid = collection_id(connection, collection)
        base = select(model.id, *attributes).join(Query, Query.id == model.query_id)
        base = base.where(Query.collection_id == cid)
        if where is not None:
            base = base.where(where)
        if queries is None:
            statements = [base]
        else:
            ids = _query_ids(connection, cid, queries)
            statements = [base.where(model.query_id.in_(part)) for part in _chunks(ids)]
        rows: list[Any] = []
        for stmt in statements:
            rows.extend(connection.execute(stmt).all())
        # Column-wise construction: DataFrame.from_records on Row objects is ~6x slower.
        names = ["_row", *columns]
        values = list(zip(*rows, strict=True)) if rows else [()] * len(names)
        frame = pd.DataFrame(
            {name: np.asarray(column) for name, column in zip(names, values, strict=True)}
        )
        lookups: dict[str, pd.Series] = {}
        for output, attribute in columns.items():
            if attribute.endswith("_id") and attribute != "batch_id":
                kind = "item" if attribute in ("winner_id", "loser_id") else output
                if kind not in lookups:
                    lookups[kind] = _names(connection, _NAME_TABLES[kind], cid)
                frame[output] = lookups[kind].reindex(frame[output].to_numpy()).to_numpy()
    frame = frame.sort_values([*sort, "_row"], kind="stable").drop(columns="_row")
    return frame.reset_index(drop=True)


def load_pairwise(
    bind: Bind, collection: str = DEFAULT_COLLECTION, queries: Iterable[str] | None = None
) -> pd.DataFrame:
    """Pairwise preferences of a collection.

    Parameters
    ----------
    bind
        Engine, connection or session.
    collection
        Collection name.
    queries
        Restrict to these query names (``None``: all).

    Returns
    -------
    pandas.DataFrame
        Columns ``query, annotator, winner, loser`` (str), ``tie`` (bool; when
        true neither item is preferred), ``count`` (int >= 1: how many times
        the outcome happened, docs/input-formats.md, "Input formats"), ``winner_first``
        (nullable boolean: whether the winner - for a tie the item given first - was
        shown first, NA where the input's shape does not say, docs/tiers-and-audit.md,
        "Quality checks") and ``batch_id`` (int), one row per stored judgment, sorted by
        query, annotator and ingestion order.
    """
    j = PairwiseJudgment
    columns = {
        "query": "query_id",
        "annotator": "annotator_id",
        "winner": "winner_id",
        "loser": "loser_id",
        "tie": "tie",
        "count": "count",
        "winner_first": "winner_first",
        "batch_id": "batch_id",
    }
    frame = _load_facts(bind, collection, queries, j, columns, ["query", "annotator"])
    frame["winner_first"] = _nullable_flags(frame["winner_first"].to_numpy())
    return frame.astype({"tie": bool, "count": "int64", "batch_id": "int64"})


def _nullable_flags(values: np.ndarray) -> pd.arrays.BooleanArray:
    """Booleans with SQL NULLs as a nullable boolean array (``astype("boolean")`` on an
    object array of a million NULLs takes a quarter of a second; this, milliseconds)."""
    missing = pd.isna(values)
    flags = np.zeros(len(values), dtype=bool)
    flags[~missing] = values[~missing].astype(bool)
    return pd.arrays.BooleanArray(flags, np.asarray(missing, dtype=bool))


def load_listwise(
    bind: Bind, collection: str = DEFAULT_COLLECTION, queries: Iterable[str] | None = None
) -> pd.DataFrame:
    """Listwise judgments (tiers) of a collection.

    Returns
    -------
    pandas.DataFrame
        Columns ``query, annotator, item`` (str), ``rank`` (int, 1 = best
        tier; equal ranks are ties) and ``batch_id`` (int), sorted by query,
        annotator, batch, rank and item.
    """
    columns = {
        "query": "query_id",
        "annotator": "annotator_id",
        "item": "item_id",
        "rank": "rank",
        "batch_id": "batch_id",
    }
    sort = ["query", "annotator", "batch_id", "rank", "item"]
    frame = _load_facts(bind, collection, queries, ListwiseJudgment, columns, sort)
    return frame.astype({"rank": "int64", "batch_id": "int64"})


def load_graded(
    bind: Bind, collection: str = DEFAULT_COLLECTION, queries: Iterable[str] | None = None
) -> pd.DataFrame:
    """Graded labels of a collection (grade 0 = judged not relevant).

    Returns
    -------
    pandas.DataFrame
        Columns ``query, annotator, item`` (str), ``grade`` (int >= 0) and
        ``batch_id`` (int), sorted by query, annotator and item.
    """
    columns = {
        "query": "query_id",
        "annotator": "annotator_id",
        "item": "item_id",
        "grade": "grade",
        "batch_id": "batch_id",
    }
    sort = ["query", "annotator", "item", "batch_id"]
    frame = _load_facts(bind, collection, queries, GradedJudgment, columns, sort)
    return frame.astype({"grade": "int64", "batch_id": "int64"})


def load_run(
    bind: Bind, collection: str, system: str, queries: Iterable[str] | None = None
) -> pd.DataFrame:
    """The stored run of one system.

    The rows are returned as stored; ordering them for evaluation (score
    descending, ties by item id descending, or by rank) is the scorer's job
    (docs/conventions.md, "Conventions and caveats").

    Returns
    -------
    pandas.DataFrame
        Columns ``query, item`` (str), ``rank`` (int, as in the file) and
        ``score`` (float64, NaN when the file had no scores), sorted by query,
        rank and item.
    """
    with connect(bind) as connection:
        cid = collection_id(connection, collection)
        sid = connection.scalar(
            _with_run(select(System.id).where(System.collection_id == cid, System.name == system))
        )
    if sid is None:
        known = list_systems(bind, collection)
        raise StoreError(
            f"no system {system!r} in collection {collection!r} "
            f"(known: {', '.join(known) or 'none'}); ingest its run with `orlbuild ingest run`"
        )
    columns = {"query": "query_id", "item": "item_id", "rank": "rank", "score": "score"}
    sort = ["query", "rank", "item"]
    where = RunEntry.system_id == sid
    frame = _load_facts(bind, collection, queries, RunEntry, columns, sort, where)
    return frame.astype({"rank": "int64", "score": "float64"})


def list_batches(bind: Bind, collection: str | None = None) -> pd.DataFrame:
    """All ingest batches (of one collection, or of all), oldest first.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`BATCH_COLUMNS`; ``system`` is empty except for runs,
        ``reading`` (the options that chose the stored rows) for batches stored
        before migration 0005.
    """
    stmt = (
        select(
            IngestBatch.id,
            Collection.name,
            IngestBatch.kind,
            IngestBatch.file_name,
            IngestBatch.sha256,
            IngestBatch.row_count,
            IngestBatch.created_at,
            IngestBatch.created_by,
            func.coalesce(IngestBatch.reading, ""),
            func.coalesce(System.name, ""),
        )
        .join(Collection, Collection.id == IngestBatch.collection_id)
        .outerjoin(System, System.id == IngestBatch.system_id)
        .order_by(IngestBatch.id)
    )
    if collection is not None:
        stmt = stmt.where(Collection.name == collection)
    with connect(bind) as connection:
        rows = connection.execute(stmt).all()
    frame = pd.DataFrame.from_records(rows, columns=BATCH_COLUMNS)
    return frame.astype({"id": "int64", "row_count": "int64"})


def batch_fingerprints(bind: Bind, batch_ids: Iterable[int]) -> dict[int, BatchInfo]:
    """Provenance of the given batches, for a build to record what it read.

    Parameters
    ----------
    bind
        Engine, connection or session.
    batch_ids
        Ids as found in the ``batch_id`` column of the ``load_*`` frames.

    Returns
    -------
    dict of int to BatchInfo
        Keyed by batch id; :class:`StoreError` if one of them does not exist.
    """
    wanted = sorted({int(b) for b in batch_ids})
    found: dict[int, BatchInfo] = {}
    b = IngestBatch
    with connect(bind) as connection:
        for part in _chunks(wanted):
            stmt = select(b.id, b.kind, b.file_name, b.sha256, b.row_count, b.created_at).where(
                b.id.in_(part)
            )
            for row in connection.execute(stmt):
                found[int(row.id)] = BatchInfo(*row)
    missing = [i for i in wanted if i not in found]
    if missing:
        raise StoreError(f"no ingest batch with id {missing[0]}; see `orlbuild batches list`")
    return found
