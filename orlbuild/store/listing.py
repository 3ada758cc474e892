"""What the store holds, counted per system and per collection (``systems list``,
``collections list``)."""

from __future__ import annotations

import pandas as pd
from sqlalchemy import distinct, func, select

from orlbuild.store.engine import Bind, connect
from orlbuild.store.models import Build, Collection, IngestBatch, RunEntry, System
from orlbuild.store.read import collection_id

__all__ = ["SYSTEM_COLUMNS", "build_counts", "system_counts"]

#: The columns of :func:`system_counts`.
SYSTEM_COLUMNS = ("collection", "system", "runs", "queries", "rows")


def system_counts(bind: Bind, collection: str | None = None) -> pd.DataFrame:
    """Every system with a run, and what its runs hold.

    Parameters
    ----------
    bind
        Engine, connection or session.
    collection
        Only this collection (a :class:`~orlbuild.errors.StoreError` if it does
        not exist); ``None``: every collection.

    Returns
    -------
    pandas.DataFrame
        :data:`SYSTEM_COLUMNS`, by collection and system name: ``runs`` the
        run batches, ``queries`` the distinct queries of its rows, ``rows`` its
        run entries. A system whose run batches were all deleted is not listed.
    """
    with connect(bind) as connection:
        batches = (
            select(IngestBatch.system_id, func.count(IngestBatch.id).label("runs"))
            .where(IngestBatch.system_id.is_not(None))
            .group_by(IngestBatch.system_id)
            .subquery()
        )
        entries = (
            select(
                RunEntry.system_id,
                func.count(distinct(RunEntry.query_id)).label("queries"),
                func.count(RunEntry.id).label("rows"),
            )
            .group_by(RunEntry.system_id)
            .subquery()
        )
        stmt = (
            select(
                Collection.name,
                System.name,
                batches.c.runs,
                func.coalesce(entries.c.queries, 0),
                func.coalesce(entries.c.rows, 0),
            )
            .join(Collection, Collection.id == System.collection_id)
            .join(batches, batches.c.system_id == System.id)
            .outerjoin(entries, entries.c.system_id == System.id)
            .order_by(Collection.name, System.name)
        )
        if collection is not None:
            stmt = stmt.where(System.collection_id == collection_id(connection, collection))
        rows = connection.execute(stmt).all()
    frame = pd.DataFrame([tuple(r) for r in rows], columns=list(SYSTEM_COLUMNS))
    for column in SYSTEM_COLUMNS[2:]:
        frame[column] = frame[column].astype("int64")
    return frame


def build_counts(bind: Bind) -> dict[str, int]:
    """The number of ORL builds of each collection (collections without any are left out)."""
    with connect(bind) as connection:
        rows = connection.execute(
            select(Collection.name, func.count(Build.id))
            .join(Build, Build.collection_id == Collection.id)
            .group_by(Collection.name)
        ).all()
    return {str(name): int(n) for name, n in rows}
