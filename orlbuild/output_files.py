"""Writing output files: never over what a command reads or stores, never half a file.

Every file orlbuild writes (``report -o``, ``orl export -o``, ``results export
-o``, ``power --plot``, the pipeline's ``[report] path``) goes through
:func:`write_output` (docs/reliability.md, "Output files"):

- only regular files are written: a directory, a device (``/dev/null``), a
  FIFO or a socket is refused with one line, also behind a symbolic link;
- a symbolic link to a regular file (or to a file yet to be made) is written
  through: the file it points to is replaced, the link stays;
- a path that is, or resolves to, a protected file (the SQLite store with its
  ``-wal``/``-shm``/``-journal`` companions, an input file, the pipeline
  config) is refused with one line before anything is written; so is a file a
  stored batch was read from (:class:`StoredInput`), matched by its path or by
  its content (SHA-256), unless the caller lets it through (``--force``);
- a missing folder is created, an unwritable place is a one-line error;
- the content goes to a temporary file in the target's folder, which is
  renamed over the target only once it is complete, so an interrupted or
  failed write leaves the previous file (or no file), never a truncated one.

:func:`check_output` runs the same checks without writing, so that the
commands refuse a bad path before any work starts. This module loads nothing
heavier than the standard library.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from orlbuild.errors import ConfigError, OrlbuildError, StoreError

__all__ = [
    "ProtectedPaths",
    "StoredInput",
    "check_output",
    "input_matches",
    "keep_unstored",
    "sqlite_store_files",
    "write_output",
]


@dataclass(frozen=True)
class StoredInput:
    """A file a stored batch was read from: an output must be neither it nor a copy of it.

    Attributes
    ----------
    role
        How messages name it, e.g. ``the input of batch 3 (pairwise)``.
    path
        The file name the batch recorded (relative names are taken from the
        current folder).
    sha256
        The batch's content hash.
    derive
        For a run batch stored under a key derived from the content hash (a
        second system's copy of one file), the function from a file's SHA-256
        to that key; ``None`` otherwise.
    """

    role: str
    path: str
    sha256: str
    derive: Callable[[str], str] | None = None

    def same_content(self, digest: str) -> bool:
        """Whether a file of SHA-256 ``digest`` holds this batch's content."""
        return digest == self.sha256 or (
            self.derive is not None and self.derive(digest) == self.sha256
        )


#: ``(role, path)`` pairs an output must not land on, e.g. ``("the store", Path("a.db"))``,
#: and the :class:`StoredInput` files it must not overwrite.
ProtectedPaths = Iterable["tuple[str, str | Path] | StoredInput"]

#: What each non-regular kind of file is called in messages.
_KINDS = (
    (stat.S_ISDIR, "a directory; give a file path"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)

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


def _file_sha256(path: Path) -> str | None:
    """SHA-256 of a regular file's bytes (``None`` when it is missing or unreadable)."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def input_matches(path: str | Path, protected: ProtectedPaths) -> list[str]:
    """The stored inputs among ``protected`` that ``path`` is, by path or by content.

    Parameters
    ----------
    path
        The output file.
    protected
        As in :func:`check_output`; only its :class:`StoredInput` entries are looked at.

    Returns
    -------
    list of str
        ``ROLE (FILE)`` or ``ROLE (FILE; same content)`` for each match, in order.
    """
    target = Path(path)
    inputs = [entry for entry in protected if isinstance(entry, StoredInput)]
    if not inputs:
        return []
    digest = _file_sha256(target) if target.is_file() else None
    found: list[str] = []
    for entry in inputs:
        if entry.path != "<stdin>" and _same_file(target, Path(entry.path)):
            found.append(f"{entry.role} ({entry.path})")
        elif digest is not None and entry.same_content(digest):
            found.append(f"{entry.role} ({entry.path}; same content)")
    return found


def _final(target: Path) -> Path:
    """The file a write of ``target`` replaces: the end of its symbolic links, else itself."""
    return Path(os.path.realpath(target)) if target.is_symlink() else target


def check_output(path: str | Path, *, protected: ProtectedPaths = ()) -> Path:
    """Refuse an output path that would overwrite a protected file, or cannot be written.

    Parameters
    ----------
    path
        The file to write.
    protected
        ``(role, path)`` pairs the output must not be, e.g. the store, the inputs
        and the config, and :class:`StoredInput` files it must not be by path or content.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    ConfigError
        ``path`` is a protected file, not a regular file (a directory, device,
        FIFO or socket), or in a folder that does not exist or cannot be
        written; one line naming the path and the fix.
    """
    target = Path(path)
    protected = list(protected)
    for entry in protected:
        if isinstance(entry, StoredInput):
            continue
        role, other = entry
        if _same_file(target, Path(other)):
            raise ConfigError(
                f"refusing to write {target}: it is {role} ({other}); choose another output path"
            )
    final = _final(target)
    with contextlib.suppress(OSError):
        mode = os.stat(final).st_mode
        for test, kind in _KINDS:
            if test(mode):
                via = f" (through the link {target})" if final != target else ""
                if test is stat.S_ISDIR:
                    raise ConfigError(f"cannot write {target}: it is {kind}{via}")
                raise ConfigError(
                    f"refusing to write {final}{via}: it is {kind}, not a regular file; "
                    "give a file path"
                )
    matches = input_matches(target, protected)
    if matches:
        raise ConfigError(
            f"refusing to write {target}: it is {matches[0]}; choose another output path "
            "or pass --force to overwrite it"
        )
    folder = final.parent
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
    check_output(path, protected=protected)
    target = _final(Path(path))  # a link is written through: the file it names is replaced
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
        check_output(path, protected=protected)  # a link may have appeared meanwhile
        if _final(Path(path)) != target:
            raise ConfigError(f"cannot write {path}: it changed while being written; try again")
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
