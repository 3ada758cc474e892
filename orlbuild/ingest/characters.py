"""Characters identifiers may not hold, or hold only with a warning (docs/input-formats.md,
"Limits and refused values").

* Control characters (C0 ``U+0000``-``U+001F`` but tab, line feed and carriage
  return, which a quoted CSV field or a JSON string may hold; DEL ``U+007F``; C1
  ``U+0080``-``U+009F``) are refused in every id, by ``orlbuild ingest`` and
  ``orlbuild eval`` alike.
* Invisible format characters - zero-width spaces and joiners, bidirectional
  controls, the word joiner, a byte-order mark or soft hyphen inside an id - are
  accepted (ids are compared exactly) with a warning naming the first line, and
  a preference whose two items differ only by them is refused.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "CONTROL_CHARACTERS",
    "INVISIBLE_CHARACTERS",
    "describe",
    "invisible_name_note",
    "visible",
]

#: Control characters refused in ids.
CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

#: Zero-width and bidirectional-control characters (warned about).
INVISIBLE_CHARACTERS = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)


def visible(name: str) -> str:
    """``name`` without its invisible characters (what a reader of it sees).

    Examples
    --------
    >>> visible("d\u200b1")
    'd1'
    """
    return INVISIBLE_CHARACTERS.sub("", name)


def describe(name: str) -> str:
    """The first invisible character of ``name``, as ``U+200B ZERO WIDTH SPACE``.

    Examples
    --------
    >>> describe("d\u202e1")
    'U+202E RIGHT-TO-LEFT OVERRIDE'
    """
    found = INVISIBLE_CHARACTERS.search(name)
    if found is None:
        return ""
    char = found.group()
    return f"U+{ord(char):04X} {unicodedata.name(char, 'FORMAT CHARACTER')}"


def invisible_name_note(name: str, what: str, where: str) -> str | None:
    """The warning for a name given outside the file's rows (a run's system, from
    ``--system``, its tag or its file name) that holds an invisible character, else ``None``.

    Examples
    --------
    >>> invisible_name_note("bm\\u200b25", "system", "r.trec").endswith("it is not 'bm25'")
    True
    >>> invisible_name_note("bm25", "system", "r.trec") is None
    True
    """
    if INVISIBLE_CHARACTERS.search(name) is None:
        return None
    return (
        f"{where}: {what} {name!r} holds an invisible character ({describe(name)}); names are "
        f"compared exactly, so it is not {visible(name)!r}"
    )
