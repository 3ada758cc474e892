"""Ingest batches: list the ingested files, delete one with everything it stored.

The use cases behind ``orlbuild batches list|delete``: the store
(:mod:`orlbuild.store.batches`, :mod:`orlbuild.store.read`) reads and
deletes; this module adds what the command reports, such as a system that
lost its last run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from orlbuild.store import list_batches, list_systems
from orlbuild.store.batches import delete_batch

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy import Engine

__all__ = ["BatchDeletion", "delete_ingest_batch", "list_ingest_batches"]


@dataclass(frozen=True)
class BatchDeletion:
    """What deleting one batch removed."""

    batch_id: int
    rows: int
    removed_system: str | None
    """The system whose last run batch this was (deleted with it), if any."""


def list_ingest_batches(engine: Engine, collection: str | None = None) -> pd.DataFrame:
    """The ingested files, oldest first (:func:`orlbuild.store.list_batches`).

    ``created_at`` is given as text, as every front end shows it.
    """
    frame = list_batches(engine, collection)
    frame["created_at"] = frame["created_at"].astype(str)
    return frame


def delete_ingest_batch(engine: Engine, batch_id: int, *, force: bool = False) -> BatchDeletion:
    """Delete a batch and every row it stored (:func:`orlbuild.store.batches.delete_batch`).

    Deleting a system's last run batch removes the system, which is reported.

    Raises
    ------
    StoreError
        No such batch, or a build used it and ``force`` is false.
    """
    batches = list_batches(engine)
    owner = batches.loc[batches["id"] == batch_id, ["collection", "system"]]
    rows = delete_batch(engine, batch_id, force=force)
    collection, system = owner.iloc[0] if len(owner) else ("", "")
    gone = bool(system) and system not in list_systems(engine, collection)
    return BatchDeletion(batch_id, rows, str(system) if gone else None)
