"""Row counts per collection, for ``orlbuild status``."""

from __future__ import annotations

from typing import Any

import pandas as pd
from sqlalchemy import func, select

from orlbuild.store.engine import Bind, connect
from orlbuild.store.models import (
    JUDGMENT_MODELS,
    NAME_MODELS,
    Collection,
    IngestBatch,
    RunEntry,
    System,
)
from orlbuild.store.read import collection_id

__all__ = ["STATUS_COUNTS", "status_frame", "store_status"]

#: The per-collection counts, in display order (``runs`` is per system).
STATUS_COUNTS = ("queries", "items", "annotators", "listwise", "pairwise", "graded", "batches")


def store_status(bind: Bind, collection: str | None = None) -> dict[str, Any]:
    """Count what the store holds, per collection.

    Parameters
    ----------
    bind
        Engine, connection or session.
    collection
        Only this collection (a :class:`StoreError` if it does not exist).

    Returns
    -------
    dict
        ``{"collections": {name: {"queries": n, "items": n, "annotators": n,
        "listwise": n, "pairwise": n, "graded": n, "runs": {system: n},
        "batches": n}}}``.
    """
    with connect(bind) as connection:
        if collection is None:
            ids = {
                str(n): int(i)
                for n, i in connection.execute(select(Collection.name, Collection.id))
            }
        else:
            ids = {collection: collection_id(connection, collection)}

        def count_by_collection(column: Any, stmt: Any) -> dict[int, int]:
            rows = connection.execute(stmt.add_columns(func.count()).group_by(column)).all()
            return {int(c): int(n) for c, n in rows}

        counts: dict[str, dict[int, int]] = {}
        for key, model in NAME_MODELS.items():
            counts[key] = count_by_collection(model.collection_id, select(model.collection_id))
        batch_cid = IngestBatch.collection_id
        for key, model in JUDGMENT_MODELS.items():
            counts[key] = count_by_collection(
                batch_cid, select(batch_cid).join(model, model.batch_id == IngestBatch.id)
            )
        counts["batches"] = count_by_collection(batch_cid, select(batch_cid))
        # Only systems with a run batch count: a system whose runs were deleted is gone.
        run_rows = connection.execute(
            select(System.collection_id, System.name, func.count(RunEntry.id))
            .join(RunEntry, RunEntry.system_id == System.id)
            .group_by(System.collection_id, System.name)
            .order_by(System.name)
        ).all()
    result: dict[str, Any] = {}
    for name in sorted(ids):
        cid = ids[name]
        entry: dict[str, Any] = {key: counts[key].get(cid, 0) for key in STATUS_COUNTS}
        entry["runs"] = {system: int(n) for c, system, n in run_rows if c == cid}
        result[name] = {k: entry[k] for k in (*STATUS_COUNTS[:-1], "runs", "batches")}
    return {"collections": result}


def status_frame(payload: dict[str, Any]) -> pd.DataFrame:
    """The :func:`store_status` document as a table: one row per collection.

    ``runs`` becomes two columns: ``systems`` (how many) and ``run_entries``
    (rows over all systems).
    """
    records = []
    for name, entry in payload["collections"].items():
        record = {"collection": name, **{k: entry[k] for k in STATUS_COUNTS if k != "batches"}}
        record["systems"] = len(entry["runs"])
        record["run_entries"] = sum(entry["runs"].values())
        record["batches"] = entry["batches"]
        records.append(record)
    columns = ["collection", *STATUS_COUNTS[:-1], "systems", "run_entries", "batches"]
    return pd.DataFrame.from_records(records, columns=columns)
