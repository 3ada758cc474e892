"""Ctrl-C during an ingest: what the store holds afterwards, read from the store after the fact.

:func:`ingest_file_interruptibly` (``orlbuild ingest KIND FILE``) runs
:func:`orlbuild.services.ingests.ingest_file` with its progress bars and, stopped by
Ctrl-C, raises :class:`IngestInterrupted` saying whether the batch was committed
(:func:`interrupted_ingest_outcome`, from :func:`newest_batch` noted before).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import nullcontext
from typing import TYPE_CHECKING

from orlbuild.ingest.source import (
    STDIN,
    input_size,
)
from orlbuild.store.read import list_batches
from orlbuild.store.users import current_user
from orlbuild.vocabulary import (
    DEFAULT_COLLECTION,
    InputFormat,
    InputKind,
)
from scoring.vocabulary import DuplicatePolicy, ScorePrecisionName

if TYPE_CHECKING:
    from sqlalchemy import Engine


from orlbuild.services.ingests import IngestProgressFactory, IngestResult, ingest_file

__all__ = [
    "IngestInterrupted",
    "ingest_file_interruptibly",
    "interrupted_ingest_outcome",
    "newest_batch",
]


class IngestInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped an ingest; the message says what the store holds, read after the fact.

    Still a :class:`KeyboardInterrupt`, so that callers which do not say
    anything about it stop as before.
    """


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


def ingest_file_interruptibly(
    engine: Engine,
    kind: InputKind,
    file: str,
    *,
    collection: str = DEFAULT_COLLECTION,
    fmt: InputFormat | None = None,
    system: str | None = None,
    duplicates: DuplicatePolicy = DuplicatePolicy.error,
    score_precision: ScorePrecisionName = ScorePrecisionName.float32,
    query: str | None = None,
    progress: IngestProgressFactory | None = None,
    require_answers: bool = False,
    columns: str | Mapping[str, str] | None = None,
) -> IngestResult:
    """:func:`ingest_file` (``orlbuild ingest KIND FILE``) with its progress bars, saying
    what Ctrl-C left in the store.

    Parameters
    ----------
    engine, kind, collection, fmt, system, duplicates, score_precision, query
        As for :func:`ingest_file`.
    require_answers, columns
        As for :func:`ingest_file`.
    file
        The file, or ``-`` for standard input.
    progress
        Opens the progress bars of the file (called with its size in bytes).

    Returns
    -------
    IngestResult

    Raises
    ------
    IngestInterrupted
        Ctrl-C: the transaction was rolled back ("nothing ... was stored"), or
        the interruption came just after the commit and the message names the
        batch (:func:`interrupted_ingest_outcome`).
    """
    before = newest_batch(engine)
    try:
        bars = progress(input_size(file)) if progress is not None else nullcontext(None)
        with bars as shown:
            return ingest_file(
                engine,
                kind,
                file,
                collection=collection,
                fmt=fmt,
                system=system,
                duplicates=duplicates,
                score_precision=score_precision,
                query=query,
                require_answers=require_answers,
                columns=columns,
                on_progress=None if shown is None else shown.read,
                on_write=None if shown is None else shown.write,
            )
    except KeyboardInterrupt:
        # Said from the store after the fact: Ctrl-C may land just after the commit.
        stored = interrupted_ingest_outcome(
            engine,
            before,
            kind=str(kind),
            collection=collection.strip(),
            system=None if system is None else system.strip(),
        )
        name = "standard input" if file == STDIN else file
        if stored is None:
            raise IngestInterrupted(f"interrupted: nothing from {name} was stored") from None
        raise IngestInterrupted(
            f"interrupted after the commit: {name} was stored as batch {stored[0]} "
            f"({stored[1]} rows)"
        ) from None
