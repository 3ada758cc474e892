"""Writing output files: never over what a command reads or stores, never half a file.

Every file orlbuild writes (``report -o``, ``orl export -o``, ``results export
-o``, ``power --plot``, the pipeline's ``[report] path``) goes through
:func:`write_output` (docs/reliability.md, "Output files"):

- a path that is, or resolves to, a protected file (the SQLite store with its
  ``-wal``/``-shm``/``-journal`` companions, an input file, the pipeline
  config) is refused with one line before anything is written;
- a directory, a missing folder or an unwritable place is a one-line error;
- the content goes to a temporary file in the target's folder, which is
  renamed over the target only once it is complete, so an interrupted or
  failed write leaves the previous file (or no file), never a truncated one.

:func:`check_output` runs the same checks without writing, so that the
commands refuse a bad path before any work starts. This module loads nothing
heavier than the standard library.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO

from orlbuild.errors import ConfigError, OrlbuildError, StoreError

__all__ = [
    "ProtectedPaths",
    "check_output",
    "keep_unstored",
    "sqlite_store_files",
    "write_output",
]

#: ``(role, path)`` pairs an output must not land on, e.g. ``("the store", Path("a.db"))``.
ProtectedPaths = Iterable[tuple[str, "str | Path"]]

#: The files an SQLite store may consist of besides the database file itself.
_SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def sqlite_store_files(url: str) -> list[Path]:
    """The files of the SQLite store at ``url`` (none for PostgreSQL or an in-memory store).

    Parameters
    ----------
    url
        A database URL (``sqlite:///a.db``, ``sqlite:///file:a.db?mode=ro&uri=true``)
        or a plain path, which means an SQLite file.

    Returns
    -------
    list of Path
        The database file and its ``-wal``, ``-shm`` and ``-journal`` companions.
    """
    if "://" in url:
        if not url.startswith("sqlite"):
            return []
        url = url.split(":///", 1)[1] if ":///" in url else ""
    path = url.split("?", 1)[0]
    if path.startswith("file:"):
        path = path[len("file:") :]
    if path in ("", ":memory:"):
        return []
    return [Path(path + suffix) for suffix in ("", *_SQLITE_COMPANIONS)]


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file (through links, ``..`` or case-folding)."""
    if a.exists() and b.exists():
        with contextlib.suppress(OSError):
            return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def check_output(path: str | Path, *, protected: ProtectedPaths = ()) -> Path:
    """Refuse an output path that would overwrite a protected file, or cannot be written.

    Parameters
    ----------
    path
        The file to write.
    protected
        ``(role, path)`` pairs the output must not be, e.g. the store, the inputs
        and the config.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    ConfigError
        ``path`` is a protected file, a directory, or in a folder that does not
        exist or cannot be written; one line naming the path and the fix.
    """
    target = Path(path)
    for role, other in protected:
        if _same_file(target, Path(other)):
            raise ConfigError(
                f"refusing to write {target}: it is {role} ({other}); choose another output path"
            )
    if target.is_dir():
        raise ConfigError(f"cannot write {target}: it is a directory; give a file path")
    folder = target.parent
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"cannot write {target}: {folder} is not a directory")
    if target.exists() and not os.access(target, os.W_OK):
        raise ConfigError(f"cannot write {target}: permission denied; choose another path")
    return target


def write_output(
    path: str | Path,
    content: str | bytes | Callable[[IO[bytes]], object],
    *,
    protected: ProtectedPaths = (),
) -> Path:
    """Write ``content`` to ``path`` through a temporary file renamed into place.

    Parameters
    ----------
    path
        The file to write; a missing parent folder is created.
    content
        Text (written as UTF-8), bytes, or a function that writes to the binary
        file it is given (e.g. a matplotlib ``savefig``).
    protected
        As in :func:`check_output`.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    ConfigError
        A refused path (:func:`check_output`) or an operating-system error
        (permission, full disk); the target is left as it was.
    """
    protected = list(protected)
    target = check_output(path, protected=protected)
    temporary: str | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=".part"
        )
        with os.fdopen(handle, "wb") as stream:
            if isinstance(content, str):
                stream.write(content.encode("utf-8"))
            elif isinstance(content, bytes):
                stream.write(content)
            else:
                content(stream)
            stream.flush()
            os.fsync(stream.fileno())
        if target.exists():  # keep the target's permissions (mkstemp makes 0600)
            os.chmod(temporary, target.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
        check_output(target, protected=protected)  # a link may have appeared meanwhile
        os.replace(temporary, target)
        temporary = None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigError(f"cannot write {target}: {reason}; choose another path") from exc
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
    return target


def keep_unstored(
    error: StoreError, what: str, content: Callable[[], str], saved: str
) -> StoreError:
    """Save a computed result the store refused to a file that the returned error names.

    A build, an override or a scored system that could not be written (after the one retry
    on a dropped connection) is not thrown away: it goes to
    ``orlbuild-unstored-WHAT-TIME-PID.json`` in the temporary folder (docs/reliability.md,
    "When the database fails").

    Parameters
    ----------
    error
        The store's one-line error.
    what
        ``build``, ``override`` or ``evaluation``: the file's name and the message's subject.
    content
        Renders the document (called only here, so a failure to render is caught too).
    saved
        What the file holds, for the message, e.g. ``its ORLs are saved in {path} (...)``.

    Returns
    -------
    StoreError
        ``error`` with ``; the WHAT was computed but not stored: SAVED``, or ``error`` itself
        when the file cannot be written either.
    """
    from datetime import datetime, timezone

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = Path(tempfile.gettempdir()) / f"orlbuild-unstored-{what}-{stamp}-{os.getpid()}.json"
    try:
        write_output(path, content())
    except OrlbuildError:
        return error
    return StoreError(f"{error}; the {what} was computed but not stored: {saved.format(path=path)}")
