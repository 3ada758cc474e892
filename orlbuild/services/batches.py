"""Ingest batches: list the ingested files, delete one with everything it stored.

The use cases behind ``orlbuild batches list|delete``: the store
(:mod:`orlbuild.store.batches`, :mod:`orlbuild.store.read`) reads and
deletes; this module adds what the command reports, such as a system that
lost its last run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from orlbuild.store import list_batches, list_systems
from orlbuild.store.batches import delete_batch
from orlbuild.store.texts import delete_text_batch, list_text_batches

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from orlbuild.output_files import StoredInput

__all__ = ["BatchDeletion", "delete_ingest_batch", "list_ingest_batches", "stored_inputs"]


@dataclass(frozen=True)
class BatchDeletion:
    """What deleting one batch removed."""

    batch_id: int
    rows: int
    removed_system: str | None
    """The system whose last run batch this was (deleted with it), if any."""


def list_ingest_batches(engine: Engine, collection: str | None = None) -> pd.DataFrame:
    """The ingested files, oldest first (:func:`orlbuild.store.list_batches`), then the text
    batches (kind ``text``, numbered on their own: ``batches delete ID --text``).

    ``created_at`` is given as text, as every front end shows it.
    """
    frame = list_batches(engine, collection)
    texts = list_text_batches(engine, collection)
    if len(texts):
        frame = pd.concat([frame, texts], ignore_index=True) if len(frame) else texts
    frame["created_at"] = frame["created_at"].astype(str)
    return frame


def delete_ingest_batch(
    engine: Engine, batch_id: int, *, force: bool = False, text: bool = False
) -> BatchDeletion:
    """Delete a batch and every row it stored (:func:`orlbuild.store.batches.delete_batch`).

    Deleting a system's last run batch removes the system, which is reported.
    With ``text``, ``batch_id`` is a text batch's
    (:func:`orlbuild.store.texts.delete_text_batch`): the texts it replaced are
    current again.

    Raises
    ------
    StoreError
        No such batch, or a build used it and ``force`` is false.
    """
    if text:
        return BatchDeletion(batch_id, delete_text_batch(engine, batch_id), None)
    batches = list_batches(engine)
    owner = batches.loc[batches["id"] == batch_id, ["collection", "system"]]
    rows = delete_batch(engine, batch_id, force=force)
    collection, system = owner.iloc[0] if len(owner) else ("", "")
    gone = bool(system) and system not in list_systems(engine, collection)
    return BatchDeletion(batch_id, rows, str(system) if gone else None)


def stored_inputs(engine: Engine) -> list[StoredInput]:
    """The files the stored batches were read from, which no ``-o`` may overwrite.

    Each is matched by its recorded path and by its content hash
    (docs/reliability.md, "Output files"); a run stored for a second system under a
    derived key is matched through that key.
    """
    from functools import partial

    from orlbuild.output_files import StoredInput
    from orlbuild.store.batches import run_content_key

    found: list[StoredInput] = []
    for row in list_batches(engine).itertuples(index=False):
        derive = partial(_run_key, run_content_key, str(row.system)) if row.system else None
        role = f"the input of batch {row.id} ({row.kind})"
        found.append(StoredInput(role, str(row.file_name), str(row.sha256), derive))
    return found


def _run_key(key: Callable[[str, str], str], system: str, sha256: str) -> str:
    """``key(sha256, system)``: the content key of a run stored for ``system``."""
    return key(sha256, system)
