"""Readers that turn numbered lines into column chunks of strings.

Three families, all streaming in chunks of :data:`CHUNK_ROWS` rows:

* delimited text with a header, parsed by the :mod:`csv` module: ``csv`` with
  RFC 4180 quoting; ``tsv`` without quoting (a quote is data), unless every
  field of its header is quoted (a *quoted TSV*, read with the CSV rules). A
  field may not span lines: every physical data line is one row, or an error
  naming the line (docs/input-formats.md, "Quoting");
* JSON: one object per line (JSON Lines), or one array of objects (``.json``,
  as LMArena publishes battles) read as a stream, object by object; including
  the nested-tier listwise shape
  ``{"query": "q1", "ranking": ["d3", ["d1", "d7"], "d2"]}``;
* headerless whitespace-separated files (TREC ``qrels`` and ``trec`` runs, the
  ``prefs-release`` and ``trec-prefs`` preference shapes), where a line whose
  first non-blank character is ``#`` is a comment (ir_metadata headers),
  skipped and counted in one note.

A kind may accept several *shapes* (pairwise: native, arena, ...): the header
(or the first JSON object) picks exactly one, and a header that matches none or
mixes two is an error naming the columns found and the shapes accepted. A
column no shape uses is reported in ``notes`` (or, when it looks like a typo of
a column the chosen shape reads and the file lacks, is an error; a near miss of
another shape's column is reported with what it resembles): nothing the user
gave is dropped silently (docs/input-formats.md, "Input formats").

Every value comes out as a string (missing optional columns are absent, empty
cells are ``""``), each row with the number of the physical line it starts on,
so that validation can name the line of any bad value.
"""

from __future__ import annotations

import csv
import difflib
import itertools
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from orlbuild.errors import InputError
from orlbuild.ingest.source import MAX_LINE_CHARS, line_blocks, split_lines
from orlbuild.nesting import json_blocks
from orlbuild.vocabulary import InputFormat

__all__ = [
    "CHUNK_ROWS",
    "Column",
    "ColumnChunk",
    "RecordLayout",
    "choose_layout",
    "comment_note",
    "is_comment",
    "read_chunks",
    "unused_columns",
]

#: Rows per chunk: large enough for vectorised checks, small enough to stream.
CHUNK_ROWS = 32_768

#: Columns that hold identifiers (queries, items, annotators): in JSON they must be
#: strings (an integer is taken as its decimal text, with a note).
IDENTIFIER_COLUMNS = frozenset(
    {"query", "annotator", "item", "winner", "loser", "item_a", "item_b", "left", "right", "label"}
)


def is_comment(line: str) -> bool:
    """Whether a line of a whitespace-separated TREC file is a comment (first non-blank ``#``)."""
    return line.lstrip().startswith("#")


@dataclass(frozen=True)
class Column:
    """A column of a tabular or JSONL input.

    Attributes
    ----------
    name
        Canonical name (header or JSON key).
    required
        Whether the column must be present.
    aliases
        Other accepted header names (e.g. ``item_a`` for ``winner``).
    """

    name: str
    required: bool = True
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class RecordLayout:
    """The columns of one shape of input, and its headerless layout if any.

    Attributes
    ----------
    columns
        The columns of a header or JSON object (canonical names and aliases).
    headerless
        The whitespace-separated format without a header that holds this
        shape, if any; its fields are ``headerless_columns`` in order.
    tier_list_key
        JSONL key of the nested-tier listwise shape.
    shape
        Name of the shape (``native``, ``arena``, ...) when a kind has several.
    signature
        Canonical columns whose presence identifies the shape in a header.
    headerless_test
        Whether a line's whitespace-separated fields look like this headerless shape.
    """

    columns: tuple[Column, ...]
    headerless: InputFormat | None = None
    headerless_columns: tuple[str, ...] = ()
    tier_list_key: str | None = None
    shape: str = "native"
    signature: tuple[str, ...] = ()
    headerless_test: Callable[[list[str]], bool] | None = None

    def describe(self) -> str:
        """The columns as a hint, e.g. ``query, annotator (optional), item, rank``."""
        if self.headerless is not None and not self.signature:
            return f"{self.shape}: {' '.join(self.headerless_columns)} (no header)"
        return ", ".join(
            "|".join((c.name, *c.aliases)) + ("" if c.required else " (optional)")
            for c in self.columns
        )

    def names(self) -> set[str]:
        """Every header name (canonical or alias) this shape uses."""
        return {n for c in self.columns for n in (c.name, *c.aliases)} | (
            {self.tier_list_key} if self.tier_list_key else set()
        )


@dataclass
class ColumnChunk:
    """Up to :data:`CHUNK_ROWS` rows: one list of strings per present column, and their shape."""

    lines: np.ndarray
    columns: Mapping[str, Sequence[str]]
    shape: str = "native"

    def __len__(self) -> int:
        return len(self.lines)


def read_chunks(
    texts: Iterable[str],
    fmt: InputFormat,
    layouts: RecordLayout | Sequence[RecordLayout],
    label: str,
    notes: list[str] | None = None,
    columns: Mapping[str, str] | None = None,
) -> Iterator[ColumnChunk]:
    """Parse the lines (numbered from 1) in format ``fmt`` into chunks of one shape's columns.

    Parameters
    ----------
    texts
        The decoded content, in blocks cut anywhere (:meth:`Source.texts`).
    fmt
        ``tsv``, ``csv``, ``jsonl``, ``json`` or a headerless format of one of the shapes.
    layouts
        The shapes the kind accepts; a header picks exactly one.
    label
        File name for messages.
    notes
        Receives warnings (columns the shape does not use, which are ignored).
    columns
        ``--columns``: file column names (lower case) -> ours, applied to the
        header or the JSON keys before the shape is chosen; each must be in
        the file.

    Raises
    ------
    InputError
        Missing required columns, a header matching no shape or mixing shapes,
        a row with the wrong number of fields, a line that is not a JSON
        object, or a file without data rows.
    """
    shapes = (layouts,) if isinstance(layouts, RecordLayout) else tuple(layouts)
    sink = notes if notes is not None else []
    headerless = {s.headerless: s for s in shapes if s.headerless is not None}
    tabular = [s for s in shapes if s.signature or len(shapes) == 1]
    renames = dict(columns or {})
    if fmt in (InputFormat.tsv, InputFormat.csv):
        lines = split_lines(texts, label)
        chunks = _delimited_chunks(lines, fmt, tabular, label, sink, renames)
    elif fmt in (InputFormat.jsonl, InputFormat.json):
        records = _json_objects(texts, label)
        if renames:
            records = _renamed_keys(records, renames, label)
        chunks = _jsonl_chunks(records, tabular, label, sink)
    elif renames:
        raise InputError(
            "--columns applies to files with a header (TSV, CSV) or JSON keys",
            file=label,
            hint=f"this file is read as {fmt.value}, whose fields are positional",
        )
    elif fmt in headerless:
        chunks = _whitespace_chunks(line_blocks(texts, label), fmt, headerless[fmt], label, sink)
    else:
        raise InputError(
            f"format {fmt.value!r} does not hold this kind of data",
            file=label,
            hint="use tsv, csv or jsonl"
            + "".join(f" or {f.value}" for f in headerless if f is not None),
        )
    seen = 0
    for chunk in chunks:
        seen += len(chunk)
        yield chunk
    if seen == 0:
        raise InputError(
            "the file has no data rows",
            file=label,
            line=1,
            hint=f"expected {shapes[0].describe()}",
        )


def choose_layout(
    names: Sequence[str], layouts: Sequence[RecordLayout], label: str, line: int
) -> RecordLayout:
    """The one shape whose signature the header holds without another shape's columns.

    Parameters
    ----------
    names
        The header's column names (lower-cased) or the first JSON object's keys.
    layouts
        The shapes of the kind (a single one is returned as it is).
    label, line
        Where the header is, for messages.

    Returns
    -------
    RecordLayout
        The matching shape (docs/input-formats.md, "Input formats": which pairwise shape).

    Raises
    ------
    InputError
        No shape matches, or the header mixes the columns of two shapes; the
        message names the columns found and the shapes accepted.
    """
    if len(layouts) == 1:
        return layouts[0]
    present = set(names)
    matches = []
    for layout in layouts:
        own = layout.names()
        foreign = {n for other in layouts if other is not layout for n in other.names()} - own
        signed = all(
            any(n in present for n in (c.name, *c.aliases))
            for c in layout.columns
            if c.name in layout.signature
        )
        if signed and not present & foreign:
            matches.append(layout)
    if len(matches) == 1:
        return matches[0]
    accepted = "; ".join(f"{s.shape} ({s.describe()})" for s in layouts)
    touched = [
        s.shape
        for s in layouts
        if present & (s.names() - set().union(*(o.names() for o in layouts if o is not s)))
    ]
    reason = (
        f"the columns mix the {' and '.join(touched)} shapes"
        if len(touched) > 1
        else "the columns match none of the accepted shapes"
    )
    raise InputError(
        reason,
        file=label,
        line=line,
        value=", ".join(names),
        hint=f"the accepted shapes are {accepted}",
    )


def unused_columns(names: Sequence[str], layout: RecordLayout, label: str, line: int) -> list[str]:
    """Header names the shape does not use; a likely typo of a column it would read is an error.

    Parameters
    ----------
    names
        The header's column names (or a JSON object's keys).
    layout
        The shape chosen for the file.
    label, line
        Where the header is, for messages.

    Returns
    -------
    list of str
        The names to report as ignored (docs/input-formats.md, "Input formats": columns the
        shape does not use).

    Raises
    ------
    InputError
        An unknown column is a near miss of a name of a column the chosen shape
        reads and the header does not give under any of its names (``anotator``
        for ``annotator``): reading on would silently drop what the user meant
        to give. A near miss of a name the shape would not read even if it were
        spelt that way (another shape's column, such as arena's ``model_a`` in
        an evalica file, or an alias of a column the header already gives) is
        ignored and reported instead: spelt right it would not be stored
        either.
    """
    used = layout.names()
    missing = sorted(_missing_names(names, layout))
    unused = [n for n in names if n not in used]
    for name in unused:
        close = difflib.get_close_matches(name, missing, n=1, cutoff=_NEAR_MISS)
        if close:
            raise InputError(
                f"unknown column {name!r}",
                file=label,
                line=line,
                value=name,
                hint=f"did you mean {close[0]!r}? (rename the column if it is something else; "
                f"the columns are {layout.describe()})",
            )
    return unused


#: How alike (difflib's ratio) an unknown column and a known name must be to be a near miss.
_NEAR_MISS = 0.8


def _missing_names(names: Sequence[str], layout: RecordLayout) -> set[str]:
    """Every name of the shape's columns that the header gives under none of their names."""
    given = set(names)
    missing = {
        n for c in layout.columns if not given & {c.name, *c.aliases} for n in (c.name, *c.aliases)
    }
    if layout.tier_list_key and layout.tier_list_key not in given:
        missing.add(layout.tier_list_key)
    return missing


def _closest(name: str, candidates: set[str]) -> str | None:
    """The candidate most like ``name`` (at least :data:`_NEAR_MISS`; ties: the first sorted)."""
    scored = [(-difflib.SequenceMatcher(None, name, c).ratio(), c) for c in sorted(candidates)]
    best = min(scored, default=None)
    return best[1] if best is not None and -best[0] >= _NEAR_MISS else None


def _resemblance(name: str, layout: RecordLayout, layouts: Sequence[RecordLayout]) -> str | None:
    """What an ignored column looks like, when it is a near miss of a known name."""
    own = layout.names()
    close = _closest(name, own)
    if close is not None:
        column = next((c.name for c in layout.columns if close in (c.name, *c.aliases)), close)
        return f"{name!r} resembles {close!r}, but the file gives the {column!r} column already"
    for other in layouts:
        close = _closest(name, other.names() - own)
        if close is not None:
            return (
                f"{name!r} resembles {close!r} of the {other.shape} shape, which the "
                f"{layout.shape} shape does not read either"
            )
    return None


def _ignored_note(
    unused: Sequence[str], layout: RecordLayout, layouts: Sequence[RecordLayout], label: str
) -> str:
    """The warning for columns read but not stored (and what the near misses among them are)."""
    shown = ", ".join(repr(n) if n else "(unnamed)" for n in unused)
    alike = [r for r in (_resemblance(n, layout, layouts) for n in unused if n) if r]
    return (
        f"{label}: ignored column(s) {shown}, not part of the {layout.shape} columns "
        f"({layout.describe()})" + "".join(f"; {r}" for r in alike)
    )


def _looks_separated_otherwise(header: list[str], delimiter: str, label: str, line: int) -> None:
    """A one-field header holding the other delimiter means the extension is wrong."""
    if len(header) != 1:
        return
    other, name, fmt = (",", "comma", "csv") if delimiter == "\t" else ("\t", "tab", "tsv")
    if other in header[0]:
        raise InputError(
            f"the file looks {name}-separated",
            file=label,
            line=line,
            value=header[0],
            hint=f"name it .{fmt} or pass --format {fmt}",
        )


def _header_map(header: list[str], layout: RecordLayout, label: str, line: int) -> dict[str, int]:
    """Map canonical column names to header positions; complain about missing ones."""
    names = [h.strip().lower() for h in header]
    duplicated = sorted({n for n in names if names.count(n) > 1 and n})
    if duplicated:
        raise InputError(
            "duplicate column in the header",
            file=label,
            line=line,
            value=duplicated[0],
            hint="give every column a distinct name",
        )
    positions: dict[str, int] = {}
    for column in layout.columns:
        for candidate in (column.name, *column.aliases):
            if candidate in names:
                positions[column.name] = names.index(candidate)
                break
        else:
            if column.required:
                raise InputError(
                    f"missing required column {column.name!r}",
                    file=label,
                    line=line,
                    value=",".join(header),
                    hint=f"the header must name the columns {layout.describe()}",
                )
    return positions


def _is_blank(row: list[str]) -> bool:
    """A row the csv module made of an empty or whitespace-only line."""
    return not row or (len(row) == 1 and not row[0].strip())


def _renamed(header: list[str], renames: Mapping[str, str], label: str, line: int) -> list[str]:
    """The header with ``--columns`` applied; a file column it names must be there."""
    names = [h.strip().lower() for h in header]
    missing = [source for source in renames if source not in names]
    if missing:
        raise InputError(
            f"--columns names {missing[0]!r}, which is not a column of the file",
            file=label,
            line=line,
            value=",".join(header),
            hint="name the file's own columns on the left of each '='",
        )
    return [renames.get(name, original) for name, original in zip(names, header, strict=True)]


def _renamed_keys(
    records: Iterable[tuple[int, dict[str, Any]]], renames: Mapping[str, str], label: str
) -> Iterator[tuple[int, dict[str, Any]]]:
    """JSON objects with ``--columns`` applied to their keys (checked on the first object)."""
    first = True
    for number, record in records:
        if first:
            _renamed(list(record), renames, label, number)
            first = False
        yield number, {renames.get(key.strip().lower(), key): v for key, v in record.items()}


def _delimited_chunks(
    lines: Iterable[str],
    fmt: InputFormat,
    layouts: Sequence[RecordLayout],
    label: str,
    notes: list[str],
    renames: Mapping[str, str] | None = None,
) -> Iterator[ColumnChunk]:
    """Chunks of a delimited file with a header row (csv module), one row per physical line.

    CSV follows RFC 4180 quoting (strictly: text after a closing quote is an
    error). TSV has no quoting, so a ``"`` is part of the value, unless every
    header field is quoted (a quoted TSV, read with the CSV rules). A quoted
    field that runs over a line end is an error naming the line where it starts.
    """
    delimiter = "\t" if fmt is InputFormat.tsv else ","
    name = "TSV" if fmt is InputFormat.tsv else "CSV"
    stream = iter(lines)
    skipped = 0
    header_line = next(stream, None)
    while header_line is not None and not header_line.strip():
        skipped += 1
        header_line = next(stream, None)
    if header_line is None:
        raise InputError(
            "the file has no header row", file=label, line=1, hint=layouts[0].describe()
        )
    quoted = fmt is InputFormat.csv or _quoted_header(header_line)
    if fmt is InputFormat.tsv and quoted:
        name = "quoted TSV"
    dialect: dict[str, Any] = (
        {"quoting": csv.QUOTE_MINIMAL, "strict": True} if quoted else {"quoting": csv.QUOTE_NONE}
    )
    lines_in = itertools.chain([header_line], stream)
    feed = _OneRowPerLine(lines_in, label, skipped, name)
    # Unquoted, a row is one line: the lines are then taken a chunk at a time and
    # parsed by the csv module in one call (no Python call per line or row).
    reader = csv.reader(feed if quoted else lines_in, delimiter=delimiter, **dialect)
    block_reader: Any = None  # unquoted: the reader of the current chunk's lines
    line = skipped + 1
    try:
        header = next(reader)
        feed.rows = 1
        _looks_separated_otherwise(header, delimiter, label, line)
        if renames:
            header = _renamed(header, renames, label, line)
        names = [h.strip().lower() for h in header]
        layout = choose_layout(names, layouts, label, line)
        positions = _header_map(header, layout, label, line)
        unused = unused_columns(names, layout, label, line)
        if unused:
            notes.append(_ignored_note(unused, layout, layouts, label))
        if not quoted:
            feed.quoted = int('"' in header_line)
            while block := list(itertools.islice(lines_in, CHUNK_ROWS)):
                fast = _plain_columns(block, delimiter, len(header))
                if fast is not None:
                    feed.rows += len(block)
                    block = None
                    yield _fast_chunk(fast, feed.rows, skipped, positions, layout)
                    continue
                if '"' in "".join(block):
                    feed.quoted += sum('"' in text for text in block)
                block_reader = csv.reader(block, delimiter=delimiter, **dialect)
                rows = list(block_reader)
                feed.rows += len(rows)
                block_reader = block = None  # the lines are not kept while the chunk is stored
                yield from _delimited_chunk(
                    rows, feed.rows, skipped, header, positions, label, layout
                )
            if feed.quoted:
                notes.append(
                    f"{label}: {feed.quoted} line(s) hold a double quote; a TSV has no quoting, "
                    "so quotes are kept as part of the values (quote every header field to read "
                    "the file as a quoted TSV)"
                )
            return
        rows = []
        for row in reader:
            feed.rows += 1
            rows.append(row)
            if len(rows) >= CHUNK_ROWS:
                yield from _delimited_chunk(
                    rows, feed.rows, skipped, header, positions, label, layout
                )
                rows = []
        yield from _delimited_chunk(rows, feed.rows, skipped, header, positions, label, layout)
    except csv.Error as exc:
        at = reader.line_num if block_reader is None else feed.rows + block_reader.line_num
        raise InputError(
            f"malformed {name} ({exc})",
            file=label,
            line=skipped + at,
            hint="check the quoting on this line"
            + ("" if quoted else " (TSV fields are not quoted: a tab ends a field)"),
        ) from None


def _delimited_chunk(
    rows: list[list[str]],
    read: int,
    skipped: int,
    header: list[str],
    positions: dict[str, int],
    label: str,
    layout: RecordLayout,
) -> Iterator[ColumnChunk]:
    """The chunk of ``rows``, the last of the ``read`` rows (header included) after ``skipped``."""
    if not rows:
        return
    first = skipped + read - len(rows) + 1
    starts = np.arange(first, first + len(rows), dtype=np.int64)
    chunk = _columns_of(rows, starts, header, positions, label)
    if len(chunk):
        chunk.shape = layout.shape
        yield chunk


#: Characters that send a chunk of an unquoted file to the ``csv`` module's reader rather
#: than the plain split, which would read them otherwise: quotes (noted), carriage
#: returns, NULs, a byte order mark.
_NOT_PLAIN = ('"', "\r", "\x00", "\ufeff")


def _plain_columns(block: list[str], delimiter: str, width: int) -> list[list[str]] | None:
    """The columns of an unquoted chunk by one split of its text, or ``None`` when anything is off.

    Only a chunk whose every line holds exactly ``width - 1`` delimiters and
    none of :data:`_NOT_PLAIN` is taken: then each line is ``width`` fields
    and a line end, so the chunk's text with its line ends turned into
    delimiters splits, by one call in C, into the rows' fields one after the
    other, which is what the ``csv`` module reads (no blank line, no quote, no
    stray line end). Any other chunk goes to the ``csv`` module, which keeps
    the notes and names the line of an error (docs/performance.md, "Ingesting
    large vocabularies"). No parser, buffer or frame is made per chunk: only
    the text, the fields and the columns.
    """
    if width < 2:
        return None
    text = "".join(block)
    if any(char in text for char in _NOT_PLAIN):
        return None
    counts = np.fromiter(
        map(str.count, block, itertools.repeat(delimiter)), dtype=np.int64, count=len(block)
    )
    if (counts != width - 1).any():
        return None
    # Every line but perhaps the last ends with a line end: a trailing empty field
    # after it is not part of any row.
    fields = text.replace("\n", delimiter).split(delimiter)
    del text
    stop = len(block) * width
    return [fields[i:stop:width] for i in range(width)]


def _fast_chunk(
    columns: list[list[str]],
    read: int,
    skipped: int,
    positions: dict[str, int],
    layout: RecordLayout,
) -> ColumnChunk:
    """The chunk of :func:`_plain_columns`, the last of the ``read`` rows after ``skipped``."""
    count = len(columns[0])
    first = skipped + read - count + 1
    starts = np.arange(first, first + count, dtype=np.int64)
    return ColumnChunk(
        starts, {name: columns[pos] for name, pos in positions.items()}, layout.shape
    )


class _OneRowPerLine:
    """The lines for :func:`csv.reader`, refusing to continue a row onto the next line.

    The consumer counts the rows it received in ``rows``; when the reader asks
    for a line while its last row is unfinished (a quote left open), the row
    would swallow the following lines: that is an error naming the line where
    it starts, raised before the next line is read.
    """

    def __init__(self, lines: Iterable[str], label: str, skipped: int, name: str) -> None:
        self._lines = iter(lines)
        self._label, self._skipped, self._name = label, skipped, name
        self.given = 0
        self.rows = 0
        self.quoted = 0  # lines holding a double quote (noted for a plain TSV)

    def __iter__(self) -> _OneRowPerLine:
        return self

    def __next__(self) -> str:
        if self.given > self.rows:
            raise InputError(
                f"a quoted field runs over the end of the line ({self._name})",
                file=self._label,
                line=self._skipped + self.given,
                hint="close the quote on the same line; identifiers and values cannot "
                "contain line breaks",
            )
        line = next(self._lines)
        self.given += 1
        if '"' in line:
            self.quoted += 1
        return line


def _quoted_header(line: str) -> bool:
    """Whether every tab-separated field of a TSV header is enclosed in double quotes."""
    fields = [f.strip() for f in line.rstrip("\r\n").split("\t")]
    return all(len(f) >= 2 and f[0] == '"' and f[-1] == '"' for f in fields)


def _columns_of(
    rows: list[list[str]],
    starts: np.ndarray,
    header: list[str],
    positions: dict[str, int],
    label: str,
) -> ColumnChunk:
    """Drop blank rows, check every row has the header's width, transpose into columns."""
    width = len(header)
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    short = np.flatnonzero(lengths <= 1)
    if short.size:
        blank = [int(i) for i in short if _is_blank(rows[i])]
        if blank:
            keep = np.ones(len(rows), dtype=bool)
            keep[blank] = False
            rows = [row for row, kept in zip(rows, keep, strict=True) if kept]
            starts, lengths = starts[keep], lengths[keep]
    if not rows:
        return ColumnChunk(starts, {name: [] for name in positions})
    bad = np.flatnonzero(lengths != width)
    if bad.size:
        i = int(bad[0])
        raise InputError(
            f"expected {width} fields like the header, found {len(rows[i])}",
            file=label,
            line=int(starts[i]),
            value=rows[i],
            hint="quote fields that contain the separator",
        )
    transposed = list(zip(*rows, strict=True))
    values = {name: transposed[pos] for name, pos in positions.items()}
    return ColumnChunk(starts, values)


def _json_text(value: object) -> str:
    """A JSON scalar as the string a delimited file would hold."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    return json.dumps(value)


@dataclass
class _NumberIds:
    """JSON identifiers given as integers: how many, and the first (for the note)."""

    count: int = 0
    first: tuple[str, int, int] | None = None

    def note(self, label: str) -> str | None:
        """The note naming them, if any."""
        if self.first is None:
            return None
        column, line, value = self.first
        return (
            f"{label}: {self.count} identifier(s) were JSON numbers, stored as their decimal "
            f"text (first: {column} {value} on line {line})"
        )


def _json_id(value: object, column: str, label: str, line: int, numbers: _NumberIds) -> str:
    """A JSON identifier as text: a string, or an integer (counted); anything else is an error.

    A float (``1.0``, ``NaN``), a boolean or a container is refused: its text
    would not match the same id written as a string elsewhere.
    """
    if isinstance(value, str) or value is None:
        return "" if value is None else value
    if isinstance(value, int) and not isinstance(value, bool):
        numbers.count += 1
        if numbers.first is None:
            numbers.first = (column, line, value)
        return str(value)
    shown = "NaN" if isinstance(value, float) and math.isnan(value) else json.dumps(value)
    raise InputError(
        f"{column} must be a string (or an integer), found {type(value).__name__}",
        file=label,
        line=line,
        value=shown,
        hint="write identifiers as JSON strings",
    )


def _jsonl_chunks(
    records: Iterable[tuple[int, dict[str, Any]]],
    layouts: Sequence[RecordLayout],
    label: str,
    notes: list[str],
) -> Iterator[ColumnChunk]:
    """Chunks of JSON objects keyed by the column names of one shape (JSON Lines or an array).

    The first object picks the shape; later objects may not use another
    shape's keys. Keys no shape uses are reported once in ``notes``, and so
    are identifiers given as JSON integers.
    """
    layout: RecordLayout | None = None
    values: dict[str, list[str]] = {}
    starts: list[int] = []
    present: set[str] = set()
    used: set[str] = set()
    foreign: set[str] = set()
    unused: list[str] = []
    numbers = _NumberIds()
    keys: dict[str, tuple[str, ...]] = {}
    for number, record in records:
        if layout is None:
            layout = choose_layout(sorted(record), layouts, label, number)
            keys = {c.name: (c.name, *c.aliases) for c in layout.columns}
            values = {c.name: [] for c in layout.columns}
            used = layout.names()
            foreign = set().union(*(s.names() for s in layouts)) - used
        extra = record.keys() - used
        if extra & foreign:
            raise InputError(
                f"this object has keys of another shape than the first object ({layout.shape})",
                file=label,
                line=number,
                value=", ".join(sorted(extra & foreign)),
                hint=f"every object of a file needs the same shape: {layout.describe()}",
            )
        if extra - set(unused):
            found = unused_columns(sorted(record), layout, label, number)
            unused += [n for n in found if n not in unused]
        if layout.tier_list_key is not None and layout.tier_list_key in record:
            rows = _tier_list_rows(record, layout, label, number, numbers)
        else:
            rows = [_json_row(record, keys, layout, label, number, numbers)]
        for row in rows:
            present.update(row)
            for column in layout.columns:
                values[column.name].append(row.get(column.name, ""))
            starts.append(number)
        if len(starts) >= CHUNK_ROWS:
            yield _json_chunk(starts, values, present, layout)
            values = {c.name: [] for c in layout.columns}
            starts = []
    if starts and layout is not None:
        yield _json_chunk(starts, values, present, layout)
    if unused and layout is not None:
        notes.append(_ignored_note(unused, layout, layouts, label))
    number_note = numbers.note(label)
    if number_note is not None:
        notes.append(number_note)


def _json_objects(texts: Iterable[str], label: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of a JSON array of objects or of a JSON Lines file.

    The first non-blank character decides: ``[`` is an array, read object by
    object as the text arrives (the file may be one line); otherwise one
    object per line.
    """
    blocks = iter(texts)
    head = ""
    for text in blocks:
        head += text
        if head.strip():
            break
    rest = json_blocks(itertools.chain([head], blocks), label)  # depth-checked (orlbuild.nesting)
    if head.lstrip().startswith("["):
        yield from _json_array_objects(rest, label)
        return
    for number, text in enumerate(split_lines(rest, label), start=1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"not valid JSON ({exc.msg})",
                file=label,
                line=number,
                value=text.strip()[:80],
                hint="write one JSON object per line, or one array of objects",
            ) from None
        if not isinstance(record, dict):
            raise InputError(
                "expected a JSON object", file=label, line=number, value=text.strip()[:80]
            )
        yield number, record


_BLANK = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _json_array_objects(texts: Iterable[str], label: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of each element of one JSON array, streamed.

    Objects are decoded from a buffer refilled block by block; an object still
    incomplete after :data:`MAX_LINE_CHARS` characters is refused (bounded
    memory), as is anything after the closing ``]``.
    """
    blocks = iter(texts)
    buffer = ""
    pos = 0
    line = 1  # the line number at ``pos``
    ended = False

    def refill() -> bool:
        nonlocal buffer, pos, ended
        for text in blocks:
            buffer = buffer[pos:] + text
            pos = 0
            return True
        ended = True
        return False

    def skip_blank() -> None:
        nonlocal pos, line
        while True:
            blank = _BLANK.match(buffer, pos)
            assert blank is not None  # the pattern matches the empty string
            end = blank.end()
            line += buffer.count("\n", pos, end)
            pos = end
            if pos < len(buffer) or not refill():
                return

    def fail(reason: str, hint: str) -> InputError:
        return InputError(
            reason, file=label, line=line, value=buffer[pos : pos + 80].strip(), hint=hint
        )

    array_hint = "a JSON array of objects: [{...}, {...}]"
    skip_blank()
    if buffer[pos : pos + 1] != "[":  # pragma: no cover - checked by the caller
        raise fail("expected a JSON array", array_hint)
    pos += 1
    first = True
    while True:
        skip_blank()
        if ended and pos >= len(buffer):
            raise fail("the JSON array is not closed (missing ])", array_hint)
        if buffer[pos] == "]":
            pos += 1
            break
        if not first:
            if buffer[pos] != ",":
                raise fail("expected , or ] between the objects of the array", array_hint)
            pos += 1
            skip_blank()
        first = False
        while True:
            try:
                record, end = _DECODER.raw_decode(buffer, pos)
                break
            except json.JSONDecodeError as exc:
                if len(buffer) - pos > MAX_LINE_CHARS:
                    raise fail(
                        f"a JSON object longer than {MAX_LINE_CHARS:,} characters", array_hint
                    ) from None
                if not refill():
                    raise InputError(
                        f"not valid JSON ({exc.msg})",
                        file=label,
                        line=line + buffer.count("\n", pos, exc.pos),
                        value=buffer[pos : pos + 80].strip(),
                        hint=array_hint,
                    ) from None
        if not isinstance(record, dict):
            raise fail("expected a JSON object", array_hint)
        yield line, record
        line += buffer.count("\n", pos, end)
        pos = end
    skip_blank()
    if pos < len(buffer):
        raise fail("text after the end of the JSON array", "a file holds one JSON array")


def _json_chunk(
    starts: list[int], values: dict[str, list[str]], present: set[str], layout: RecordLayout
) -> ColumnChunk:
    """Keep the optional columns that occurred anywhere so far."""
    kept = {c.name: values[c.name] for c in layout.columns if c.required or c.name in present}
    return ColumnChunk(np.asarray(starts, dtype=np.int64), kept, layout.shape)


def _json_row(
    record: dict[str, object],
    keys: dict[str, tuple[str, ...]],
    layout: RecordLayout,
    label: str,
    number: int,
    numbers: _NumberIds,
) -> dict[str, str]:
    """One flat JSON object as canonical column -> string."""
    row: dict[str, str] = {}
    for column in layout.columns:
        for key in keys[column.name]:
            if key in record:
                value = record[key]
                row[column.name] = (
                    _json_id(value, key, label, number, numbers)
                    if column.name in IDENTIFIER_COLUMNS
                    else _json_text(value)
                )
                break
        else:
            if column.required:
                raise InputError(
                    f"missing required field {column.name!r}",
                    file=label,
                    line=number,
                    value=sorted(record),
                    hint=f"each object needs {layout.describe()}",
                )
    return row


def _tier_list_rows(
    record: dict[str, object], layout: RecordLayout, label: str, number: int, numbers: _NumberIds
) -> list[dict[str, str]]:
    """Expand ``{"query", "annotator", "ranking": [a, [b, c], d]}`` into item/rank rows."""
    key = layout.tier_list_key or ""
    tiers = record[key]
    if "query" not in record:
        raise InputError(
            "missing required field 'query'", file=label, line=number, value=sorted(record)
        )
    if not isinstance(tiers, list) or not tiers:
        raise InputError(
            f"{key!r} must be a non-empty list of items or lists of tied items",
            file=label,
            line=number,
            value=tiers,
        )
    base = {"query": _json_id(record["query"], "query", label, number, numbers)}
    if "annotator" in record:
        base["annotator"] = _json_id(record["annotator"], "annotator", label, number, numbers)
    rows: list[dict[str, str]] = []
    for rank, tier in enumerate(tiers, start=1):
        members = tier if isinstance(tier, list) else [tier]
        if not members or any(isinstance(m, (list, dict)) or m is None for m in members):
            raise InputError(
                "a tier must be an item or a non-empty list of items",
                file=label,
                line=number,
                value=tier,
                hint='nest at most one level: ["d3", ["d1", "d7"], "d2"]',
            )
        rows.extend(
            {**base, "item": _json_id(m, "item", label, number, numbers), "rank": str(rank)}
            for m in members
        )
    return rows


def _whitespace_chunks(
    blocks: Iterable[list[str]],
    fmt: InputFormat,
    layout: RecordLayout,
    label: str,
    notes: list[str],
) -> Iterator[ColumnChunk]:
    """Chunks of a headerless whitespace-separated TREC file; ``#`` lines are comments.

    ``blocks`` are lists of physical lines (:func:`~orlbuild.ingest.source.line_blocks`).
    A block whose every line has the layout's width and none starts a comment is
    taken whole (the common case, with no Python work per line beyond the
    split); any other block is read line by line, so that a comment is counted
    and a bad line is named exactly as before.
    """
    names = layout.headerless_columns
    width = len(names)
    rows: list[list[str]] = []
    starts: list[int] = []
    comments = 0
    number = 0
    for block in blocks:
        fields = [text.split() for text in block]
        if set(map(len, fields)) == {width} and not any(f[0].startswith("#") for f in fields):
            rows.extend(fields)
            starts.extend(range(number + 1, number + 1 + len(block)))
            number += len(block)
        else:
            for text, line_fields in zip(block, fields, strict=True):
                number += 1
                if not line_fields:
                    continue
                if line_fields[0].startswith("#"):
                    comments += 1
                    continue
                if len(line_fields) != width:
                    raise InputError(
                        f"a {'TREC ' if fmt in (InputFormat.qrels, InputFormat.trec) else ''}"
                        f"{fmt.value} line needs {width} fields ({' '.join(names)}), "
                        f"found {len(line_fields)}",
                        file=label,
                        line=number,
                        value=text.strip(),
                        hint="separate fields by whitespace; identifiers cannot contain spaces",
                    )
                rows.append(line_fields)
                starts.append(number)
        while len(rows) >= CHUNK_ROWS:
            yield _positional_chunk(rows[:CHUNK_ROWS], starts[:CHUNK_ROWS], layout)
            del rows[:CHUNK_ROWS], starts[:CHUNK_ROWS]
    if rows:
        yield _positional_chunk(rows, starts, layout)
    if comments:
        notes.append(comment_note(label, comments))


def comment_note(label: str, comments: int) -> str:
    """The one note about the comment lines of a whitespace-separated file."""
    return f"{label}: skipped {comments} comment line(s) starting with '#'"


def _positional_chunk(
    rows: list[list[str]], starts: list[int], layout: RecordLayout
) -> ColumnChunk:
    """Columns of a headerless chunk, keeping only those the layout knows."""
    transposed = list(zip(*rows, strict=True))
    known = {c.name for c in layout.columns}
    values = {
        name: list(transposed[i])
        for i, name in enumerate(layout.headerless_columns)
        if name in known
    }
    return ColumnChunk(np.asarray(starts, dtype=np.int64), values, layout.shape)
