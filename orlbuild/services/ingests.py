"""Ingest one input file unless identical content is already stored.

The use case behind the pipeline's ingest step (``[[inputs]]``): the file's
content hash is looked up first (:func:`orlbuild.ingest.source.file_sha256`),
so a stored file is skipped without being parsed; otherwise it is ingested by
:func:`orlbuild.ingest.ingest_file`, the function ``orlbuild ingest`` calls.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from orlbuild.ingest import InputFormat, ingest_file
from orlbuild.ingest.source import file_sha256
from orlbuild.store.batches import find_batch, find_run_batch
from orlbuild.store.read import list_batches
from orlbuild.store.users import current_user

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from orlbuild.progress import IngestProgress

__all__ = [
    "IngestProgressFactory",
    "IngestedInput",
    "ingest_unless_stored",
    "interrupted_ingest_outcome",
    "newest_batch",
]

#: ``progress(size_in_bytes)`` opens the read/write progress bars of one file.
IngestProgressFactory = Callable[[int], AbstractContextManager["IngestProgress"]]


@dataclass(frozen=True)
class IngestedInput:
    """What happened to one input file: stored as a new batch, or found stored."""

    kind: str
    path: Path
    collection: str
    system: str | None
    batch_id: int
    created: bool
    rows: int
    warnings: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        """The lines for the log (the outcome, then any warning about the file)."""
        what = f"{self.kind} {self.path.name}" + (f" ({self.system})" if self.system else "")
        if self.created:
            text = f"ingested {what}: {self.rows} rows as batch {self.batch_id}"
            return "\n".join([text, *(f"warning: {w}" for w in self.warnings)])
        return f"skipped {what}: already stored as batch {self.batch_id}"


def ingest_unless_stored(
    engine: Engine,
    kind: str,
    path: Path,
    *,
    collection: str,
    system: str | None = None,
    fmt: str | None = None,
    progress: IngestProgressFactory | None = None,
) -> IngestedInput:
    """Ingest ``path`` unless the same content is stored (checked by SHA-256 first).

    Parameters
    ----------
    engine
        The store.
    kind
        ``listwise``, ``pairwise``, ``graded`` or ``run``.
    path
        The file.
    collection
        Collection the rows go to.
    system
        The system of a run.
    fmt
        Input format (docs/input-formats.md, "Input formats"); ``None``: by extension.
    progress
        Opens the progress bars of a file about to be read (not called for a
        file found stored).

    Returns
    -------
    IngestedInput

    Raises
    ------
    InputError
        Bad input (nothing of the file is stored).
    """
    sha256 = file_sha256(path)
    if kind == "run" and system is not None:
        # The same content under another system is stored for that system too.
        existing = find_run_batch(engine, collection, sha256, system)
    else:
        existing = find_batch(engine, collection, kind, sha256)
    if existing is not None:
        return IngestedInput(kind, path, collection, system, existing.id, False, existing.row_count)
    bars = progress(path.stat().st_size) if progress is not None else nullcontext(None)
    with bars as shown:
        result = ingest_file(
            engine,
            kind,
            path,
            collection=collection,
            fmt=None if fmt is None else InputFormat(fmt),
            system=system,
            on_progress=None if shown is None else shown.read,
            on_write=None if shown is None else shown.write,
        )
    return IngestedInput(
        kind,
        path,
        collection,
        system,
        result.batch_id,
        result.created,
        result.rows,
        tuple(result.warnings),
    )


def newest_batch(engine: Engine) -> int:
    """The id of the newest ingest batch (0 for none): noted before an ingest starts."""
    batches = list_batches(engine)
    return int(batches["id"].max()) if len(batches) else 0


def interrupted_ingest_outcome(
    engine: Engine,
    before: int,
    *,
    kind: str,
    collection: str,
    system: str | None = None,
) -> tuple[int, int] | None:
    """What an interrupted ingest left in the store, read from the store after the fact.

    Parameters
    ----------
    engine
        The store.
    before
        :func:`newest_batch` before the ingest started.
    kind, collection, system
        The ingest's.

    Returns
    -------
    tuple of int or None
        ``(batch id, rows)`` when the batch was committed before the
        interruption, else ``None`` (the transaction was rolled back). Batches
        of other users, kinds, collections or systems stored meanwhile are not
        counted.
    """
    batches = list_batches(engine, collection)
    mine = batches[
        (batches["id"] > before)
        & (batches["kind"] == kind)
        & (batches["created_by"] == current_user())
    ]
    if system is not None:
        mine = mine[mine["system"] == system]
    if mine.empty:
        return None
    row = mine.iloc[-1]
    return int(row["id"]), int(row["row_count"])
