"""Ingest batches: storing one file's facts in one transaction, finding and deleting batches.

A batch is identified by its content: the same bytes of the same kind in the
same collection are stored once (a second ingest is a no-op). Deleting a
batch deletes its facts (explicitly: they hold its id without a foreign key,
migration 0010_bulk_load_keys); it is refused while anything
outside the judgment tables refers to the batch (e.g. the ORL builds that read
it), unless forced. Deleting a system's last run batch deletes the system too
(README.md, "A tour of the commands": no ghost system is scored or reported).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

import numpy as np
from sqlalchemy import (
    Connection,
    Engine,
    MetaData,
    Table,
    delete,
    func,
    insert,
    inspect,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError

from orlbuild.errors import StoreError
from orlbuild.records import NamedChunk
from orlbuild.store.bulk import (
    IN_LIST_CHUNK,
    NameIds,
    bulk_write_settings,
    created_collection,
    defer_indexes,
    ensure_system,
    insert_rows,
)
from orlbuild.store.driver_errors import database_errors, is_disconnect
from orlbuild.store.engine import Bind, connect, write_transaction
from orlbuild.store.ids import checked_id
from orlbuild.store.models import (
    JUDGMENT_MODELS,
    NAME_MODELS,
    Base,
    Collection,
    IngestBatch,
    Query,
    RunEntry,
    System,
)
from orlbuild.vocabulary import InputKind

__all__ = [
    "FACT_TABLES",
    "NewBatch",
    "Provenance",
    "StoredBatch",
    "delete_batch",
    "find_batch",
    "store_batch",
]


def _table(model: type[Base]) -> Table:
    """The table a mapped class is declared on."""
    table = model.__table__
    assert isinstance(table, Table)
    return table


#: The fact table of each batch kind.
FACT_TABLES: dict[InputKind, Table] = {
    InputKind(kind): _table(model) for kind, model in {**JUDGMENT_MODELS, "run": RunEntry}.items()
}


@dataclass(frozen=True)
class Provenance:
    """What is known of a file once it has been read: its content and reading digests, and
    the reading's words with the shape read (``None``: the words given at the start)."""

    sha256: str
    reading_sha256: str | None = None
    reading: str | None = None


@dataclass(frozen=True)
class NewBatch:
    """One file, validated while it is read, to be stored chunk by chunk.

    Attributes
    ----------
    kind
        ``listwise``, ``pairwise``, ``graded`` or ``run``.
    collection
        Collection name (created if new).
    file_name, created_by
        Provenance.
    chunks
        The rows (:class:`NamedChunk`), read once: a bad line raises while they
        are consumed, inside the transaction, which then stores nothing.
    provenance
        Called once the chunks are consumed: the content's SHA-256 and the
        digest of the rows and names the reading kept.
    name_columns
        The fact columns that hold codes, and the vocabulary each indexes
        (:data:`orlbuild.ingest.kinds.NAME_COLUMNS`).
    system
        The system a run belongs to (runs only).
    reading
        The reading options in words (``"--duplicates keep-first, ..."``): the
        same content read another way must not pass for the stored batch.
    sha256
        The content's SHA-256 when it is known before reading (a regular
        file): a batch already holding it is then found without writing.
    """

    kind: InputKind
    collection: str
    file_name: str
    created_by: str
    chunks: Iterable[NamedChunk]
    provenance: Callable[[], Provenance]
    name_columns: Mapping[str, str]
    system: str | None = None
    reading: str | None = None
    sha256: str | None = None


@dataclass(frozen=True)
class StoredBatch:
    """The outcome of :func:`store_batch`.

    Attributes
    ----------
    id
        Batch id (of the existing batch when the content was already stored).
    created
        ``False`` when identical content was already stored (nothing written).
    row_count
        Rows the batch holds.
    system
        For runs, the system the existing or new batch belongs to.
    new_queries
        For runs, the query names the collection did not hold before (sorted):
        a run whose query ids do not match the judgments' shows up here.
    reading_sha256, reading
        What the stored reading kept (``None`` for batches stored before
        migration 0005).
    """

    id: int
    created: bool
    row_count: int
    system: str | None = None
    new_queries: tuple[str, ...] = ()
    reading_sha256: str | None = None
    reading: str | None = None


def find_batch(bind: Bind, collection: str, kind: str, sha256: str) -> StoredBatch | None:
    """The stored batch with this content, if any."""
    stmt = (
        select(
            IngestBatch.id,
            IngestBatch.row_count,
            System.name,
            IngestBatch.reading_sha256,
            IngestBatch.reading,
        )
        .join(Collection, Collection.id == IngestBatch.collection_id)
        .outerjoin(System, System.id == IngestBatch.system_id)
        .where(Collection.name == collection, IngestBatch.kind == kind)
        .where(IngestBatch.sha256 == sha256)
    )
    with connect(bind) as connection:
        row = connection.execute(stmt).first()
    if row is None:
        return None
    return StoredBatch(
        int(row[0]),
        created=False,
        row_count=int(row[1]),
        system=row[2],
        reading_sha256=row[3],
        reading=row[4],
    )


def run_content_key(sha256: str, system: str) -> str:
    """The content key of a run stored for a second (third, ...) system.

    The first system to store a run content keys its batch by the file's
    SHA-256; the same content stored for another system is keyed by this
    digest of the file's SHA-256 and the system's name (docs/input-formats.md, "Input formats"),
    so that identical content under another ``--system`` creates that system
    while the store's one-batch-per-content rule still makes a repeated ingest
    for the same system a no-op.
    """
    return hashlib.sha256(f"run of system {system}\0{sha256}".encode()).hexdigest()


def find_run_batch(bind: Bind, collection: str, sha256: str, system: str) -> StoredBatch | None:
    """The stored batch of this run content for ``system`` (``None`` when it has none)."""
    plain = find_batch(bind, collection, "run", sha256)
    if plain is None or plain.system == system:
        return plain
    return find_batch(bind, collection, "run", run_content_key(sha256, system))


def _stored_content(bind: Bind, batch: NewBatch, sha256: str) -> tuple[StoredBatch | None, str]:
    """The batch already holding this content, or ``None``; and the key to store it under."""
    if batch.kind != "run" or batch.system is None:
        return find_batch(bind, batch.collection, batch.kind, sha256), sha256
    plain = find_batch(bind, batch.collection, "run", sha256)
    if plain is None or plain.system == batch.system:
        return plain, sha256
    keyed = run_content_key(sha256, batch.system)
    return find_batch(bind, batch.collection, "run", keyed), keyed


class _AlreadyStored(Exception):
    """The content turned out to be stored once the file was read (rolls the writes back)."""

    def __init__(self, existing: StoredBatch) -> None:
        super().__init__(existing.id)
        self.existing = existing


class _Consumed:
    """The chunks of a batch, counting whether any was taken (a retry cannot re-read them)."""

    def __init__(self, chunks: Iterable[NamedChunk]) -> None:
        self._chunks = iter(chunks)
        self.started = False

    def __iter__(self) -> Iterator[NamedChunk]:
        for chunk in self._chunks:
            self.started = True
            yield chunk


def store_batch(
    engine: Engine, batch: NewBatch, on_rows: Callable[[int], None] | None = None
) -> StoredBatch:
    """Store a batch and all its facts in one transaction (or find it already stored).

    The chunks are written as they are read (bounded memory); the batch row
    gets its content hash and row count once the last chunk is in, and the
    transaction commits only then. Content found stored at that point (or
    before, when ``batch.sha256`` is known) rolls back, and the stored batch
    is returned. ``on_rows`` is called with the number of fact rows written,
    chunk by chunk (for a progress bar).

    Raises
    ------
    StoreError
        When a run repeats (query, item) pairs the system already has from
        another batch, or when the content is stored but was read into other
        rows (another ``--duplicates`` or ``--score-precision``).
    """
    chunks = _Consumed(batch.chunks)
    consumed = replace(batch, chunks=chunks)
    with database_errors(engine):
        try:
            return _store_batch(engine, consumed, on_rows)
        except StoreError as exc:
            if chunks.started or exc.__cause__ is None or not is_disconnect(exc.__cause__):
                raise
        # A connection lost before anything was read: the second attempt starts from scratch.
        engine.dispose()  # the pool's other connections died with the first one
        return _store_batch(engine, consumed, on_rows)


def _store_batch(
    engine: Engine, batch: NewBatch, on_rows: Callable[[int], None] | None
) -> StoredBatch:
    """:func:`store_batch` without the translation of driver errors."""
    if batch.sha256 is not None:
        existing, _ = _stored_content(engine, batch, batch.sha256)
        if existing is not None:
            for _chunk in batch.chunks:  # read (and check) the file for its reading digest
                pass
            return _same_reading(existing, batch, batch.provenance())
    provenance: Provenance | None = None
    try:
        with write_transaction(engine) as connection, bulk_write_settings(connection):
            cid, new_collection = created_collection(connection, batch.collection)
            system_id = None
            if batch.system is not None:
                system_id = ensure_system(connection, cid, batch.system)
            inserted = connection.execute(
                insert(IngestBatch).values(
                    collection_id=cid,
                    kind=batch.kind,
                    file_name=batch.file_name,
                    sha256=f"pending {uuid.uuid4().hex}",  # the real one is known at the end
                    row_count=0,
                    created_at=datetime.now(timezone.utc),
                    created_by=batch.created_by,
                    system_id=system_id,
                    reading=batch.reading,
                )
            ).inserted_primary_key
            assert inserted is not None  # an INSERT always reports its primary key
            batch_id = int(inserted[0])
            writer = _FactWriter(
                connection, batch, cid, batch_id, system_id, on_rows, new_collection=new_collection
            )
            for chunk in batch.chunks:
                writer.write(chunk)
            writer.finish()
            provenance = batch.provenance()
            existing, key = _stored_content(connection, batch, provenance.sha256)
            if existing is not None:
                raise _AlreadyStored(existing)
            connection.execute(
                update(IngestBatch)
                .where(IngestBatch.id == batch_id)
                .values(
                    sha256=key,
                    row_count=writer.rows,
                    reading_sha256=provenance.reading_sha256,
                    reading=(provenance.reading or batch.reading or "")[:200] or None,
                )
            )
    except _AlreadyStored as found:
        assert provenance is not None
        return _same_reading(found.existing, batch, provenance)
    except IntegrityError as exc:
        if provenance is None:  # refused mid-file: read the rest for the content's hash
            for _chunk in batch.chunks:
                pass
            provenance = batch.provenance()
        # The same content stored before, or by a concurrent ingest that won the race:
        # report it as a no-op.
        existing, _ = _stored_content(engine, batch, provenance.sha256)
        if existing is not None:
            return _same_reading(existing, batch, provenance)
        if batch.kind == "run":
            raise StoreError(
                f"system {batch.system!r} already has entries for some of these (query, item) "
                "pairs from another batch; delete that batch first (`orlbuild batches list`)"
            ) from exc
        raise StoreError(f"the store refused the batch: {exc.orig}") from exc
    return StoredBatch(
        batch_id,
        created=True,
        row_count=writer.rows,
        system=batch.system,
        new_queries=tuple(sorted(writer.new_queries)),
    )


class _FactWriter:
    """Writes the chunks of one batch: names to store ids, then the fact rows."""

    def __init__(
        self,
        connection: Connection,
        batch: NewBatch,
        cid: int,
        batch_id: int,
        system_id: int | None,
        on_rows: Callable[[int], None] | None,
        *,
        new_collection: bool = False,
    ) -> None:
        self._connection = connection
        self._batch = batch
        self._cid = cid
        self._batch_id = batch_id
        self._system_id = system_id
        self._on_rows = on_rows
        # PostgreSQL locks these together before dropping any of their indexes (all or none).
        tables = [_table(model) for model in NAME_MODELS.values()] + [FACT_TABLES[batch.kind]]
        self._names = {
            vocabulary: NameIds(
                connection,
                model,
                cid,
                new=new_collection,
                defer_index=True,
                lock_together=tables,
            )
            for vocabulary, model in NAME_MODELS.items()
        }
        self.rows = 0
        self.new_queries: set[str] = set()
        self._rebuild_indexes = defer_indexes(connection, FACT_TABLES[batch.kind], together=tables)

    def finish(self) -> None:
        """Once the last chunk is written: build again the indexes dropped meanwhile.

        A name index whose build finds a name twice raises ``IntegrityError``
        (:meth:`NameIds.finish`): the batch is refused and nothing is stored.
        """
        for names in self._names.values():
            names.finish()
        self._rebuild_indexes()

    def write(self, chunk: NamedChunk) -> None:
        """Store one chunk's names (new ones created) and rows."""
        facts = chunk.facts
        n = len(next(iter(facts.values()))) if facts else 0
        if n == 0:
            return
        if self._batch.kind == "run":
            queries = list(chunk.names["queries"])
            seen = self._names["queries"].known(queries)
            unseen = [q for q, known in zip(queries, seen, strict=True) if not known]
            self.new_queries.update(_new_names(self._connection, Query, self._cid, unseen))
        ids = {
            vocabulary: names.ids(np.asarray(chunk.names[vocabulary], dtype=object).tolist())
            for vocabulary, names in self._names.items()
        }
        columns = ["batch_id"]
        arrays = [np.full(n, self._batch_id, dtype=np.int64)]
        if self._system_id is not None:
            columns.append("system_id")
            arrays.append(np.full(n, self._system_id, dtype=np.int64))
        # Rows go in grouped by query (file order within a query): index inserts stay
        # local and a query's judgments end up next to each other on disk.
        order = _stable_order(ids["queries"][facts["query_id"]])
        for column, values in facts.items():
            vocabulary = self._batch.name_columns.get(column)
            columns.append(column)
            arrays.append(_sql_values(values, ids[vocabulary] if vocabulary else None)[order])
        insert_rows(self._connection, FACT_TABLES[self._batch.kind], columns, arrays, self._on_rows)
        self.rows += n


def _same_reading(existing: StoredBatch, batch: NewBatch, provenance: Provenance) -> StoredBatch:
    """The stored batch, when it holds the rows this reading would store; else refuse.

    Batches stored before migration 0005 have no digest: their content counts
    as stored, as it did then. A digest of the former kind (before the
    readings were digested chunk by chunk, docs/input-formats.md, "Input
    formats") is compared through the reading's words instead.
    """
    stored, new = existing.reading_sha256, provenance.reading_sha256
    if stored is None or new is None or stored == new:
        return existing
    words = {batch.reading, provenance.reading} - {None}  # stored with the shape read, or not
    if _digest_scheme(stored) != _digest_scheme(new) and existing.reading in words:
        return existing
    raise StoreError(
        f"{batch.file_name}: already stored as batch {existing.id} when read with "
        f"{existing.reading or 'other options'}; read with {batch.reading or 'these options'} "
        f"it keeps other rows: delete batch {existing.id} first (`orlbuild batches delete "
        f"{existing.id}`) to store it that way"
    )


def _digest_scheme(digest: str) -> str:
    """``2`` for a reading digest written as ``2:...``; ``1`` for a bare hex one."""
    return digest.split(":", 1)[0] if ":" in digest else "1"


def _new_names(
    connection: Connection, model: Any, cid: int, names: Sequence[str]
) -> tuple[str, ...]:
    """The distinct ``names`` that ``model`` does not hold yet in collection ``cid``, sorted."""
    wanted = sorted({str(n).strip() for n in names})
    known: set[str] = set()
    for start in range(0, len(wanted), IN_LIST_CHUNK):
        part = wanted[start : start + IN_LIST_CHUNK]
        stmt = select(model.name).where(model.collection_id == cid, model.name.in_(part))
        known.update(connection.scalars(stmt))
    return tuple(n for n in wanted if n not in known)


def _stable_order(keys: np.ndarray) -> np.ndarray:
    """``numpy.argsort(keys, kind="stable")`` of integer ``keys``.

    Keys spanning fewer than 65,536 values (a chunk's query ids usually do)
    are sorted as 16-bit offsets from the smallest, which NumPy's stable sort
    orders by radix sort, several times faster than a 64-bit one: the same order.
    """
    if len(keys) and int(keys.max()) - int(keys.min()) < 1 << 16:
        return np.argsort((keys - keys.min()).astype(np.uint16), kind="stable")
    return np.argsort(keys, kind="stable")


def _sql_values(values: np.ndarray, ids: np.ndarray | None) -> np.ndarray:
    """Vocabulary codes -> store ids; NaN floats -> ``None`` (SQL NULL)."""
    if ids is not None:
        return ids[values]
    if values.dtype.kind == "f" and np.isnan(values).any():
        with_nulls = values.astype(object)
        with_nulls[np.isnan(values)] = None
        return with_nulls
    return values


def _references(engine: Engine) -> list[tuple[str, str, bool]]:
    """(table, column, nullable) of every foreign key to ``ingest_batches`` outside the facts."""
    inspector = inspect(engine)
    own = {t.name for t in FACT_TABLES.values()}
    found: list[tuple[str, str, bool]] = []
    for table in inspector.get_table_names():
        if table in own:
            continue
        nullable = {c["name"]: bool(c["nullable"]) for c in inspector.get_columns(table)}
        for fk in inspector.get_foreign_keys(table):
            if fk["referred_table"] == IngestBatch.__tablename__:
                found.extend((table, col, nullable[col]) for col in fk["constrained_columns"])
    return found


def delete_batch(engine: Engine, batch_id: int, *, force: bool = False) -> int:
    """Delete a batch and its facts; returns the number of fact rows removed.

    Any other table with a foreign key to ``ingest_batches`` (the builds of
    the ORL issue record the batches they read that way) blocks the deletion
    while it has rows referring to the batch. With ``force=True`` those
    references are cleared first: set to NULL where the column is nullable,
    otherwise the referring rows are deleted.

    Raises
    ------
    StoreError
        No such batch, or the batch is in use and ``force`` is false.
    """
    with database_errors(engine):
        return _delete_batch(engine, batch_id, force)


def _delete_batch(engine: Engine, batch_id: int, force: bool) -> int:
    """:func:`delete_batch` without the translation of driver errors."""
    checked_id(engine, batch_id, "ingest batch", "orlbuild batches list")
    references = _references(engine)
    with write_transaction(engine) as connection:
        # The row is locked (PostgreSQL; SQLite's BEGIN IMMEDIATE holds the write lock):
        # of concurrent deletes of one batch, the first wins and the others then find no row.
        row = connection.execute(
            select(IngestBatch.kind, IngestBatch.row_count, IngestBatch.system_id)
            .where(IngestBatch.id == batch_id)
            .with_for_update()
        ).first()
        if row is None:
            raise StoreError(_gone(batch_id))
        for table_name, column, nullable in references:
            table = Table(table_name, MetaData(), autoload_with=connection)
            uses = connection.scalar(
                select(func.count()).select_from(table).where(table.c[column] == batch_id)
            )
            if not uses:
                continue
            if not force:
                raise StoreError(
                    f"batch {batch_id} is used by {uses} row(s) of {table_name!r} "
                    "(e.g. ORL builds that read it); pass --force to delete it anyway"
                )
            if nullable:
                connection.execute(
                    update(table).where(table.c[column] == batch_id).values({column: None})
                )
            else:
                connection.execute(delete(table).where(table.c[column] == batch_id))
        # The facts carry the batch id without a foreign key (migration 0010_bulk_load_keys):
        # they are deleted here, in the same transaction, rather than by ON DELETE CASCADE.
        facts = FACT_TABLES[InputKind(row.kind)]
        connection.execute(delete(facts).where(facts.c.batch_id == batch_id))
        if connection.execute(delete(IngestBatch).where(IngestBatch.id == batch_id)).rowcount != 1:
            raise StoreError(_gone(batch_id))  # rolled back: nothing of it was deleted here
        if row.system_id is not None:
            _drop_system_without_runs(connection, int(row.system_id))
    return int(row.row_count)


def _gone(batch_id: int) -> str:
    """The message for a batch that does not exist (never stored, or deleted meanwhile)."""
    return (
        f"no ingest batch with id {batch_id}: it was deleted or never stored; "
        "see `orlbuild batches list`"
    )


def _drop_system_without_runs(connection: Connection, system_id: int) -> None:
    """Delete a system whose last run batch is gone, so no ghost system stays behind."""
    remaining = connection.scalar(
        select(func.count()).select_from(IngestBatch).where(IngestBatch.system_id == system_id)
    )
    if not remaining:
        connection.execute(delete(System).where(System.id == system_id))
