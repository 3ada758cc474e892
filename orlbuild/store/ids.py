"""Ids given on the command line, checked against the range of the backend's id columns.

The store's ids are ``INTEGER`` columns: 32-bit on PostgreSQL (up to 2,147,483,647),
64-bit on SQLite (up to 9,223,372,036,854,775,807). An id beyond that range cannot
name a row, and sending it to the driver fails (``NumericValueOutOfRange`` on
PostgreSQL, ``OverflowError`` in Python's sqlite3): :func:`checked_id` answers it
as the missing row it is, in one line, before any statement runs
(docs/reliability.md, "Limits").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orlbuild.errors import StoreError

if TYPE_CHECKING:
    from orlbuild.store.engine import Bind

__all__ = ["ID_MAX", "checked_id", "id_max"]

#: The largest id each backend's ``INTEGER`` id columns hold (SQLite's is 64-bit).
ID_MAX = {"postgresql": 2**31 - 1, "sqlite": 2**63 - 1}


def id_max(bind: Bind) -> int:
    """The largest id the store at ``bind`` (engine, connection or session) can hold."""
    dialect = bind.get_bind().dialect if hasattr(bind, "get_bind") else bind.dialect
    return ID_MAX.get(dialect.name, ID_MAX["postgresql"])


def checked_id(bind: Bind, value: int, what: str, listing: str) -> int:
    """``value``, or a one-line :class:`StoreError` when no row can have that id.

    Parameters
    ----------
    bind
        The store.
    value
        The id given.
    what
        What it names, e.g. ``ingest batch``.
    listing
        The command that lists the existing ones, e.g. ``orlbuild batches list``.

    Returns
    -------
    int
        ``value`` when it is within 1 and :func:`id_max`.

    Raises
    ------
    StoreError
        ``no WHAT with id VALUE: ids are whole numbers from 1 to MAX on BACKEND; see LISTING``.
    """
    largest = id_max(bind)
    if 1 <= value <= largest:
        return value
    backend = "PostgreSQL" if largest == ID_MAX["postgresql"] else "SQLite"
    raise StoreError(
        f"no {what} with id {value}: ids are whole numbers from 1 to {largest:,} on {backend}; "
        f"see `{listing}`"
    )
