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

from orlbuild.errors import ConfigError
from orlbuild.ingest import InputFormat, ingest_file
from orlbuild.ingest.source import file_sha256
from orlbuild.store.batches import find_batch

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from orlbuild.progress import IngestProgress

__all__ = ["IngestProgressFactory", "IngestedInput", "ingest_unless_stored"]

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


def _same_query(reading: str | None, query: str | None) -> bool:
    """Whether a stored batch's reading used the same ``--query`` (or none) as this one."""
    if reading is None:  # stored before readings were recorded: its content counts as stored
        return True
    if query is None:
        return ", --query " not in reading
    return reading.endswith(f", --query {query.strip()[:100]!r}")  # the last option named


def ingest_unless_stored(
    engine: Engine,
    kind: str,
    path: Path,
    *,
    collection: str,
    system: str | None = None,
    fmt: str | None = None,
    progress: IngestProgressFactory | None = None,
    query: str | None = None,
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
    query
        Pairwise only: every row goes into this one query (``--query``).

    Returns
    -------
    IngestedInput

    Raises
    ------
    ConfigError
        The run is stored already under another system name.
    InputError
        Bad input (nothing of the file is stored).
    """
    existing = find_batch(engine, collection, kind, file_sha256(path))
    if existing is not None and not _same_query(existing.reading, query):
        existing = None  # read into another query: ingest_file refuses it, naming both readings
    if existing is not None:
        if kind == "run" and existing.system != system:
            raise ConfigError(
                f"{path}: this run is already stored as system {existing.system!r} "
                f"(batch {existing.id}), not {system!r}; fix the config or delete the batch"
            )
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
            query=query,
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
