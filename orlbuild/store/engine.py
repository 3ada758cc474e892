"""Engines and transactions for SQLite and PostgreSQL.

SQLite connections get WAL journaling (readers never block the writer),
enforced foreign keys and a busy timeout, so that several processes can write
to one file: they queue for the write lock instead of failing. Write
transactions on SQLite start with ``BEGIN IMMEDIATE`` so that a transaction
that read first can never be refused the write lock half-way through.
PostgreSQL is reached through psycopg 3 (``postgresql+psycopg://``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, InterfaceError, OperationalError
from sqlalchemy.orm import Session

from orlbuild.errors import StoreError

__all__ = [
    "SQLITE_BUSY_TIMEOUT_MS",
    "Bind",
    "as_utc",
    "connect",
    "create_store_engine",
    "database_errors",
    "is_sqlite",
    "normalize_url",
    "write_transaction",
]

#: How long an SQLite writer waits for another process's write lock.
SQLITE_BUSY_TIMEOUT_MS = 120_000

#: SQLite page cache per connection, in KiB.
SQLITE_CACHE_KIB = 65_536

#: Anything the read API accepts: an engine, an open connection or an ORM session.
#: ``Engine`` (SQLAlchemy's) is re-exported so that the front ends can name the store's
#: handle without importing SQLAlchemy (tests/test_layer_boundaries.py).
Bind = Engine | Connection | Session

_BEGIN_OPTION = "orlbuild_sqlite_begin"


def normalize_url(url: str) -> str:
    """Map driver-less PostgreSQL URLs onto psycopg 3 and validate the URL.

    Parameters
    ----------
    url
        A SQLAlchemy database URL, e.g. ``sqlite:///orlbuild.db`` or
        ``postgresql://user@host/db``; a plain path (no ``://``) means an
        SQLite file.

    Returns
    -------
    str
        The URL with ``postgresql+psycopg`` as the PostgreSQL driver.
    """
    if "://" not in url and url.strip():
        # A plain path (``--db sample_data/orlbuild.db``) is an SQLite file.
        url = f"sqlite:///{url}"
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            url = "postgresql+psycopg://" + url[len(prefix) :]
    try:
        backend = make_url(url).get_backend_name()
    except ArgumentError as exc:
        raise StoreError(
            f"invalid database URL {url!r}; use e.g. sqlite:///orlbuild.db "
            "or postgresql+psycopg://user@host/db"
        ) from exc
    if backend not in ("sqlite", "postgresql"):
        raise StoreError(f"unsupported database {backend!r} in {url!r}; use SQLite or PostgreSQL")
    return url


def is_sqlite(bind: Engine | Connection) -> bool:
    """Whether ``bind`` talks to SQLite."""
    return bind.dialect.name == "sqlite"


def as_utc(moment: datetime) -> datetime:
    """A datetime read from the store, in UTC (SQLite returns naive ones, stored in UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def finite_or_none(value: Any) -> float | None:
    """A float to store, or ``None`` (SQL NULL) for a missing, NaN or infinite value."""
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _configure_sqlite(engine: Engine) -> None:
    """Install the pragmas and explicit ``BEGIN`` handling on an SQLite engine."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event emit BEGIN itself (pysqlite's own
        # implicit transactions would make DDL and BEGIN IMMEDIATE impossible).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA journal_mode = WAL")
        # A 64 MiB page cache keeps the judgment indexes in memory during bulk inserts.
        cursor.execute(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        mode = connection.get_execution_options().get(_BEGIN_OPTION, "DEFERRED")
        connection.exec_driver_sql(f"BEGIN {mode}")


def create_store_engine(url: str, **kwargs: Any) -> Engine:
    """Create an engine configured for the orlbuild store.

    Parameters
    ----------
    url
        SQLite or PostgreSQL URL (see :func:`normalize_url`).
    **kwargs
        Passed on to :func:`sqlalchemy.create_engine`.

    Returns
    -------
    Engine
        SQLite engines use WAL, ``foreign_keys=ON`` and a busy timeout of
        :data:`SQLITE_BUSY_TIMEOUT_MS`.
    """
    url = normalize_url(url)
    if url.startswith("sqlite"):
        connect_args = kwargs.pop("connect_args", {})
        connect_args.setdefault("timeout", SQLITE_BUSY_TIMEOUT_MS / 1000)
        engine = create_engine(url, connect_args=connect_args, **kwargs)
        _configure_sqlite(engine)
        return engine
    try:
        return create_engine(url, **kwargs)
    except ModuleNotFoundError as exc:
        raise StoreError(
            f"{make_url(url).drivername} needs the {exc.name} driver, which is not installed; "
            "install it with `pip install 'orlbuild[postgres]'`"
        ) from exc


@contextmanager
def database_errors(engine: Engine) -> Iterator[None]:
    """Turn driver failures (no server, unopenable file, lock timeout) into StoreError."""
    try:
        yield
    except (OperationalError, InterfaceError) as exc:
        reason = str(exc.orig or exc).strip().splitlines()[0]
        where = engine.url.render_as_string(hide_password=True)
        raise StoreError(
            f"cannot use the database {where}: {reason}; check --db or $ORLBUILD_DB"
        ) from exc


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """Open a connection with one transaction that takes the write lock at once.

    Commits when the block ends normally, rolls back on any exception. On
    SQLite the transaction starts with ``BEGIN IMMEDIATE`` (writers queue on
    the busy timeout); on PostgreSQL it is an ordinary READ COMMITTED
    transaction.
    """
    with engine.connect() as connection:
        if is_sqlite(engine):
            connection.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})
        with connection.begin():
            yield connection


@contextmanager
def connect(bind: Bind) -> Iterator[Connection]:
    """Yield a connection for reading from an engine, connection or session."""
    if isinstance(bind, Session):
        yield bind.connection()
    elif isinstance(bind, Connection):
        yield bind
    else:
        with bind.connect() as connection:
            yield connection
