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
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import Session

from orlbuild.errors import StoreError
from orlbuild.store.driver_errors import database_errors

__all__ = [
    "SQLITE_BUSY_TIMEOUT_MS",
    "Bind",
    "as_utc",
    "connect",
    "create_store_engine",
    "hide_password",
    "is_sqlite",
    "normalize_url",
    "read_only_url",
    "sqlite_file",
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

_PASSWORD = re.compile(r"(://[^:/@]*:)[^@]*@")


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
        parsed = make_url(url)
        backend = parsed.get_backend_name()
    except (ArgumentError, ValueError) as exc:  # ValueError: a port that is not a number
        raise StoreError(
            f"invalid database URL {hide_password(url)!r} ({_first_line(exc)}); "
            "use e.g. sqlite:///orlbuild.db "
            "or postgresql+psycopg://user@host/db"
        ) from exc
    if backend not in ("sqlite", "postgresql"):
        shown = parsed.render_as_string(hide_password=True)
        raise StoreError(f"unsupported database {backend!r} in {shown!r}; use SQLite or PostgreSQL")
    return url


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def hide_password(url: str) -> str:
    """``url`` with the password of its ``user:password@`` part replaced by ``***``."""
    return _PASSWORD.sub(r"\1***@", url)


def read_only_url(url: str) -> str:
    """The URL that opens the SQLite file of ``url`` read-only (other URLs unchanged).

    A plain ``sqlite:///path`` becomes ``sqlite:///file:path?mode=ro&uri=true``;
    in a folder that cannot be written and without a ``-wal`` file (a clean
    store whose ``-shm`` index cannot be created), ``immutable=1`` is added so
    that SQLite does not try to create it.
    """
    url = normalize_url(url)
    parsed = make_url(url)
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or database in ("", ":memory:"):
        return url
    if parsed.query.get("uri") or database.startswith("file:"):
        return url  # the user's own URI says how to open it
    path = Path(database)
    if not path.exists():
        return url  # nothing to protect; the caller says what a missing store means
    query = "mode=ro&uri=true"
    folder = path.parent if str(path.parent) else Path(".")
    if not os.access(folder, os.W_OK) and not Path(f"{database}-wal").exists():
        query += "&immutable=1"
    return f"sqlite:///file:{quote(str(path), safe='/')}?{query}"


def sqlite_file(url: str) -> Path | None:
    """The SQLite file a plain ``sqlite:///PATH`` URL (or a bare path) names, else ``None``.

    ``None`` for PostgreSQL, for an in-memory database and for an SQLite URI
    (``file:...?mode=ro``), whose own options say how to open it.

    Examples
    --------
    >>> sqlite_file("new.db")
    PosixPath('new.db')
    >>> sqlite_file("postgresql://u@h/db") is None
    True
    """
    parsed = make_url(normalize_url(url))
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or database in ("", ":memory:"):
        return None
    if parsed.query.get("uri") or database.startswith("file:"):
        return None
    return Path(database)


def _is_read_only(url: str) -> bool:
    """Whether an SQLite URL opens its file read-only (``mode=ro`` or ``immutable=1``)."""
    query = make_url(url).query
    return query.get("mode") == "ro" or query.get("immutable") == "1"


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


def _configure_sqlite(engine: Engine, *, read_only: bool = False) -> None:
    """Install the pragmas and explicit ``BEGIN`` handling on an SQLite engine."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event emit BEGIN itself (pysqlite's own
        # implicit transactions would make DDL and BEGIN IMMEDIATE impossible).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        if not read_only:  # switching to WAL writes the file
            cursor.execute("PRAGMA journal_mode = WAL")
        # A 64 MiB page cache keeps the judgment indexes in memory during bulk inserts.
        cursor.execute(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        mode = connection.get_execution_options().get(_BEGIN_OPTION, "DEFERRED")
        connection.exec_driver_sql(f"BEGIN {mode}")


#: The first 16 bytes of every SQLite database file.
SQLITE_HEADER = b"SQLite format 3\x00"


def require_sqlite_file(database: str) -> None:
    """Refuse, in one line, an existing file that is not an SQLite database.

    ``--db notes.txt`` (or a TOML ``[database] path`` naming a text file) otherwise fails
    on the first statement with sqlite3's ``file is not a database`` traceback. A missing
    or empty file is left to the caller (an empty file is an empty SQLite database), and
    so is one that cannot be read.

    Raises
    ------
    StoreError
        The file exists, is not empty, and does not begin with :data:`SQLITE_HEADER`.
    """
    if database.startswith("file:"):  # an SQLite URI: file:PATH?mode=ro
        from urllib.parse import unquote

        database = unquote(database[len("file:") :].split("?", 1)[0])
    if database in ("", ":memory:"):
        return
    path = Path(database)
    try:
        if not path.is_file():
            return
        with path.open("rb") as stream:
            head = stream.read(len(SQLITE_HEADER))
    except OSError:
        return
    if head and head != SQLITE_HEADER:
        raise StoreError(
            f"{database} is not an SQLite database (it begins with {head[:8]!r}); "
            "check --db, $ORLBUILD_DB or the [database] path"
        )


def create_store_engine(url: str, *, read_only: bool = False, **kwargs: Any) -> Engine:
    """Create an engine configured for the orlbuild store.

    Parameters
    ----------
    url
        SQLite or PostgreSQL URL (see :func:`normalize_url`).
    read_only
        Open an SQLite file read-only (:func:`read_only_url`), for the commands
        that only read: they then work on a store that cannot be written.
    **kwargs
        Passed on to :func:`sqlalchemy.create_engine`.

    Returns
    -------
    Engine
        SQLite engines use WAL, ``foreign_keys=ON`` and a busy timeout of
        :data:`SQLITE_BUSY_TIMEOUT_MS`; PostgreSQL engines check a pooled
        connection before using it (``pool_pre_ping``), so a connection the
        server closed meanwhile (restart, ``idle_session_timeout``) is replaced.
    """
    url = read_only_url(url) if read_only else normalize_url(url)
    if url.startswith("sqlite"):
        connect_args = kwargs.pop("connect_args", {})
        connect_args.setdefault("timeout", SQLITE_BUSY_TIMEOUT_MS / 1000)
        engine = create_engine(url, connect_args=connect_args, **kwargs)
        require_sqlite_file(str(engine.url.database or ""))
        _configure_sqlite(engine, read_only=_is_read_only(url))
        return engine
    kwargs.setdefault("pool_pre_ping", True)
    try:
        return create_engine(url, **kwargs)
    except ModuleNotFoundError as exc:
        raise StoreError(
            f"{make_url(url).drivername} needs the {exc.name} driver, which is not installed; "
            "install it with `pip install 'orlbuild[postgres]'`"
        ) from exc


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """Open a connection with one transaction that takes the write lock at once.

    Commits when the block ends normally, rolls back on any exception. On
    SQLite the transaction starts with ``BEGIN IMMEDIATE`` (writers queue on
    the busy timeout); on PostgreSQL it is an ordinary READ COMMITTED
    transaction. Every store write runs here: driver failures (lock timeout,
    read-only store, full disk, lost connection) leave as one-line
    :class:`~orlbuild.errors.StoreError` after the rollback
    (:mod:`orlbuild.store.driver_errors`).
    """
    with database_errors(engine), engine.connect() as connection:
        if is_sqlite(engine):
            connection.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})
        with connection.begin():
            yield connection


@contextmanager
def connect(bind: Bind) -> Iterator[Connection]:
    """Yield a connection for reading from an engine, connection or session.

    From an engine, a driver failure while reading (the server gone, a
    connection it closed after the pool's pre-ping, a locked or unreadable
    file) is the store's one-line :class:`~orlbuild.errors.StoreError`
    (:mod:`orlbuild.store.driver_errors`), never a traceback.
    """
    if isinstance(bind, Session):
        yield bind.connection()
    elif isinstance(bind, Connection):
        yield bind
    else:
        with database_errors(bind), bind.connect() as connection:
            yield connection
