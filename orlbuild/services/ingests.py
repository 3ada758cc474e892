"""Ingest one input file: read and validate it, then store it as one batch in one transaction.

:func:`ingest_file` reads and checks the file chunk by
chunk (:class:`orlbuild.ingest.reading.InputStream`) and writes each chunk
into one open transaction, which commits only after the last line was read
and checked: any error rolls it back and leaves the store untouched, and
memory stays bounded by the chunk, not the file (docs/performance.md,
"Ingesting large vocabularies"). Identical content already stored is reported
and skipped when this reading keeps the same rows (docs/input-formats.md, "Input formats"); read
another way it is refused. :func:`ingest_unless_stored` (the pipeline's
``[[inputs]]``) looks the file's content hash up first
(:func:`orlbuild.ingest.source.file_sha256`), so a stored file is skipped without
being parsed. Many runs at once (``orlbuild ingest run FILE...``) are
:mod:`orlbuild.services.run_ingests`'s; Ctrl-C during an ingest is
:mod:`orlbuild.services.interrupted_ingests`'.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from orlbuild.errors import ConfigError, StoreError
from orlbuild.gc_pause import paused_gc
from orlbuild.ingest.column_names import column_words, parse_column_map
from orlbuild.ingest.kinds import NAME_COLUMNS
from orlbuild.ingest.reading import InputStream
from orlbuild.ingest.source import (
    file_sha256,
)
from orlbuild.store.batches import (
    NewBatch,
    Provenance,
    find_batch,
    find_run_batch,
    store_batch,
)
from orlbuild.store.engine import sqlite_file
from orlbuild.store.models import NAME_LENGTH
from orlbuild.store.schema import head_revision, upgrade
from orlbuild.store.users import current_user
from orlbuild.vocabulary import (
    DEFAULT_COLLECTION,
    InputFormat,
    InputKind,
)
from scoring.messages import first_and_more
from scoring.vocabulary import DuplicatePolicy, ScorePrecisionName

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from orlbuild.progress import IngestProgress


__all__ = [
    "IngestProgressFactory",
    "IngestResult",
    "IngestedInput",
    "check_name",
    "create_missing_store",
    "ingest_file",
    "ingest_unless_stored",
]


#: ``progress(size_in_bytes)`` opens the read/write progress bars of one file
#: (``None``: the size is not known, as for standard input).
IngestProgressFactory = Callable[[int | None], AbstractContextManager["IngestProgress"]]


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
    shape
        How the file was read (``prefs-release: qid a b winner``), named in
        the message (docs/input-formats.md, "Input formats").
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
    shape: str | None = None

    @property
    def warnings(self) -> list[str]:
        """What the user must hear about besides the outcome (standard error)."""
        lines = list(self.notes)
        if self.new_queries:
            lines.append(
                f"{len(self.new_queries)} queries of this run are new to the collection: "
                f"{first_and_more(self.new_queries)}; check that the run uses the judgments' "
                "query ids (they are compared exactly)"
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
        said = [f"system {self.system!r}"] if self.system else []
        said += [f"read as {self.shape}"] if self.shape else []
        if said:
            text += f" ({'; '.join(said)})"
        if self.dropped:
            text += f"; skipped {self.dropped} repeated rows"
            if self.score_precision:
                text += f" (kept the best-ordered line, scores as {self.score_precision})"
        return text


def create_missing_store(url: str) -> str | None:
    """Create and migrate the SQLite file ``url`` names when it does not exist (``ingest``).

    An ingest is often the first command run on a new store: a missing SQLite
    file is created (its folder must exist) and migrated to the newest schema.
    An existing store is left as it is, so one of an older schema still
    stops with the ``orlbuild db upgrade`` hint when it is opened; PostgreSQL
    databases are never created (docs/input-formats.md, "A new store").

    Parameters
    ----------
    url
        The ``--db`` URL or path.

    Returns
    -------
    str or None
        The line saying the store was created, or ``None`` when nothing was
        created.

    Raises
    ------
    StoreError
        The folder of the file does not exist, or the file cannot be created.
    """
    path = sqlite_file(url)
    if path is None or path.exists():
        return None
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise StoreError(
            f"cannot create the store {path}: there is no folder {folder} (create it first)"
        )
    try:
        path.open("xb").close()  # claimed: a concurrent first ingest finds the file
    except FileExistsError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot create the store {path}: {exc.strerror or exc}") from None
    try:
        upgrade(url)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return f"created a new SQLite store {path} (schema {head_revision()})"


def check_name(value: str, what: str) -> str:
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
    query: str | None = None,
    columns: Mapping[str, str] | None = None,
    shape: str | None = None,
) -> str:
    """The reading options in the words of the command line, for messages; with ``shape``
    (known once the file is read) the shape read, as ``batches list`` shows it."""
    words = [f"--format {fmt.value}" if fmt is not None else "detected format"]
    if shape:
        words.append(f"read as {shape}")
    words.append(f"--duplicates {DuplicatePolicy(duplicates).value}")
    if kind == "run":
        words.append(f"--score-precision {ScorePrecisionName(score_precision).value}")
    if columns:
        words.append(f"--columns {column_words(columns)}")
    if query is not None:
        words.append(f"--query {query.strip()[:100]!r}")
    return ", ".join(words)


def ingest_file(
    engine: Engine,
    kind: InputKind,
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
    query: str | None = None,
    require_answers: bool = False,
    columns: str | Mapping[str, str] | None = None,
) -> IngestResult:
    """Read, validate and store one file of judgments or one run (docs/input-formats.md,
    "Input formats").

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
    query
        Pairwise only (``--query``): every row goes into this one query (one
        leaderboard), whatever query column the file has.
    require_answers
        Pairwise only (``--require-answers``): refuse a row whose ``winner`` is
        empty instead of skipping it (docs/input-formats.md, "Partly answered
        plan files").
    columns
        ``--columns preferred=winner,other=loser`` (or the TOML table): the
        file's column names mapped onto ours (docs/input-formats.md, "Other
        column names").

    Returns
    -------
    IngestResult
        The batch written, or the existing batch with identical content.

    Raises
    ------
    InputError
        Bad input; the message names the file, line and value. Nothing is stored.
    """
    collection = check_name(collection, "collection")
    if kind == "run":
        if system is None:
            raise ConfigError("ingesting a run needs the system's name: pass --system NAME")
        system = check_name(system, "system")
    elif system is not None:
        raise ConfigError("--system applies to runs only")
    renames = parse_column_map(kind, columns)
    read = InputStream(
        kind,
        path,
        fmt=fmt,
        duplicates=duplicates,
        stream=stream,
        on_progress=on_progress,
        score_precision=score_precision,
        query=query,
        require_answers=require_answers,
        columns=renames,
    )
    with paused_gc():
        stored = store_batch(
            engine,
            NewBatch(
                kind=kind,
                collection=collection,
                file_name=read.label,
                created_by=current_user(),
                chunks=read,
                provenance=lambda: Provenance(
                    read.sha256,
                    read.reading_sha256(),
                    _reading_words(
                        kind, fmt, duplicates, score_precision, query, renames, read.shape_read
                    ),
                ),
                name_columns=NAME_COLUMNS,
                system=system,
                reading=_reading_words(kind, fmt, duplicates, score_precision, query, renames),
            ),
            on_rows=None if on_write is None else _rows_written(on_write, read),
        )
    return IngestResult(
        batch_id=stored.id,
        created=stored.created,
        kind=kind,
        file_name=read.label,
        sha256=read.sha256,
        rows=stored.row_count,
        dropped=read.dropped if stored.created else 0,
        system=stored.system,
        new_queries=stored.new_queries,
        notes=tuple(read.notes) + _system_note(system, read.label),
        score_precision=ScorePrecisionName(score_precision).value if kind == "run" else None,
        shape=read.shape_read,
    )


def _system_note(system: str | None, label: str) -> tuple[str, ...]:
    """A run's system name holding a zero-width or bidi-control character: one warning."""
    from orlbuild.ingest.characters import invisible_name_note

    note = None if system is None else invisible_name_note(system, "system", label)
    return () if note is None else (note,)


def _rows_written(on_write: Callable[[int, int], None], read: InputStream) -> Callable[[int], None]:
    """Adapt a ``(rows, total)`` callback to the store's ``rows`` callback.

    A streamed file is written while it is read: the total is the number of
    rows read so far (the whole file's once the last chunk is written).
    """
    return lambda n: on_write(n, read.rows)


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
    shape: str | None = None

    @property
    def message(self) -> str:
        """The lines for the log (the outcome, with the shape read, then any warning)."""
        what = f"{self.kind} {self.path.name}" + (f" ({self.system})" if self.system else "")
        if self.created:
            text = f"ingested {what}: {self.rows} rows as batch {self.batch_id}"
            text += f" (read as {self.shape})" if self.shape else ""
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
    kind: InputKind,
    path: Path,
    *,
    collection: str,
    system: str | None = None,
    fmt: str | None = None,
    progress: IngestProgressFactory | None = None,
    query: str | None = None,
    columns: Mapping[str, str] | None = None,
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
    columns
        The file's column names mapped onto ours (TOML ``columns``).

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
    if existing is not None and not _same_query(existing.reading, query):
        existing = None  # read into another query: ingest_file refuses it, naming both readings
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
            query=query,
            columns=columns,
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
        result.shape,
    )
