"""``orlbuild ingest run FILE...``: every run's system named and every file checked before any
is stored, then each stored in its own transaction (docs/input-formats.md, "System names of runs").

:func:`ingest_runs` shows a progress bar over the files and, stopped by Ctrl-C,
raises :class:`~orlbuild.services.interrupted_ingests.IngestInterrupted` naming the
runs stored and those not (:func:`interrupted_runs_message`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from orlbuild.errors import ConfigError, OrlbuildError, StoreError
from orlbuild.ingest.column_names import parse_column_map
from orlbuild.ingest.reading import read_input
from orlbuild.ingest.source import (
    STDIN,
    require_regular_file,
)
from orlbuild.vocabulary import (
    DEFAULT_COLLECTION,
    InputFormat,
    InputKind,
    SystemNameSource,
    values,
)
from scoring.vocabulary import DuplicatePolicy, ScorePrecisionName

if TYPE_CHECKING:
    from sqlalchemy import Engine


from orlbuild.services.ingests import IngestResult, check_name, ingest_file
from orlbuild.services.interrupted_ingests import (
    IngestInterrupted,
    interrupted_ingest_outcome,
    newest_batch,
)

__all__ = [
    "FilesProgress",
    "RunFile",
    "RunsNotAllStoredError",
    "check_run_files",
    "check_runs",
    "ingest_runs",
    "interrupted_runs_message",
    "run_system_names",
    "runs_stored_and_not",
    "store_runs",
]


#: ``progress(total, description)`` opens a progress bar over ``total`` files and
#: yields its ``advance(n)`` callable.
FilesProgress = Callable[[int, str], AbstractContextManager[Callable[[int], None]]]


@dataclass(frozen=True)
class RunFile:
    """One run file of ``orlbuild ingest run FILE...`` and the system it is stored for."""

    path: Path
    system: str


def run_system_names(
    paths: Sequence[str | Path],
    *,
    system: str | None = None,
    system_from: SystemNameSource | None = None,
    fmt: InputFormat | None = None,
    columns: Mapping[str, str] | None = None,
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
        or its file's stem (:func:`orlbuild.ingest.run_names.run_stem`).
    fmt
        ``--format`` of the runs.
    columns
        ``--columns`` of the runs, parsed (:func:`~orlbuild.ingest.column_names.parse_column_map`):
        a tabular run's tag may come from a column named otherwise.

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
    from orlbuild.ingest.run_names import run_stem
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
        return [RunFile(Path(paths[0]), check_name(system, "system"))]
    if STDIN in map(str, paths):
        raise ConfigError("standard input ('-') has no file name or second reading: pass --system")
    runs = []
    owners: dict[str, Path] = {}
    for raw in paths:
        path = Path(raw)
        require_regular_file(path, str(path))
        name = (
            run_tag(path, fmt=fmt, columns=columns)
            if system_from == SystemNameSource.tag
            else run_stem(path)
        )
        name = check_name(name, f"system (the {SystemNameSource(system_from).value} of {path})")
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
    columns: Mapping[str, str] | None = None,
) -> None:
    """Read and check runs as their ingest will, storing nothing (raises :class:`InputError`).

    TREC runs go through the C-speed reader, all in one pass, which accepts
    only what the exact reader accepts (:mod:`orlbuild.ingest.trec_reader`);
    a file it declines - another format, a repeated document, a suspect
    value - is read by the exact reader, whose error names the file, line and
    value. ``on_checked`` is called after each file (a progress bar). ``columns``
    (``--columns``, parsed) renames a tabular run's columns, as its ingest will.
    """
    from orlbuild.ingest.reading import input_format
    from orlbuild.ingest.trec_reader import fast_trec_frame, fast_trec_runs

    trec = [input_format(InputKind.run, path, fmt) is InputFormat.trec for path in paths]
    if all(trec) and not columns and fast_trec_runs(paths) is not None:
        for path in paths:
            if on_checked is not None:
                on_checked(path)
        return
    for path, is_trec in zip(paths, trec, strict=True):
        if not is_trec or columns or fast_trec_frame(path, InputFormat.trec) is None:
            read_input(
                InputKind.run,
                path,
                fmt=fmt,
                duplicates=duplicates,
                score_precision=score_precision,
                columns=columns,
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
    columns: str | Mapping[str, str] | None = None,
) -> list[RunFile]:
    """Name every run's system and check every file, storing nothing (the first half of
    :func:`ingest_runs`).

    One file is not read here: its own ingest checks it inside its one
    transaction. ``on_checked`` is called after each file (a progress bar);
    ``columns`` is ``--columns`` (docs/input-formats.md, "Other column names").
    """
    renames = parse_column_map(InputKind.run, columns)
    runs = run_system_names(paths, system=system, system_from=system_from, fmt=fmt, columns=renames)
    if len(runs) > 1:
        check_run_files(
            [run.path for run in runs],
            fmt=fmt,
            duplicates=duplicates,
            score_precision=score_precision,
            on_checked=None if on_checked is None else lambda _path: on_checked(),
            columns=renames,
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
    columns: str | Mapping[str, str] | None = None,
) -> list[IngestResult]:
    """Store checked runs (:func:`check_runs`), each by :func:`ingest_file` in its own
    transaction, in order (the second half of :func:`ingest_runs`).

    ``on_stored`` is called with each file's outcome once it is committed; ``columns``
    (``--columns``) is passed to each file's ingest.

    Raises
    ------
    RunsNotAllStoredError
        When one of several files fails (see :func:`ingest_runs`).
    """
    collection = check_name(collection, "collection")
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
                columns=columns,
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
    columns: str | Mapping[str, str] | None = None,
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
    collection, fmt, duplicates, score_precision, columns
        As for :func:`ingest_file` (``columns`` applies to every file, and a run's
        tag under ``--system-from tag`` is read through it).
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
                columns=columns,
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
                columns=columns,
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
