"""Ingest one file: read and validate it, then store it as one batch in one transaction.

:func:`orlbuild.ingest.reading.read_input` streams and checks the file
completely; only then is it written, so any error leaves the store untouched.
Identical content already stored is reported and skipped when this reading
keeps the same rows (docs/input-formats.md, "Input formats"); read another way it is refused.
This is the one ingest module that touches the store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from sqlalchemy import Engine

from orlbuild.errors import ConfigError
from orlbuild.gc_pause import paused_gc
from orlbuild.ingest.kinds import NAME_COLUMNS, DuplicatePolicy, ScorePrecisionName
from orlbuild.ingest.reading import read_input
from orlbuild.ingest.source import InputFormat
from orlbuild.store.batches import NewBatch, store_batch
from orlbuild.store.models import NAME_LENGTH
from orlbuild.store.read import DEFAULT_COLLECTION
from orlbuild.store.users import USER_ENV_VAR, current_user

__all__ = [
    "USER_ENV_VAR",
    "IngestResult",
    "ingest_file",
    "ingest_graded_file",
    "ingest_listwise_file",
    "ingest_pairwise_file",
    "ingest_run_file",
]


@dataclass(frozen=True)
class IngestResult:
    """What an ingest did.

    Attributes
    ----------
    batch_id
        The new batch, or the existing one holding identical content.
    created
        ``False`` when the content was already stored (nothing was written).
    kind, file_name, sha256
        The input.
    rows
        Rows stored in the batch.
    dropped
        Rows not stored: identical repeated grades, or run lines dropped by
        ``--duplicates keep-first``.
    system
        The run's system (runs only).
    new_queries
        Runs only: queries the collection did not hold before this run.
    notes
        Warnings about the file (columns read but ignored).
    score_precision
        Runs only: how scores were compared to choose the line kept of a
        repeated (query, item).
    """

    batch_id: int
    created: bool
    kind: str
    file_name: str
    sha256: str
    rows: int
    dropped: int = 0
    system: str | None = None
    new_queries: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    score_precision: str | None = None

    @property
    def warnings(self) -> list[str]:
        """What the user must hear about besides the outcome (standard error)."""
        lines = list(self.notes)
        if self.new_queries:
            shown = ", ".join(repr(q) for q in self.new_queries[:5])
            more = f" and {len(self.new_queries) - 5} more" if len(self.new_queries) > 5 else ""
            lines.append(
                f"{len(self.new_queries)} queries of this run are new to the collection: "
                f"{shown}{more}; check that the run uses the judgments' query ids "
                "(they are compared exactly)"
            )
        return lines

    @property
    def message(self) -> str:
        """One line for the user."""
        if not self.created:
            owner = f", a run of system {self.system!r}" if self.system else ""
            return (
                f"{self.file_name} is already stored as batch {self.batch_id} (same content, "
                f"sha256 {self.sha256[:12]}{owner}); nothing to do"
            )
        text = f"stored {self.rows} {self.kind} rows from {self.file_name} as batch {self.batch_id}"
        if self.system:
            text += f" (system {self.system!r})"
        if self.dropped:
            text += f"; skipped {self.dropped} repeated rows"
            if self.score_precision:
                text += f" (kept the best-ordered line, scores as {self.score_precision})"
        return text


def _check_name(value: str, what: str) -> str:
    """A collection or system name: non-empty after stripping, not too long."""
    name = value.strip()
    if not name or len(name) > NAME_LENGTH:
        raise ConfigError(f"invalid {what} name {value!r}: use 1 to {NAME_LENGTH} characters")
    return name


def _reading_words(
    kind: str,
    fmt: InputFormat | None,
    duplicates: DuplicatePolicy,
    score_precision: ScorePrecisionName,
) -> str:
    """The reading options in the words of the command line, for messages."""
    words = [f"--format {fmt.value}" if fmt is not None else "detected format"]
    words.append(f"--duplicates {DuplicatePolicy(duplicates).value}")
    if kind == "run":
        words.append(f"--score-precision {ScorePrecisionName(score_precision).value}")
    return ", ".join(words)


def ingest_file(
    engine: Engine,
    kind: str,
    path: str | Path,
    *,
    collection: str = DEFAULT_COLLECTION,
    fmt: InputFormat | None = None,
    system: str | None = None,
    duplicates: DuplicatePolicy = DuplicatePolicy.error,
    stream: BinaryIO | None = None,
    on_progress: Callable[[int], None] | None = None,
    on_write: Callable[[int, int], None] | None = None,
    score_precision: ScorePrecisionName = ScorePrecisionName.float32,
) -> IngestResult:
    """Read, validate and store one file of judgments or one run (docs/input-formats.md, "Input
    formats").

    Parameters
    ----------
    engine
        A store engine at the newest schema (:func:`orlbuild.store.open_store`).
    kind
        ``listwise``, ``pairwise``, ``graded`` or ``run``.
    path
        The file, or ``-`` for standard input.
    collection
        Collection to store into (created if new).
    fmt
        Force a format instead of detecting it from the extension.
    system
        The system a run belongs to (required for runs).
    duplicates
        Runs only: a repeated (query, item) is an error, or ``keep-first``
        keeps its best-ordered occurrence.
    stream
        Read from this binary stream instead of opening ``path`` (which is
        then only the name used in messages).
    on_progress
        Called with the number of bytes read, for progress bars.
    on_write
        Called with the number of rows just written and the total, while the
        batch is written (the second phase of a progress display).
    score_precision
        Runs only: scores compared as float32 (default) or float64 when
        ``keep-first`` orders repeated lines (docs/evaluating-files.md, "Score precision").

    Returns
    -------
    IngestResult
        The batch written, or the existing batch with identical content.

    Raises
    ------
    InputError
        Bad input; the message names the file, line and value. Nothing is stored.
    """
    collection = _check_name(collection, "collection")
    if kind == "run":
        if system is None:
            raise ConfigError("ingesting a run needs the system's name: pass --system NAME")
        system = _check_name(system, "system")
    elif system is not None:
        raise ConfigError("--system applies to runs only")
    parsed = read_input(
        kind,
        path,
        fmt=fmt,
        duplicates=duplicates,
        stream=stream,
        on_progress=on_progress,
        score_precision=score_precision,
    )
    with paused_gc():
        stored = store_batch(
            engine,
            NewBatch(
                kind=kind,
                collection=collection,
                file_name=parsed.label,
                sha256=parsed.sha256,
                created_by=current_user(),
                vocabularies=parsed.vocabularies.as_lists(),
                facts=parsed.facts,
                name_columns=NAME_COLUMNS,
                system=system,
                reading_sha256=parsed.reading_sha256(),
                reading=_reading_words(kind, fmt, duplicates, score_precision),
            ),
            on_rows=None if on_write is None else _rows_written(on_write, len(parsed)),
        )
    return IngestResult(
        batch_id=stored.id,
        created=stored.created,
        kind=kind,
        file_name=parsed.label,
        sha256=parsed.sha256,
        rows=stored.row_count,
        dropped=parsed.dropped if stored.created else 0,
        system=stored.system,
        new_queries=stored.new_queries,
        notes=parsed.notes,
        score_precision=ScorePrecisionName(score_precision).value if kind == "run" else None,
    )


def _rows_written(on_write: Callable[[int, int], None], total: int) -> Callable[[int], None]:
    """Adapt a ``(rows, total)`` callback to the store's ``rows`` callback."""
    return lambda n: on_write(n, total)


def ingest_listwise_file(engine: Engine, path: str | Path, **options: object) -> IngestResult:
    """Ingest listwise judgments (``query, annotator, item, rank``); see :func:`ingest_file`."""
    return ingest_file(engine, "listwise", path, **options)  # type: ignore[arg-type]


def ingest_pairwise_file(engine: Engine, path: str | Path, **options: object) -> IngestResult:
    """Ingest pairwise preferences (``query, annotator, winner, loser, tie``)."""
    return ingest_file(engine, "pairwise", path, **options)  # type: ignore[arg-type]


def ingest_graded_file(engine: Engine, path: str | Path, **options: object) -> IngestResult:
    """Ingest graded labels (TREC qrels or ``query, annotator, item, grade``)."""
    return ingest_file(engine, "graded", path, **options)  # type: ignore[arg-type]


def ingest_run_file(
    engine: Engine, path: str | Path, *, system: str, **options: object
) -> IngestResult:
    """Ingest a system's run (TREC run or ``query, item, rank, score``)."""
    return ingest_file(engine, "run", path, system=system, **options)  # type: ignore[arg-type]
