"""The one exception family of orlbuild.

Library code raises :class:`OrlbuildError` (or a subclass) for every problem a
user can cause; only the command line turns it into exit code 1. The pure
:mod:`scoring` package cannot import this module, so it raises
:class:`scoring.errors.ScoringError` (a ``ValueError``); the CLI handles both.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "BuildError",
    "ConfigError",
    "InputError",
    "OrlbuildError",
    "SchemaOutOfDateError",
    "StoreError",
]


class OrlbuildError(Exception):
    """Base class of every user-facing orlbuild error."""


class InputError(OrlbuildError):
    """A bad input file, row or value.

    The message always names the file, the line and the offending value when
    they are known, so that the one-line CLI message is enough to fix it.

    Parameters
    ----------
    message
        What is wrong, e.g. ``"rank must be an integer >= 1"``.
    file
        The file being read (``"-"`` or ``"<stdin>"`` for standard input).
    line
        1-based physical line number in ``file``.
    value
        The offending value, quoted in the message with ``repr``.
    hint
        What the user can do about it.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        value: object = None,
        hint: str | None = None,
    ) -> None:
        self.reason = message
        self.file = None if file is None else str(file)
        self.line = line
        self.value = value
        self.hint = hint
        super().__init__(self._format())

    def _format(self) -> str:
        where = ""
        if self.file is not None:
            where = self.file if self.line is None else f"{self.file}, line {self.line}"
            where += ": "
        text = where + self.reason
        if self.value is not None:
            text += f" (got {self.value!r})"
        if self.hint:
            text += f"; {self.hint}"
        return " ".join(text.split())  # always one line


class ConfigError(OrlbuildError):
    """An invalid configuration file or option combination."""


class StoreError(OrlbuildError):
    """A problem with the database (unreachable, missing object, refused change)."""


class SchemaOutOfDateError(StoreError):
    """The database is not at the latest migration; run ``orlbuild db upgrade``."""


class BuildError(OrlbuildError):
    """An ORL build failed for one or more queries."""
