"""Bulk writes: concurrency-safe get-or-create of names and fast fact inserts.

Names (collections, systems, annotators, queries, items) are created with
``INSERT ... ON CONFLICT DO NOTHING`` followed by a select of their ids, so
processes that ingest files sharing queries and items at the same time never
duplicate a name nor fail on one. Names are inserted in sorted order and
tables in a fixed order, so concurrent PostgreSQL transactions take their row
locks in the same order and cannot deadlock. The names of a chunk are staged
in a temporary table (SQLite: ``executemany``; PostgreSQL: one ``COPY``), then
one ``INSERT ... SELECT`` creates the new ones and one join returns every id,
instead of one round trip per name. :class:`NameIds` keeps the ids it has
seen (up to :data:`NAME_CACHE` per table), so a name repeated across the
chunks of a file is looked up once (docs/performance.md, "Ingesting large
vocabularies"). Names that cannot exist yet (a collection the ingest created,
or on SQLite one without names) skip the staging and the lookup altogether.

Facts are inserted with the driver's ``executemany`` in chunks of plain
tuples (SQLite, where each write transaction holds the database lock, so
``BEGIN IMMEDIATE`` serialises writers); on PostgreSQL with binary
``COPY ... FROM STDIN`` through psycopg.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from sqlalchemy import (
    Column,
    Connection,
    Integer,
    MetaData,
    Table,
    Text,
    func,
    insert,
    literal,
    select,
)
from sqlalchemy.exc import DBAPIError, IntegrityError

from orlbuild.store.models import Collection, System

__all__ = [
    "INSERT_CHUNK",
    "IN_LIST_CHUNK",
    "NAME_CACHE",
    "NameIds",
    "bulk_write_settings",
    "created_collection",
    "defer_indexes",
    "ensure_collection",
    "ensure_names",
    "ensure_system",
    "insert_rows",
]

#: Ids per ``IN (...)`` list: far below SQLite's 32766 bound parameters.
IN_LIST_CHUNK = 5_000

#: Rows per ``executemany`` call or ``COPY`` progress step.
INSERT_CHUNK = 50_000

#: Names per SQLite ``INSERT ... SELECT ... FROM json_each(?)`` of new names (one JSON
#: array of at most this many names, at most 200 characters each, is far below SQLite's
#: one-gigabyte text limit).
JSON_NAMES = 100_000

#: Names per table whose ids :class:`NameIds` remembers (24 bytes each); beyond it
#: they are forgotten and looked up in the store again (bounded ingest memory).
NAME_CACHE = 8_000_000

#: The temporary table that stages a chunk's names (one per connection).
STAGED_NAMES = "orlbuild_staged_names"

#: SQLite page cache during a bulk write, in KiB (the connection's own is restored after):
#: it counts towards the ingest's peak memory, and 8 MiB ingested 200,000 rows as fast
#: as 128 MiB (docs/performance.md, "Ingesting large vocabularies").
BULK_CACHE_KIB = 32_768

#: SQLite page cache while :func:`defer_indexes` builds a unique name index again, in
#: KiB (the bulk one is restored after): SQLite's sorter keeps that much in memory per
#: sorted run, and runs that fit the CPU's caches sort the 1.2 million item names
#: about 20% faster than 32 MiB ones (docs/performance.md, "Ingesting large vocabularies").
UNIQUE_REBUILD_CACHE_KIB = 2_048

#: PostgreSQL ``maintenance_work_mem`` while :func:`defer_indexes` rebuilds indexes, in
#: MiB (the server's, for this transaction only): the 1.2 million names' unique index
#: sorted in memory instead of on disk (docs/performance.md, "Ingesting large
#: vocabularies").
REBUILD_WORK_MEM_MB = 256


def _nothing() -> None:
    """The rebuild of :func:`defer_indexes` when it dropped nothing."""


def defer_indexes(
    connection: Connection, table: Table, *, unique: bool = False, together: Sequence[Table] = ()
) -> Callable[[], None]:
    """Drop the secondary indexes of an empty ``table`` until the returned call.

    A table that holds no rows when the write transaction began (the first
    ingest into a store) is filled faster without its indexes, which are then
    built once from all the rows (``CREATE INDEX`` sorts them) instead of
    being updated row by row at random places: for a million pairwise rows
    and 1.2 million distinct items, most of the ingest's time
    (docs/performance.md, "Ingesting large vocabularies"). Both happen inside
    the ingest's transaction, so an error anywhere rolls the indexes back with
    the rows and other connections never see the table without them. Each
    index comes back from its own stored definition. Returns the call that
    builds the dropped ones again (a no-op when nothing was dropped: a table
    with rows, or a PostgreSQL table another transaction is using).

    Only non-unique indexes are dropped, unless ``unique``: then only the
    unique ones (the name tables' ``uq_<table>_collection_id_name``, migration
    0010_bulk_load_keys), for a caller that inserts names it knows to be
    distinct and new. A duplicate would make the rebuild fail with an
    ``IntegrityError``, which rolls the whole ingest back (never stored).

    SQLite's write transaction holds the database's write lock, so no other
    writer can meet the table without its indexes. On PostgreSQL the table is
    first locked ``ACCESS EXCLUSIVE`` (``NOWAIT``, inside a savepoint): if
    another transaction uses it, nothing is dropped; otherwise it stays locked
    until the ingest commits (only the first ingest into an empty table does
    this, and other sessions wait for it rather than see a half-filled table).
    The tables ``together`` (the other tables the ingest may defer) are locked
    by the same statement, all or none: two ingests never each hold some of
    them and wait for the other's.
    """
    name = table.name
    postgres = connection.dialect.name == "postgresql"
    if not postgres and connection.dialect.name != "sqlite":
        return _nothing
    savepoint = connection.begin_nested() if postgres else None
    try:
        with _driver_cursor(connection) as cursor:
            if postgres:
                locked = sorted({name, *(t.name for t in together)})
                listed = ", ".join(f'"{t}"' for t in locked)
                cursor.execute(f"LOCK TABLE {listed} IN ACCESS EXCLUSIVE MODE NOWAIT")
            cursor.execute(f'SELECT 1 FROM "{name}" LIMIT 1')
            if cursor.fetchone() is not None:
                indexes = []
            elif postgres:
                cursor.execute(
                    "SELECT i.relname, pg_get_indexdef(i.oid) FROM pg_index x "
                    "JOIN pg_class i ON i.oid = x.indexrelid "
                    "WHERE x.indrelid = %s::regclass AND NOT x.indisprimary "
                    "AND x.indisunique = %s AND NOT EXISTS "
                    "(SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid) "
                    "ORDER BY i.relname",
                    (f'"{name}"', unique),
                )
                indexes = cursor.fetchall()
            else:
                cursor.execute(
                    "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? "
                    "AND sql IS NOT NULL AND (upper(sql) LIKE 'CREATE UNIQUE%') = ? "
                    "ORDER BY name",
                    (name, unique),
                )
                indexes = cursor.fetchall()
            for index, _sql in indexes:
                cursor.execute(f'DROP INDEX "{index}"')
    except DBAPIError:
        if savepoint is None:
            raise
        savepoint.rollback()  # locked by another transaction: keep the indexes
        return _nothing
    if savepoint is not None:
        if indexes:
            savepoint.commit()  # releases the savepoint; the lock stays until the commit
        else:
            savepoint.rollback()  # and with it the lock
    if not indexes:
        return _nothing

    def rebuild() -> None:
        with _driver_cursor(connection) as cursor:
            if postgres:
                # Sort in memory rather than spill to disk (server memory, this
                # transaction only; a larger setting is kept).
                cursor.execute(
                    "SELECT set_config('maintenance_work_mem', %s, true) "
                    "WHERE pg_size_bytes(current_setting('maintenance_work_mem')) < %s",
                    (f"{REBUILD_WORK_MEM_MB}MB", REBUILD_WORK_MEM_MB << 20),
                )
            cache = None
            if not postgres and unique:
                cursor.execute("PRAGMA cache_size")
                cache = int(cursor.fetchone()[0])
                cursor.execute(f"PRAGMA cache_size = -{UNIQUE_REBUILD_CACHE_KIB}")
            try:
                for _index, sql in indexes:
                    cursor.execute(sql)
            finally:
                if cache is not None:
                    cursor.execute(f"PRAGMA cache_size = {cache}")
        indexes.clear()

    return rebuild


def _insert_ignoring_conflicts(connection: Connection, table: Any) -> Any:
    """``INSERT ... ON CONFLICT DO NOTHING`` for the connection's dialect."""
    # imported here: the PostgreSQL dialect package costs 0.05 s to import
    if connection.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table).on_conflict_do_nothing()
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(table).on_conflict_do_nothing()


@contextmanager
def bulk_write_settings(connection: Connection) -> Iterator[None]:
    """Settings for a large write, inside the transaction only and restored after.

    SQLite: a bounded page cache (:data:`BULK_CACHE_KIB`); the journal mode
    is left alone, and the staging table of the names is dropped at the end.
    PostgreSQL needs none.
    """
    if connection.dialect.name != "sqlite":
        yield
        return
    cache = connection.exec_driver_sql("PRAGMA cache_size").scalar()
    connection.exec_driver_sql(f"PRAGMA cache_size = -{BULK_CACHE_KIB}")
    try:
        yield
    finally:
        connection.exec_driver_sql(f"DROP TABLE IF EXISTS temp.{STAGED_NAMES}")
        connection.exec_driver_sql(f"PRAGMA cache_size = {int(cache or 0)}")


@contextmanager
def _driver_cursor(connection: Connection) -> Iterator[Any]:
    """The driver's own cursor on the connection (inside its transaction).

    Tens of thousands of rows per chunk are not worth SQLAlchemy's per-row
    work; the driver's errors are wrapped as SQLAlchemy wraps them
    (``IntegrityError``, ``OperationalError``, ...), so that callers and
    :mod:`orlbuild.store.driver_errors` see the usual exceptions.
    """
    cursor = connection.connection.cursor()
    dbapi = connection.dialect.loaded_dbapi
    try:
        yield cursor
    except dbapi.Error as exc:
        raise DBAPIError.instance(None, None, exc, dbapi.Error) from exc
    finally:
        cursor.close()


#: One level of :class:`_HashedIds`: first hashes (sorted), second hashes, ids.
_Level = tuple[np.ndarray, np.ndarray, np.ndarray]


class _HashedIds:
    """Ids of names, keyed by two 64-bit hashes of each name (24 bytes a name, no strings).

    Two different names are taken for one only if both hashes collide (about
    ``n**2 / 2**129`` for ``n`` names); a name whose first hash is taken by
    another name is simply not remembered (it is looked up in the store).
    Entries arrive in a small sorted level merged into the large one when it
    grows, so remembering ``n`` names costs ``O(n log n)`` in all.
    """

    def __init__(self) -> None:
        empty = np.empty(0, dtype=np.int64)
        self._levels: list[_Level] = [(empty, empty, empty), (empty, empty, empty)]

    def __len__(self) -> int:
        return sum(len(level[0]) for level in self._levels)

    @staticmethod
    def hashes(names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The two hashes of each name."""
        first = np.fromiter(map(hash, names), dtype=np.int64, count=len(names))
        second = np.fromiter(
            map(hash, map("\x1f".__add__, names)), dtype=np.int64, count=len(names)
        )
        return first, second

    def get(
        self, first: np.ndarray, second: np.ndarray, order: np.ndarray | None = None
    ) -> np.ndarray:
        """The id of each name, ``-1`` where it is not remembered.

        ``order``: :func:`_ascending` of ``first``, when the caller has it already.
        """
        found = np.full(len(first), -1, dtype=np.int64)
        if not len(self):
            return found
        # Searched in ascending order: each search starts near the previous one, so
        # the large level is read forwards rather than at random places.
        if order is None:
            order = _ascending(first)
        first, second = first[order], second[order]
        for keys, checks, ids in self._levels:
            if not len(keys):
                continue
            at = np.minimum(np.searchsorted(keys, first), len(keys) - 1)
            hit = (keys[at] == first) & (checks[at] == second)
            found[order[hit]] = ids[at[hit]]
        return found

    def add(
        self, first: np.ndarray, second: np.ndarray, ids: np.ndarray, *, ordered: bool = False
    ) -> bool:
        """Remember new names; ``False`` when one was not (its first hash was taken).

        ``ordered``: the entries come in :func:`_ascending` order of ``first`` already.
        """
        big, small = self._levels
        if not ordered:
            order = _ascending(first)
            first, second, ids = first[order], second[order], ids[order]
        merged = _merged(small, (first, second, ids))
        if len(merged[0]) * 4 > len(big[0]):
            merged = _merged(big, merged)
            empty = np.empty(0, dtype=np.int64)
            big = (empty, empty, empty)
        keys, checks, values = merged
        unique = np.ones(len(keys), dtype=bool)
        unique[1:] = keys[1:] != keys[:-1]  # a first hash taken twice: keep the first name
        level: _Level = merged
        if not unique.all():
            level = (keys[unique], checks[unique], values[unique])
        self._levels = [big, level] if len(big[0]) else [level, big]
        return bool(unique.all())


def _ascending(keys: np.ndarray) -> np.ndarray:
    """``numpy.argsort(keys, kind="stable")``, sorted by the faster default sort when it may.

    Distinct keys (the first hashes of distinct names nearly always are) have
    one ascending order, so the default sort gives the stable one, at about a
    fifth of its cost; equal keys fall back to the stable sort.
    """
    order = np.argsort(keys)
    ranked = keys[order]
    if len(ranked) > 1 and (ranked[1:] == ranked[:-1]).any():
        return np.argsort(keys, kind="stable")
    return order


def _merged(older: _Level, newer: _Level) -> _Level:
    """Two levels sorted on their first array, merged in one pass (the older first among equals).

    The same order as a stable sort of the older entries followed by the newer
    ones, without sorting again what is sorted already.
    """
    if not len(older[0]):
        return newer
    if not len(newer[0]):
        return older
    total = len(older[0]) + len(newer[0])
    at = np.searchsorted(older[0], newer[0], side="right")
    at += np.arange(len(at))
    kept = np.ones(total, dtype=bool)
    kept[at] = False
    merged = []
    for old, new in zip(older, newer, strict=True):
        both = np.empty(total, dtype=np.int64)
        both[at] = new
        both[kept] = old
        merged.append(both)
    return merged[0], merged[1], merged[2]


class NameIds:
    """Store ids of the names of one name table in one collection, chunk by chunk.

    Every name looked up is remembered by its hashes (:class:`_HashedIds`, up
    to :data:`NAME_CACHE` names), so a name repeated across the chunks of a
    file costs one store lookup. A name not remembered is new, and is
    inserted with a new id and never read back, when ``new`` says that this
    transaction created the collection (no other one can see it yet) or, on
    SQLite, when the collection held no names of this table when the
    transaction began (it holds the write lock).

    Parameters
    ----------
    connection
        Inside the ingest transaction.
    model
        A model with ``collection_id`` and ``name`` columns (Query, Item, Annotator, System).
    collection_id
        The owning collection.
    new
        Whether this transaction created the collection.
    defer_index
        Whether, while every name is new and the whole name table was empty,
        its unique index may be dropped and built again by :meth:`finish`
        (:func:`defer_indexes`): the caller must then call :meth:`finish`
        before its transaction commits.
    lock_together
        PostgreSQL: the tables to lock with the name table before dropping its
        index (:func:`defer_indexes`).
    """

    def __init__(
        self,
        connection: Connection,
        model: Any,
        collection_id: int,
        *,
        new: bool = False,
        defer_index: bool = False,
        lock_together: Sequence[Table] = (),
    ) -> None:
        self._connection = connection
        self._table: Table = model.__table__
        self._collection_id = collection_id
        self._known = _HashedIds()
        self._fresh = new
        self._next_id: int | None = None
        self._sequence: str | None = None  # PostgreSQL: the id column's sequence
        self._unit_steps = False  # PostgreSQL: whether the sequence counts by 1
        self._rebuild: Callable[[], None] = _nothing
        if connection.dialect.name != "sqlite":
            if new and defer_index:
                self._rebuild = defer_indexes(
                    connection, self._table, unique=True, together=lock_together
                )
            return
        table = self._table
        if not new:
            held = connection.execute(
                select(table.c.id).where(table.c.collection_id == collection_id).limit(1)
            ).first()
            self._fresh = held is None
        if self._fresh:
            self._next_id = (
                int(connection.execute(select(func.coalesce(func.max(table.c.id), 0))).scalar_one())
                + 1
            )
            if defer_index:
                self._rebuild = defer_indexes(connection, self._table, unique=True)

    def finish(self) -> None:
        """Build the name index again if it was dropped (before the transaction commits).

        Raises ``IntegrityError`` if a name was stored twice (the ingest then
        stores nothing).
        """
        self._rebuild()
        self._rebuild = _nothing

    def known(self, names: Sequence[str]) -> np.ndarray:
        """Whether each name was looked up before (and is still remembered)."""
        return self._known.get(*_HashedIds.hashes(names)) >= 0

    def ids(self, names: Sequence[str]) -> np.ndarray:
        """Get or create the *distinct* ``names``; returns their ``int64`` ids, aligned."""
        first, second = _HashedIds.hashes(names)
        order = _ascending(first)
        found = self._known.get(first, second, order)
        missing = np.flatnonzero(found < 0)
        if not missing.size:
            return found
        wanted = list(map(str, map(names.__getitem__, missing.tolist())))
        if self._fresh:
            new = self._insert_new(wanted)
        else:
            self.finish()  # the lookups below need the unique index (a no-op once built)
            if self._connection.dialect.name == "postgresql":
                new = _ids_staged_copy(self._connection, self._table, self._collection_id, wanted)
            else:
                new = _ids_staged_executemany(
                    self._connection, self._table, self._collection_id, wanted
                )
        # The new names in ascending order of their first hash (``order`` restricted
        # to them keeps that order, ties included): ``add`` need not sort them again.
        added = order[found[order] < 0] if len(missing) < len(names) else order
        found[missing] = new
        if len(self._known) + len(wanted) > NAME_CACHE:
            self._known = _HashedIds()
            self._fresh = False  # names no longer remembered may exist: look them up
        if not self._known.add(first[added], second[added], found[added], ordered=True):
            self._fresh = False  # a name not remembered must be looked up from now on
        return found

    def _insert_new(self, names: list[str]) -> np.ndarray:
        """Insert names known to be new: no staging, no lookup, never read back.

        They go in in name order (ids follow it), so that the name index is
        filled page by page rather than at random places; not while the index
        is dropped (:func:`defer_indexes`: it is built once, by sorting, at the
        end). SQLite takes the next ids (the transaction holds the write
        lock); PostgreSQL draws them from the table's sequence and sends the
        rows by one binary ``COPY``.
        """
        if self._rebuild is _nothing:
            order = sorted(range(len(names)), key=names.__getitem__)
            ordered = list(map(names.__getitem__, order))
        else:
            order, ordered = list(range(len(names))), names
        ids = np.empty(len(names), dtype=np.int64)
        if self._connection.dialect.name == "postgresql":
            new_ids = self._sequence_ids(len(names))
            ids[order] = new_ids
            _copy_rows(
                self._connection,
                self._table,
                ["id", "collection_id", "name"],
                [
                    new_ids,
                    np.full(len(names), self._collection_id, dtype=np.int64),
                    np.asarray(ordered, dtype=object),
                ],
            )
            return ids
        assert self._next_id is not None
        first = self._next_id
        self._next_id += len(names)
        ids[order] = np.arange(first, self._next_id, dtype=np.int64)
        # One JSON array per chunk, unpacked by SQLite's built-in ``json_each``: no
        # Python binding per name; the ``n``-th name (``key``) gets id ``first + n``.
        # Blocks of JSON_NAMES keep each text far below SQLite's length limit.
        sql = (
            f'INSERT INTO "{self._table.name}" (id, collection_id, name) '
            "SELECT key + ?, ?, value FROM json_each(?)"
        )
        with _driver_cursor(self._connection) as cursor:
            for start in range(0, len(ordered), JSON_NAMES):
                block = _json_array(ordered[start : start + JSON_NAMES])
                cursor.execute(sql, (first + start, self._collection_id, block))
        return ids

    def _sequence_ids(self, count: int) -> np.ndarray:
        """PostgreSQL: ``count`` new ids from the id column's sequence, ascending.

        Usually they are consecutive (no other transaction drew ids meanwhile)
        and only the first and last come back; otherwise all of them. While
        this transaction holds the table ``ACCESS EXCLUSIVE`` (its unique index
        dropped, :func:`defer_indexes`), no other one can insert into it, so
        the next ``count`` values of a sequence counting by 1 are taken by one
        ``setval`` instead of ``count`` calls of ``nextval`` (the primary key
        would still refuse an id drawn twice).
        """
        with _driver_cursor(self._connection) as cursor:
            if self._sequence is None:
                cursor.execute(
                    "SELECT s.seqrelid::regclass::text, s.seqincrement FROM pg_sequence s "
                    "WHERE s.seqrelid = pg_get_serial_sequence(%s, 'id')::regclass",
                    (self._table.name,),
                )
                self._sequence, increment = cursor.fetchone()
                self._unit_steps = increment == 1
            if self._rebuild is not _nothing and self._unit_steps:
                cursor.execute(
                    "SELECT setval(%s::regclass, nextval(%s::regclass) + %s - 1)",
                    (self._sequence, self._sequence, count),
                )
                high = int(cursor.fetchone()[0])
                return np.arange(high - count + 1, high + 1, dtype=np.int64)
            cursor.execute(
                "WITH drawn AS (SELECT nextval(%s::regclass) AS id FROM generate_series(1, %s)) "
                "SELECT min(id), max(id), CASE WHEN max(id) - min(id) + 1 = count(*) THEN NULL "
                "ELSE array_agg(id ORDER BY id) END FROM drawn",
                (self._sequence, count),
            )
            low, high, drawn = cursor.fetchone()
        if drawn is None:
            return np.arange(low, high + 1, dtype=np.int64)
        return np.asarray(drawn, dtype=np.int64)


def _json_array(names: list[str]) -> str:
    """``names`` as the text of a JSON array of strings (for SQLite's ``json_each``).

    Names that JSON writes as they are (printable, no quote, no backslash: ids
    usually are) are joined directly, without an encoder call per name; any
    other list goes through :func:`json.dumps`. Both texts hold the same strings.
    """
    joined = '","'.join(names)
    plain = joined.isprintable() and "\\" not in joined
    if names and plain and joined.count('"') == 2 * (len(names) - 1):
        return '["' + joined + '"]'
    return json.dumps(names, ensure_ascii=False)


def ensure_names(
    connection: Connection, model: Any, collection_id: int, names: Sequence[str]
) -> np.ndarray:
    """Get or create named rows of ``model`` (Query, Item, Annotator, System).

    Parameters
    ----------
    connection
        Inside the ingest transaction.
    model
        A model with ``collection_id`` and ``name`` columns.
    collection_id
        The owning collection.
    names
        Names to look up; may repeat.

    Returns
    -------
    numpy.ndarray
        ``int64`` ids aligned with ``names``.
    """
    unique, positions = np.unique(np.asarray(names, dtype=object), return_inverse=True)
    ids = NameIds(connection, model, collection_id).ids(unique.tolist())
    return ids[positions.reshape(-1)]


def _ids_staged_executemany(
    connection: Connection, table: Table, collection_id: int, names: list[str]
) -> np.ndarray:
    """SQLite: stage the names, insert-or-ignore them in name order, join for their ids.

    The driver's cursor is used directly (inside the connection's transaction):
    tens of thousands of rows per chunk are not worth SQLAlchemy's per-row work.
    """
    name = f'"{table.name}"'
    with _driver_cursor(connection) as cursor:
        cursor.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS {STAGED_NAMES} "
            "(position INTEGER PRIMARY KEY, name TEXT NOT NULL)"
        )
        cursor.execute(f"DELETE FROM temp.{STAGED_NAMES}")
        cursor.executemany(
            f"INSERT INTO temp.{STAGED_NAMES} (position, name) VALUES (?, ?)",
            list(enumerate(names)),
        )
        cursor.execute(
            f"INSERT INTO {name} (collection_id, name) SELECT ?, name FROM temp.{STAGED_NAMES} "
            "WHERE true ORDER BY name ON CONFLICT DO NOTHING",
            (collection_id,),
        )
        cursor.execute(
            f"SELECT s.position, t.id FROM temp.{STAGED_NAMES} AS s CROSS JOIN {name} AS t "
            "ON t.collection_id = ? AND t.name = s.name",
            (collection_id,),
        )
        return _aligned(cursor.fetchall(), len(names))


def _aligned(rows: Iterable[Any], count: int) -> np.ndarray:
    """Ids of ``(position, id)`` rows, in the order of the positions."""
    flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=2 * count)
    ids = np.empty(count, dtype=np.int64)
    ids[flat[0::2]] = flat[1::2]
    return ids


def _insert_staged_names(
    connection: Connection, table: Table, staging: Table, collection_id: int
) -> None:
    """PostgreSQL: store the staged names the collection lacks, in name order.

    The names not yet stored are inserted by a plain ``INSERT ... SELECT``
    (about a third cheaper than ``ON CONFLICT DO NOTHING``, whose speculative
    insertion every row pays) inside a savepoint. If another transaction
    stored one of them meanwhile, the unique index refuses it; the savepoint is
    rolled back and the names go in with ``ON CONFLICT DO NOTHING``, as before.
    """
    stored = (
        select(table.c.id)
        .where(table.c.collection_id == collection_id, table.c.name == staging.c.name)
        .exists()
    )
    names = select(literal(collection_id), staging.c.name).order_by(staging.c.name)
    try:
        with connection.begin_nested():
            connection.execute(
                insert(table).from_select(["collection_id", "name"], names.where(~stored))
            )
    except IntegrityError:
        from sqlalchemy.dialects import postgresql

        connection.execute(
            postgresql.insert(table)
            .from_select(["collection_id", "name"], names)
            .on_conflict_do_nothing()
        )


def _ids_staged_copy(
    connection: Connection, table: Table, collection_id: int, names: list[str]
) -> np.ndarray:
    """PostgreSQL: COPY the names into a temporary table, insert-or-ignore and join for ids.

    One statement each instead of one round trip per name. The insert runs in
    name order so that concurrent transactions lock new names in the same order.
    """
    staging = Table(
        STAGED_NAMES,
        MetaData(),
        Column("position", Integer, nullable=False),
        Column("name", Text(collation="C"), nullable=False),  # as the name columns (0011)
        prefixes=["TEMPORARY"],
        postgresql_on_commit="DROP",
    )
    staging.create(connection, checkfirst=True)
    connection.exec_driver_sql(f"TRUNCATE {STAGED_NAMES}")
    positions = np.arange(len(names), dtype=np.int64)
    _copy_rows(
        connection, staging, ["position", "name"], [positions, np.asarray(names, dtype=object)]
    )
    _insert_staged_names(connection, table, staging, collection_id)
    # The staged names have no statistics: ANALYZE them so that the join probes the
    # name index instead of scanning the whole name table for every chunk; fetch the
    # ids through the driver (tens of thousands of rows).
    connection.exec_driver_sql(f"ANALYZE {STAGED_NAMES}")
    query = (
        select(staging.c.position, table.c.id)
        .join(table, staging.c.name == table.c.name)
        .where(table.c.collection_id == collection_id)
        .compile(dialect=connection.dialect, compile_kwargs={"literal_binds": True})
    )
    with _driver_cursor(connection) as cursor:
        cursor.execute(str(query))
        return _aligned(cursor.fetchall(), len(names))


def ensure_collection(connection: Connection, name: str) -> int:
    """Get or create the collection ``name``; returns its id."""
    return created_collection(connection, name)[0]


def created_collection(connection: Connection, name: str) -> tuple[int, bool]:
    """Get or create the collection ``name``: its id, and whether this transaction created it.

    No other transaction can store names in a collection this one created
    until it commits (it cannot see the collection): every name is new.
    """
    inserted = connection.execute(
        _insert_ignoring_conflicts(connection, Collection.__table__)
        .values(name=name)
        .returning(Collection.__table__.c.id)
    ).first()
    if inserted is not None:
        return int(inserted[0]), True
    stored = connection.execute(select(Collection.id).where(Collection.name == name))
    return int(stored.scalar_one()), False


def ensure_system(connection: Connection, collection_id: int, name: str) -> int:
    """Get or create the system ``name`` in a collection; returns its id."""
    return int(NameIds(connection, System, collection_id).ids([name])[0])


def insert_rows(
    connection: Connection,
    table: Table,
    columns: Sequence[str],
    arrays: Sequence[np.ndarray],
    on_rows: Callable[[int], None] | None = None,
) -> int:
    """Insert aligned column arrays into ``table``; returns the number of rows.

    PostgreSQL gets ``COPY ... FROM STDIN`` (psycopg 3), other databases
    the driver's ``executemany`` in chunks of :data:`INSERT_CHUNK` tuples.
    ``on_rows`` is called with the number of rows written after each chunk.
    """
    advance = on_rows or (lambda _n: None)
    total = len(arrays[0]) if arrays else 0
    if total == 0:
        return 0
    if connection.dialect.name == "postgresql":
        try:
            _copy_rows(connection, table, columns, arrays, advance)
        except connection.dialect.loaded_dbapi.IntegrityError as exc:
            # The raw driver's error, wrapped as SQLAlchemy would wrap an executemany's.
            raise IntegrityError(f"COPY {table.name}", None, exc) from exc
        return total
    statement = insert(table).compile(dialect=connection.dialect, column_keys=list(columns))
    # Positional parameters in the order the compiled statement binds them.
    order = [columns.index(key) for key in statement.positiontup or columns]
    listed = ", ".join(f'"{columns[i]}"' for i in order)
    with _driver_cursor(connection) as cursor:
        for start in range(0, total, INSERT_CHUNK):
            stop = min(start + INSERT_CHUNK, total)
            values = [arrays[i][start:stop] for i in order]
            literals = [_integer_literal(v) for v in values]
            # A column holding one integer in these rows (the batch id, a count of 1)
            # is written into the statement instead of bound row by row: the same
            # stored value, without a binding per row.
            sql = (
                f'INSERT INTO "{table.name}" ({listed}) VALUES ('
                + ", ".join("?" if lit is None else lit for lit in literals)
                + ")"
            )
            # Booleans as the integers 0 and 1, which SQLite stores for them anyway:
            # the driver binds a Python int without looking for an adapter.
            parts = [
                (v.astype(np.int64) if v.dtype.kind == "b" else v).tolist()
                for v, lit in zip(values, literals, strict=True)
                if lit is None
            ]
            rows = zip(*parts, strict=True) if parts else [()] * (stop - start)
            cursor.executemany(sql, rows)
            advance(stop - start)
    return total


def _integer_literal(values: np.ndarray) -> str | None:
    """SQL text of the one integer (or boolean) all ``values`` hold, else ``None``.

    SQLite stores an integer written in the statement exactly as the same
    integer bound as a parameter (a boolean is bound as 0 or 1).
    """
    kind = values.dtype.kind
    if not len(values) or not (kind in "ib" or (kind == "u" and values.dtype.itemsize < 8)):
        return None
    first = values[0]
    if not (values == first).all():
        return None
    return str(int(first))


def _copy_type(column: Column[Any]) -> str:
    """The PostgreSQL type name psycopg's binary COPY needs for a column."""
    python_type = column.type.python_type
    return {int: "int4", bool: "bool", float: "float8"}.get(python_type, "text")


#: psycopg's binary ``COPY`` signature (header) and trailer, for blocks written whole.
_COPY_SIGNATURE = b"PGCOPY\n\xff\r\n\0" + bytes(8)
_COPY_TRAILER = b"\xff\xff"

#: NumPy's big-endian spelling of each fixed-width binary ``COPY`` type.
_COPY_DTYPES = {"int4": ">i4", "bool": "u1", "float8": ">f8"}


def _binary_encodable(types: Sequence[str], arrays: Sequence[np.ndarray]) -> bool:
    """Whether :func:`_binary_block` can encode these columns (checked once for all rows).

    Fixed-width columns (``int4``, ``bool``, ``float8``) of a NumPy number
    dtype, with every ``int4`` value in range, and at most one text column,
    the last. Anything else (an object array holding NULLs, another type) is
    left to psycopg's ``write_row``, so the server sees the same rows either way.
    """
    fixed = types[:-1] if types[-1] == "text" else types
    if any(t not in _COPY_DTYPES for t in fixed):
        return False
    for kind, array in zip(fixed, arrays, strict=False):
        if array.dtype.kind not in "iub" + ("f" if kind == "float8" else ""):
            return False
        if kind == "int4" and len(array) and (array.min() < -(2**31) or array.max() >= 2**31):
            return False
    return True


def _binary_block(types: Sequence[str], arrays: Sequence[np.ndarray]) -> bytes:
    """The rows of ``arrays`` in ``COPY``'s binary format, built by NumPy.

    Each row is its field count, then each field's length and big-endian
    value; a text column (the last, :func:`_binary_encodable`) is its UTF-8
    bytes. One NumPy record per row instead of one Python call per row and
    field: psycopg's ``write_row`` was most of the client's time. ASCII text
    without NUL goes in as NumPy fixed-width bytes, one record array per
    length of text: rows with texts of several lengths then come grouped by
    length, in their order within a length (``COPY`` stores rows, whatever
    their order; the staged names carry their positions).
    """
    fixed = types[:-1] if types[-1] == "text" else types
    count = len(arrays[0])
    fields: list[tuple[str, str]] = [("fields", ">i2")]
    for i, kind in enumerate(fixed):
        fields += [(f"length{i}", ">i4"), (f"value{i}", _COPY_DTYPES[kind])]
    if len(fixed) < len(types):
        fields.append(("text_length", ">i4"))
    records = np.empty(count, dtype=np.dtype(fields))
    records["fields"] = len(types)
    for i, (kind, array) in enumerate(zip(fixed, arrays, strict=False)):
        records[f"length{i}"] = np.dtype(_COPY_DTYPES[kind]).itemsize
        records[f"value{i}"] = array
    if len(fixed) == len(types):
        return records.tobytes()
    names = arrays[-1].tolist()
    try:
        joined = "".join(names)
    except TypeError:  # some value is not text: written as its str()
        names = list(map(str, names))
        joined = "".join(names)
    width = records.dtype.itemsize
    if not joined.isascii() or "\x00" in joined:  # UTF-8 lengths may differ: name by name
        text = [name.encode() for name in names]
        records["text_length"] = np.fromiter(map(len, text), dtype=np.int64, count=count)
        raw = records.tobytes()
        prefixes = [raw[start : start + width] for start in range(0, len(raw), width)]
        return b"".join(itertools.chain.from_iterable(zip(prefixes, text, strict=True)))
    # ASCII without NUL (ids usually are): each name fits NumPy's fixed-width bytes,
    # so the rows of each name length are one record array with the text as its last
    # field, the rows of one length in their order (most ids have one length).
    lengths = np.fromiter(map(len, names), dtype=np.int64, count=count)
    records["text_length"] = lengths
    values = np.asarray(names, dtype=object)
    distinct = np.unique(lengths).tolist()
    blocks = []
    for length in distinct:
        rows = np.flatnonzero(lengths == length) if len(distinct) > 1 else slice(None)
        layout = [("fixed", records.dtype)] + ([("text", f"S{length}")] if length else [])
        typed = np.empty(len(lengths[rows]), dtype=np.dtype(layout))
        typed["fixed"] = records[rows]
        if length:
            typed["text"] = values[rows]
        blocks.append(typed.tobytes())
    return b"".join(blocks)


def _copy_rows(
    connection: Connection,
    table: Table,
    columns: Sequence[str],
    arrays: Sequence[np.ndarray],
    advance: Callable[[int], None] = lambda _n: None,
) -> None:
    """``COPY table (columns) FROM STDIN (FORMAT BINARY)`` through the psycopg cursor.

    Chunks of rows are encoded by NumPy (:func:`_binary_block`) and written
    as blocks when :func:`_binary_encodable` allows, otherwise row by row
    through psycopg's ``write_row``.
    """
    raw = connection.connection.driver_connection
    assert raw is not None  # an open connection always has its DBAPI connection
    column_list = ", ".join(f'"{c}"' for c in columns)
    total = len(arrays[0])
    types = [_copy_type(table.c[c]) for c in columns]
    blocks = _binary_encodable(types, arrays)
    statement = f'COPY "{table.name}" ({column_list}) FROM STDIN (FORMAT BINARY)'
    with raw.cursor() as cursor, cursor.copy(statement) as copy:
        if blocks:
            copy.write(_COPY_SIGNATURE)
        else:
            copy.set_types(types)
        for start in range(0, total, INSERT_CHUNK):
            stop = min(start + INSERT_CHUNK, total)
            if blocks:
                copy.write(_binary_block(types, [a[start:stop] for a in arrays]))
            else:
                for row in zip(*(a[start:stop].tolist() for a in arrays), strict=True):
                    copy.write_row(row)
            advance(stop - start)
        if blocks:
            copy.write(_COPY_TRAILER)
