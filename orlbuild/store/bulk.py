"""Bulk writes: concurrency-safe get-or-create of names and fast fact inserts.

Names (collections, systems, annotators, queries, items) are created with
``INSERT ... ON CONFLICT DO NOTHING`` followed by a select of their ids, so
processes that ingest files sharing queries and items at the same time never
duplicate a name nor fail on one. Names are inserted in sorted order and
tables in a fixed order, so concurrent PostgreSQL transactions take their row
locks in the same order and cannot deadlock. On PostgreSQL the names are first
copied into a temporary table (one ``COPY``, one ``INSERT ... SELECT``, one
join) instead of one round trip per name.

Facts are inserted with SQLAlchemy Core ``executemany`` in chunks of plain
tuples (SQLite, where each write transaction holds the database lock, so
``BEGIN IMMEDIATE`` serialises writers); on PostgreSQL with binary
``COPY ... FROM STDIN`` through psycopg.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sqlalchemy import Column, Connection, MetaData, Table, Text, insert, literal, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError

from orlbuild.store.models import Collection, System

__all__ = [
    "INSERT_CHUNK",
    "IN_LIST_CHUNK",
    "ensure_collection",
    "ensure_names",
    "ensure_system",
    "insert_rows",
]

#: Ids per ``IN (...)`` list: far below SQLite's 32766 bound parameters.
IN_LIST_CHUNK = 5_000

#: Rows per ``executemany`` call.
INSERT_CHUNK = 50_000


def _insert_ignoring_conflicts(connection: Connection, table: Any) -> Any:
    """``INSERT ... ON CONFLICT DO NOTHING`` for the connection's dialect."""
    dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
    return dialect.insert(table).on_conflict_do_nothing()


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
    table: Table = model.__table__
    unique = sorted(set(names))
    if connection.dialect.name == "postgresql":
        ids = _ensure_names_staged(connection, table, collection_id, unique)
    else:
        ids = _ensure_names_executemany(connection, table, collection_id, unique)
    return np.fromiter((ids[n] for n in names), dtype=np.int64, count=len(names))


def _ensure_names_executemany(
    connection: Connection, table: Table, collection_id: int, unique: list[str]
) -> dict[str, int]:
    """Insert-or-ignore with ``executemany``, then select the ids (in-process SQLite: fast)."""
    statement = _insert_ignoring_conflicts(connection, table)
    for start in range(0, len(unique), INSERT_CHUNK):
        part = unique[start : start + INSERT_CHUNK]
        connection.execute(statement, [{"collection_id": collection_id, "name": n} for n in part])
    ids: dict[str, int] = {}
    for start in range(0, len(unique), IN_LIST_CHUNK):
        part = unique[start : start + IN_LIST_CHUNK]
        rows = connection.execute(
            select(table.c.name, table.c.id).where(
                table.c.collection_id == collection_id, table.c.name.in_(part)
            )
        )
        ids.update((str(name), int(id_)) for name, id_ in rows)
    return ids


def _ensure_names_staged(
    connection: Connection, table: Table, collection_id: int, unique: list[str]
) -> dict[str, int]:
    """PostgreSQL: COPY the names into a temporary table, insert-or-ignore and join for ids.

    One statement each instead of one round trip per name. The insert runs in
    ``ORDER BY name`` so that concurrent transactions lock new names in the
    same order.
    """
    staging = Table(
        f"orlbuild_staged_{table.name}",
        MetaData(),
        Column("name", Text, nullable=False),
        prefixes=["TEMPORARY"],
        postgresql_on_commit="DROP",
    )
    staging.drop(connection, checkfirst=True)
    staging.create(connection)
    _copy_rows(connection, staging, ["name"], [np.asarray(unique, dtype=object)])
    connection.execute(
        postgresql.insert(table)
        .from_select(
            ["collection_id", "name"],
            select(literal(collection_id), staging.c.name).order_by(staging.c.name),
        )
        .on_conflict_do_nothing()
    )
    rows = connection.execute(
        select(table.c.name, table.c.id)
        .join(staging, staging.c.name == table.c.name)
        .where(table.c.collection_id == collection_id)
    )
    return {str(name): int(id_) for name, id_ in rows}


def ensure_collection(connection: Connection, name: str) -> int:
    """Get or create the collection ``name``; returns its id."""
    connection.execute(
        _insert_ignoring_conflicts(connection, Collection.__table__), [{"name": name}]
    )
    return int(
        connection.execute(select(Collection.id).where(Collection.name == name)).scalar_one()
    )


def ensure_system(connection: Connection, collection_id: int, name: str) -> int:
    """Get or create the system ``name`` in a collection; returns its id."""
    return int(ensure_names(connection, System, collection_id, [name])[0])


def insert_rows(
    connection: Connection,
    table: Table,
    columns: Sequence[str],
    arrays: Sequence[np.ndarray],
    on_rows: Callable[[int], None] | None = None,
) -> int:
    """Insert aligned column arrays into ``table``; returns the number of rows.

    PostgreSQL gets ``COPY ... FROM STDIN`` (psycopg 3), other databases
    Core ``executemany`` in chunks of :data:`INSERT_CHUNK` tuples.
    ``on_rows`` is called with the number of rows written after each chunk.
    """
    advance = on_rows or (lambda _n: None)
    total = len(arrays[0]) if arrays else 0
    if total == 0:
        return 0
    if connection.dialect.name == "postgresql":
        dbapi = connection.dialect.dbapi
        try:
            _copy_rows(connection, table, columns, arrays, advance)
        except dbapi.IntegrityError as exc:  # type: ignore[union-attr]
            # The raw driver's error, wrapped as SQLAlchemy would wrap an executemany's.
            raise IntegrityError(f"COPY {table.name}", None, exc) from exc
        return total
    statement = insert(table).compile(dialect=connection.dialect, column_keys=list(columns))
    sql = str(statement)
    # Positional parameters in the order the compiled statement binds them.
    order = [columns.index(key) for key in statement.positiontup or columns]
    for start in range(0, total, INSERT_CHUNK):
        stop = min(start + INSERT_CHUNK, total)
        parts = [arrays[i][start:stop].tolist() for i in order]
        connection.exec_driver_sql(sql, list(zip(*parts, strict=True)))
        advance(stop - start)
    return total


def _copy_type(column: Column[Any]) -> str:
    """The PostgreSQL type name psycopg's binary COPY needs for a column."""
    python_type = column.type.python_type
    return {int: "int4", bool: "bool", float: "float8"}.get(python_type, "text")


def _copy_rows(
    connection: Connection,
    table: Table,
    columns: Sequence[str],
    arrays: Sequence[np.ndarray],
    advance: Callable[[int], None] = lambda _n: None,
) -> None:
    """``COPY table (columns) FROM STDIN (FORMAT BINARY)`` through the psycopg cursor."""
    raw = connection.connection.driver_connection
    assert raw is not None  # an open connection always has its DBAPI connection
    column_list = ", ".join(f'"{c}"' for c in columns)
    total = len(arrays[0])
    statement = f'COPY "{table.name}" ({column_list}) FROM STDIN (FORMAT BINARY)'
    with raw.cursor() as cursor, cursor.copy(statement) as copy:
        copy.set_types([_copy_type(table.c[c]) for c in columns])
        for start in range(0, total, INSERT_CHUNK):
            stop = min(start + INSERT_CHUNK, total)
            for row in zip(*(a[start:stop].tolist() for a in arrays), strict=True):
                copy.write_row(row)
            advance(stop - start)
