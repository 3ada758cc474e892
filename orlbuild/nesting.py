"""How deeply JSON and TOML inputs may nest, checked without recursion before they are parsed.

Python's ``json`` and ``tomllib`` parsers recurse once per level of nesting, so a file
of 200,000 ``[`` (JSON) or 100,000 (TOML) ends in a ``RecursionError`` traceback. No
orlbuild input nests beyond a few levels (an ORL export: 3), so every JSON input (the
JSON and JSON Lines ingest shapes, a JSON array of objects, ``eval``'s ORL JSON) and the
pipeline TOML are refused, in one line naming the file and the line, when they nest
deeper than :data:`MAX_DEPTH` levels (docs/reliability.md, "Limits").

:class:`JsonDepth` scans JSON text block by block with NumPy (strings, escapes and the
state between blocks included), so a large ingest pays a few milliseconds per MiB;
TOML configs are small and are scanned token by token.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from orlbuild.errors import ConfigError, InputError

__all__ = ["MAX_DEPTH", "JsonDepth", "checked_json_text", "checked_toml_text", "json_blocks"]

#: The deepest nesting of arrays and objects (tables) accepted in a JSON or TOML input.
MAX_DEPTH = 100

_HINT = f"orlbuild inputs nest a few levels; at most {MAX_DEPTH} are accepted"


class JsonDepth:
    """The nesting depth of a JSON text fed in consecutive blocks; refuses deeper than a limit.

    Parameters
    ----------
    label
        The file, for messages.
    limit
        The deepest nesting accepted.
    """

    def __init__(self, label: str, limit: int = MAX_DEPTH) -> None:
        self.label = label
        self.limit = limit
        self.depth = 0
        self.in_string = False
        self.backslashes = 0  # backslashes ending the text fed so far
        self.line = 1

    def feed(self, text: str) -> None:
        """Scan the next block of the text.

        Raises
        ------
        InputError
            The nesting goes deeper than ``limit``: names the file and the line.
        """
        import numpy as np

        data = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
        n = len(data)
        if not n:
            return
        index = np.arange(n)
        slash = data == 92
        last_other = np.maximum.accumulate(np.where(slash, -1, index))
        run = index - last_other  # backslashes ending at each position
        run = np.where(last_other < 0, run + self.backslashes, run)
        before = np.empty(n, dtype=np.int64)
        before[0] = self.backslashes
        before[1:] = run[:-1]
        quote = (data == 34) & (before % 2 == 0)
        toggles = np.cumsum(quote) + int(self.in_string)
        outside = (toggles % 2 == 0) & ~quote
        step = np.zeros(n, dtype=np.int64)
        step[outside & ((data == 91) | (data == 123))] = 1
        step[outside & ((data == 93) | (data == 125))] = -1
        depth = self.depth + np.cumsum(step)
        if int(depth.max()) > self.limit:
            at = int(np.argmax(depth > self.limit))
            line = self.line + int(np.count_nonzero(data[:at] == 10))
            raise InputError(
                f"JSON nested deeper than {self.limit} levels", file=self.label, line=line,
                hint=_HINT,
            )  # fmt: skip
        self.depth = int(depth[-1])
        self.in_string = bool(toggles[-1] % 2)
        self.backslashes = int(run[-1])
        self.line += int(np.count_nonzero(data == 10))


def json_blocks(blocks: Iterable[str], label: str, limit: int = MAX_DEPTH) -> Iterator[str]:
    """``blocks`` of a JSON or JSON Lines text, each passed on once :class:`JsonDepth` checked it.

    Raises
    ------
    InputError
        From :meth:`JsonDepth.feed`, before the parser sees the block that goes too deep.
    """
    scanner = JsonDepth(label, limit)
    for block in blocks:
        scanner.feed(block)
        yield block


def checked_json_text(text: str, label: str, limit: int = MAX_DEPTH) -> str:
    """``text`` (one whole JSON document), once checked by :class:`JsonDepth`.

    Raises
    ------
    InputError
        The document nests deeper than ``limit``.
    """
    if text.count("[") + text.count("{") > limit:
        JsonDepth(label, limit).feed(text)
    return text


#: The TOML tokens that matter for nesting: strings and comments (skipped), table headers
#: at the start of a line (not nesting), and the brackets of arrays and inline tables.
_TOML_TOKENS = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*'
    r"|^[ \t]*\[\[?[^\[\]\n]*\]\]?|[\[\]{}]|\n",
    re.MULTILINE,
)


def checked_toml_text(text: str, label: str, limit: int = MAX_DEPTH) -> str:
    """``text`` (a TOML document), once its arrays and inline tables are checked to nest at
    most ``limit`` levels.

    Raises
    ------
    ConfigError
        ``LABEL, line N: TOML nested deeper than LIMIT levels``.
    """
    if text.count("[") + text.count("{") <= limit:
        return text
    depth, line = 0, 1
    for token in _TOML_TOKENS.finditer(text):
        value = token.group()
        if value == "\n":
            line += 1
        elif value in ("[", "{"):
            depth += 1
            if depth > limit:
                raise ConfigError(f"{label}, line {line}: TOML nested deeper than {limit} levels")
        elif value in ("]", "}"):
            depth -= 1
        else:
            line += value.count("\n")
    return text
