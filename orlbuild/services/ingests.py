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
being parsed. :func:`ingest_runs` (``orlbuild ingest run FILE...``) names every
run's system and checks every file before it stores any, then stores each with
:func:`ingest_file` (docs/input-formats.md, "System names of runs"). It and
:func:`ingest_file_interruptibly` (``orlbuild ingest KIND FILE``) show progress
bars and, stopped by Ctrl-C, raise :class:`IngestInterrupted` saying what the
store holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from orlbuild.errors import ConfigError, InputError, OrlbuildError, StoreError
from orlbuild.gc_pause import paused_gc
from orlbuild.ingest.kinds import NAME_COLUMNS
from orlbuild.ingest.reading import InputStream, read_input
from orlbuild.ingest.source import COMPRESSED_SUFFIXES, STDIN, file_sha256, input_size
from orlbuild.store.batches import (
    NewBatch,
    Provenance,
    find_batch,
    find_run_batch,
    store_batch,
)
from orlbuild.store.models import NAME_LENGTH
from orlbuild.store.read import list_batches
from orlbuild.store.users import current_user
from orlbuild.vocabulary import (
    DEFAULT_COLLECTION,
    InputFormat,
    InputKind,
    SystemNameSource,
    values,
)
from scoring.messages import first_and_more
from scoring.vocabulary import DuplicatePolicy, ScorePrecisionName

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from orlbuild.progress import IngestProgress

__all__ = [
    "FilesProgress",
    "IngestInterrupted",
    "IngestProgressFactory",
    "IngestResult",
    "IngestedInput",
    "RunFile",
    "RunsNotAllStoredError",
    "check_run_files",
    "check_runs",
    "ingest_file",
    "ingest_file_interruptibly",
    "ingest_runs",
    "ingest_unless_stored",
    "interrupted_ingest_outcome",
    "interrupted_runs_message",
    "newest_batch",
    "run_stem",
    "run_system_names",
    "runs_stored_and_not",
    "store_runs",
]

#: ``progress(size_in_bytes)`` opens the read/write progress bars of one file
#: (``None``: the size is not known, as for standard input).
IngestProgressFactory = Callable[[int | None], AbstractContextManager["IngestProgress"]]

#: ``progress(total, description)`` opens a progress bar over ``total`` files and
#: yields its ``advance(n)`` callable.
FilesProgress = Callable[[int, str], AbstractContextManager[Callable[[int], None]]]


class IngestInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped an ingest; the message says what the store holds, read after the fact.

    Still a :class:`KeyboardInterrupt`, so that callers which do not say
    anything about it stop as before.
    """


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
    query: str | None = None,
) -> str:
    """The reading options in the words of the command line, for messages."""
    words = [f"--format {fmt.value}" if fmt is not None else "detected format"]
    words.append(f"--duplicates {DuplicatePolicy(duplicates).value}")
    if kind == "run":
        words.append(f"--score-precision {ScorePrecisionName(score_precision).value}")
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
    read = InputStream(
        kind,
        path,
        fmt=fmt,
        duplicates=duplicates,
        stream=stream,
        on_progress=on_progress,
        score_precision=score_precision,
        query=query,
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
                provenance=lambda: Provenance(read.sha256, read.reading_sha256()),
                name_columns=NAME_COLUMNS,
                system=system,
                reading=_reading_words(kind, fmt, duplicates, score_precision, query),
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
        notes=tuple(read.notes),
        score_precision=ScorePrecisionName(score_precision).value if kind == "run" else None,
    )


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
    kind: InputKind,
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
) -> IngestResult:
    """:func:`ingest_file` (``orlbuild ingest KIND FILE``) with its progress bars, saying
    what Ctrl-C left in the store.

    Parameters
    ----------
    engine, kind, collection, fmt, system, duplicates, score_precision, query
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


@dataclass(frozen=True)
class RunFile:
    """One run file of ``orlbuild ingest run FILE...`` and the system it is stored for."""

    path: Path
    system: str


def run_stem(path: str | Path) -> str:
    """A run file's name without ``.gz``/``.bz2`` and its last extension (``bm25.trec.gz``:
    ``bm25``; docs/input-formats.md, "System names of runs")."""
    name = Path(path)
    if name.suffix.lower() in COMPRESSED_SUFFIXES:
        name = name.with_suffix("")
    return name.stem


def run_system_names(
    paths: Sequence[str | Path],
    *,
    system: str | None = None,
    system_from: SystemNameSource | None = None,
    fmt: InputFormat | None = None,
) -> list[RunFile]:
    """The system of each run file, every name checked before anything is stored.

    Parameters
    ----------
    paths
        Run files (standard input only as the one file named with ``system``).
    system
        ``--system``: the name of the one run.
    system_from
        ``--system-from``: each run's tag (:func:`orlbuild.ingest.run_tags.run_tag`)
        or its file's stem (:func:`run_stem`).
    fmt
        ``--format`` of the runs.

    Returns
    -------
    list of RunFile
        In the order given.

    Raises
    ------
    ConfigError
        ``system`` with more than one file, both or neither of ``system`` and
        ``system_from``, standard input without ``system``, an invalid name,
        or two files naming the same system.
    InputError
        A run with two tags (file, line and both tags), or without a tag.
    """
    from orlbuild.ingest.run_tags import run_tag

    if not paths:
        raise ConfigError("no run files given")
    words = "|".join(values(SystemNameSource))
    if system is not None and system_from is not None:
        raise ConfigError(f"give --system NAME or --system-from {words}, not both")
    if system is None and system_from is None:
        raise ConfigError(f"name the systems: --system NAME (one file) or --system-from {words}")
    if system is not None:
        if len(paths) > 1:
            raise ConfigError(
                f"--system names one run, but {len(paths)} files were given: use --system-from "
                f"{words} to name each file's system"
            )
        return [RunFile(Path(paths[0]), _check_name(system, "system"))]
    if STDIN in map(str, paths):
        raise ConfigError("standard input ('-') has no file name or second reading: pass --system")
    runs = []
    owners: dict[str, Path] = {}
    for raw in paths:
        path = Path(raw)
        if not path.is_file():
            raise InputError("no such file", file=path, hint="check the path")
        name = run_tag(path, fmt=fmt) if system_from == SystemNameSource.tag else run_stem(path)
        name = _check_name(name, f"system (the {SystemNameSource(system_from).value} of {path})")
        if name in owners:
            raise ConfigError(
                f"{owners[name]} and {path} both name system {name!r} "
                f"(--system-from {SystemNameSource(system_from).value}): one run per system and "
                "call; nothing was stored"
            )
        owners[name] = path
        runs.append(RunFile(path, name))
    return runs


def check_run_files(
    paths: Sequence[Path],
    *,
    fmt: InputFormat | None = None,
    duplicates: DuplicatePolicy = DuplicatePolicy.error,
    score_precision: ScorePrecisionName = ScorePrecisionName.float32,
    on_checked: Callable[[Path], None] | None = None,
) -> None:
    """Read and check runs as their ingest will, storing nothing (raises :class:`InputError`).

    TREC runs go through the C-speed reader, all in one pass, which accepts
    only what the exact reader accepts (:mod:`orlbuild.ingest.trec_reader`);
    a file it declines - another format, a repeated document, a suspect
    value - is read by the exact reader, whose error names the file, line and
    value. ``on_checked`` is called after each file (a progress bar).
    """
    from orlbuild.ingest.reading import input_format
    from orlbuild.ingest.trec_reader import fast_trec_frame, fast_trec_runs

    trec = [input_format(InputKind.run, path, fmt) is InputFormat.trec for path in paths]
    if all(trec) and fast_trec_runs(paths) is not None:
        for path in paths:
            if on_checked is not None:
                on_checked(path)
        return
    for path, is_trec in zip(paths, trec, strict=True):
        if not is_trec or fast_trec_frame(path, InputFormat.trec) is None:
            read_input(
                InputKind.run,
                path,
                fmt=fmt,
                duplicates=duplicates,
                score_precision=score_precision,
            )
        if on_checked is not None:
            on_checked(path)


class RunsNotAllStoredError(StoreError):
    """Storing one run of several failed after the runs before it were stored.

    The message gives the cause, then which files were stored (with their
    batches) and which were not.
    """

    def __init__(
        self, cause: BaseException, stored: Sequence[IngestResult], rest: Sequence[RunFile]
    ) -> None:
        done = [_stored_run(r.file_name, r.system, r.batch_id) for r in stored]
        super().__init__(f"{cause}; {runs_stored_and_not(done, rest)}")
        self.stored = tuple(stored)
        self.rest = tuple(rest)


def runs_stored_and_not(stored: Sequence[str], rest: Sequence[RunFile]) -> str:
    """Which runs of a stopped ``ingest run FILE...`` are in the store (``stored``: each as
    :func:`_stored_run` says it), and which are not."""
    missing = ", ".join(str(run.path) for run in rest) or "none"
    return (
        f"stored: {', '.join(stored) or 'none'}; not stored: {missing} (the same command "
        "stores the rest: stored files are skipped as already stored)"
    )


def _stored_run(file_name: str, system: str | None, batch_id: int) -> str:
    """One stored run in a message: ``a.trec (system 'a', batch 2)``."""
    return f"{file_name} (system {system!r}, batch {batch_id})"


def check_runs(
    paths: Sequence[str | Path],
    *,
    system: str | None = None,
    system_from: SystemNameSource | None = None,
    fmt: InputFormat | None = None,
    duplicates: DuplicatePolicy = DuplicatePolicy.error,
    score_precision: ScorePrecisionName = ScorePrecisionName.float32,
    on_checked: Callable[[], None] | None = None,
) -> list[RunFile]:
    """Name every run's system and check every file, storing nothing (the first half of
    :func:`ingest_runs`).

    One file is not read here: its own ingest checks it inside its one
    transaction. ``on_checked`` is called after each file (a progress bar).
    """
    runs = run_system_names(paths, system=system, system_from=system_from, fmt=fmt)
    if len(runs) > 1:
        check_run_files(
            [run.path for run in runs],
            fmt=fmt,
            duplicates=duplicates,
            score_precision=score_precision,
            on_checked=None if on_checked is None else lambda _path: on_checked(),
        )
    elif on_checked is not None:
        on_checked()
    return runs


def store_runs(
    engine: Engine,
    runs: Sequence[RunFile],
    *,
    collection: str = DEFAULT_COLLECTION,
    fmt: InputFormat | None = None,
    duplicates: DuplicatePolicy = DuplicatePolicy.error,
    score_precision: ScorePrecisionName = ScorePrecisionName.float32,
    on_stored: Callable[[IngestResult], None] | None = None,
) -> list[IngestResult]:
    """Store checked runs (:func:`check_runs`), each by :func:`ingest_file` in its own
    transaction, in order (the second half of :func:`ingest_runs`).

    ``on_stored`` is called with each file's outcome once it is committed.

    Raises
    ------
    RunsNotAllStoredError
        When one of several files fails (see :func:`ingest_runs`).
    """
    collection = _check_name(collection, "collection")
    stored: list[IngestResult] = []
    for index, run in enumerate(runs):
        try:
            result = ingest_file(
                engine,
                InputKind.run,
                run.path,
                collection=collection,
                fmt=fmt,
                system=run.system,
                duplicates=duplicates,
                score_precision=score_precision,
            )
        except OrlbuildError as exc:
            if len(runs) == 1:
                raise
            raise RunsNotAllStoredError(exc, stored, runs[index:]) from exc
        stored.append(result)
        if on_stored is not None:
            on_stored(result)
    return stored


def ingest_runs(
    engine: Engine,
    paths: Sequence[str | Path],
    *,
    collection: str = DEFAULT_COLLECTION,
    system: str | None = None,
    system_from: SystemNameSource | None = None,
    fmt: InputFormat | None = None,
    duplicates: DuplicatePolicy = DuplicatePolicy.error,
    score_precision: ScorePrecisionName = ScorePrecisionName.float32,
    progress: FilesProgress | None = None,
) -> list[IngestResult]:
    """Ingest many runs (``orlbuild ingest run FILE...``): every file checked first, then
    each stored in its own transaction (docs/input-formats.md, "System names of runs").

    Nothing is stored until every file has its system name (no two alike) and
    has been read and checked as its ingest will read it: a bad file, a run
    with two tags or two runs of one system stop the call with nothing stored
    (:func:`check_runs`). Then each run is stored by :func:`ingest_file`, one
    batch and one transaction per file, in the order given; a run already
    stored (same content, same system) is reported and skipped
    (:func:`store_runs`).

    Parameters
    ----------
    engine
        The store.
    paths
        Run files.
    collection, fmt, duplicates, score_precision
        As for :func:`ingest_file`.
    system, system_from
        How each run's system is named (:func:`run_system_names`).
    progress
        Opens a bar over the files, once as they are checked (``check runs``),
        once as they are stored (``ingest runs``).

    Returns
    -------
    list of IngestResult
        One per file, in order.

    Raises
    ------
    ConfigError, InputError
        Before anything is stored (see :func:`run_system_names`, :func:`check_run_files`).
    RunsNotAllStoredError
        One of several files failed while being stored (the store refused it,
        or the database failed): the runs before it stay stored, and the
        message names them with their batches, and the runs not stored.
    IngestInterrupted
        Ctrl-C: the message names the runs stored and the runs not stored
        (:func:`interrupted_runs_message`).
    """
    bar = progress if progress is not None else _no_bar
    try:
        with bar(len(paths), "check runs") as checked:
            runs = check_runs(
                paths,
                system=system,
                system_from=system_from,
                fmt=fmt,
                duplicates=duplicates,
                score_precision=score_precision,
                on_checked=lambda: checked(1),
            )
    except KeyboardInterrupt:
        raise IngestInterrupted("interrupted: nothing was stored") from None
    before = newest_batch(engine)
    stored: list[IngestResult] = []
    try:
        with bar(len(runs), "ingest runs") as advance:

            def done(result: IngestResult) -> None:
                stored.append(result)
                advance(1)

            store_runs(
                engine,
                runs,
                collection=collection,
                fmt=fmt,
                duplicates=duplicates,
                score_precision=score_precision,
                on_stored=done,
            )
    except KeyboardInterrupt:
        message = interrupted_runs_message(engine, before, runs, stored, collection=collection)
        raise IngestInterrupted(message) from None
    return stored


def _no_bar(_total: int, _description: str) -> AbstractContextManager[Callable[[int], None]]:
    """No progress bar."""
    return nullcontext(lambda _n: None)


def interrupted_runs_message(
    engine: Engine,
    before: int,
    runs: Sequence[RunFile],
    stored: Sequence[IngestResult],
    *,
    collection: str,
) -> str:
    """What an ``ingest run FILE...`` stopped by Ctrl-C left in the store, read from the store.

    ``stored`` are the runs reported committed; the run being stored when
    the interruption came may have committed too (:func:`interrupted_ingest_outcome`).
    """
    done = [_stored_run(r.file_name, r.system, r.batch_id) for r in stored]
    rest = list(runs[len(stored) :])
    if rest:
        landed = interrupted_ingest_outcome(
            engine, before, kind="run", collection=collection.strip(), system=rest[0].system
        )
        if landed is not None:
            done.append(_stored_run(str(rest[0].path), rest[0].system, landed[0]))
            rest = rest[1:]
    return f"interrupted: {runs_stored_and_not(done, rest)}"
