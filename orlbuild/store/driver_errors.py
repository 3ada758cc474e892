"""Database driver errors as one-line store errors that name the cause and the fix.

Every store transaction (:func:`orlbuild.store.engine.write_transaction`, the
schema migrations, opening the store) runs inside :func:`database_errors`, so
a lock timeout, a read-only file, a full disk or a dropped PostgreSQL
connection reach the user as one :class:`~orlbuild.errors.StoreError` line
(docs/reliability.md, "When the database fails"), never as a driver traceback. The
transaction has been rolled back by then: nothing of it is stored.

:func:`retry_on_disconnect` runs a write once more when the first attempt lost
its connection (a PostgreSQL restart, a pooler, ``idle_session_timeout``), so
that a long build's computation is not thrown away for one dropped connection.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError, InterfaceError, InternalError, OperationalError

from orlbuild.errors import StoreError

__all__ = [
    "database_errors",
    "describe_driver_error",
    "is_disconnect",
    "is_driver_fault",
    "retry_on_disconnect",
]

T = TypeVar("T")

#: (words in the driver's message, cause, fix), first match wins.
_CAUSES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (
        ("database is locked", "database table is locked", "lock timeout"),
        "another process held the write lock for too long",
        "retry when the other writer has finished",
    ),
    (
        ("readonly database", "read-only", "read only"),
        "the store is read-only",
        "make the database file and its folder writable, or run only commands that read",
    ),
    (
        ("disk is full", "disk full", "no space left", "could not extend file"),
        "the disk is full",
        "free some space and rerun; nothing of this change was stored",
    ),
    (
        ("idle-session timeout", "idle_session_timeout", "terminating connection"),
        "the server closed the connection",
        "rerun; nothing of this change was stored",
    ),
    (
        ("server closed the connection", "connection is closed", "connection refused",
         "could not connect", "connection timed out", "consuming input failed",
         "server conn crashed", "connection reset", "connection failed"),
        "the connection to the database failed",
        "check that the server is running and reachable, then rerun",
    ),
    (
        ("unable to open database file", "disk i/o error"),
        "the database file cannot be opened or written",
        "check the path and the permissions of the file and its folder (--db or $ORLBUILD_DB)",
    ),
)  # fmt: skip


def is_disconnect(exc: BaseException) -> bool:
    """Whether ``exc`` is a lost connection (worth one retry on a fresh connection)."""
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    text = str(getattr(exc, "orig", None) or exc).lower()
    return isinstance(exc, (OperationalError, InterfaceError)) and any(
        words in text
        for words in (
            "server closed the connection",
            "connection is closed",
            "terminating connection",
            "consuming input failed",
            "connection reset",
        )
    )


def describe_driver_error(exc: BaseException, where: str) -> str:
    """One line: the database, what went wrong, the driver's own words, and the fix.

    Parameters
    ----------
    exc
        The driver error (SQLAlchemy's wrapper).
    where
        The database, shown without its password.
    """
    reason = str(getattr(exc, "orig", None) or exc).strip()
    reason = reason.splitlines()[0] if reason else type(exc).__name__
    lowered = reason.lower()
    for words, cause, fix in _CAUSES:
        if any(w in lowered for w in words):
            return f"cannot use the database {where}: {cause} ({reason}); {fix}"
    if is_disconnect(exc):
        return f"cannot use the database {where}: the connection was lost ({reason}); rerun"
    return f"cannot use the database {where}: {reason}; check --db or $ORLBUILD_DB"


def is_driver_fault(exc: BaseException) -> bool:
    """Whether ``exc`` is a fault of the database rather than of the statement.

    Lock timeouts, read-only stores, full disks and lost connections are
    (SQLAlchemy's ``OperationalError``, ``InterfaceError``, ``InternalError``,
    or any error that invalidated its connection); constraint violations are not.
    """
    if isinstance(exc, (OperationalError, InterfaceError, InternalError)):
        return True
    return isinstance(exc, DBAPIError) and exc.connection_invalidated


@contextmanager
def database_errors(engine: Engine) -> Iterator[None]:
    """Turn driver failures (no server, lock timeout, read-only, full disk) into StoreError."""
    try:
        yield
    except DBAPIError as exc:
        if not is_driver_fault(exc):
            raise
        where = engine.url.render_as_string(hide_password=True)
        raise StoreError(describe_driver_error(exc, where)) from exc


def retry_on_disconnect(engine: Engine, write: Callable[[], T]) -> T:
    """Run ``write`` (one whole transaction); once more if its connection was lost.

    The first failure's transaction was rolled back with its connection, so the
    second attempt starts from scratch on a fresh connection; any other error,
    or a second lost connection, propagates.
    """
    try:
        return write()
    except StoreError as exc:
        cause = exc.__cause__
        if cause is None or not is_disconnect(cause):
            raise
    engine.dispose()  # the pool's other connections died with the first one
    return write()
