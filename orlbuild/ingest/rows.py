"""Readers that turn numbered lines into column chunks of strings.

Three families, all streaming in chunks of :data:`CHUNK_ROWS` rows:

* delimited text with a header (``tsv``, ``csv``), parsed by the :mod:`csv`
  module (quoted fields, CRLF line endings);
* JSON Lines (one object per line), including the nested-tier listwise shape
  ``{"query": "q1", "ranking": ["d3", ["d1", "d7"], "d2"]}``;
* headerless whitespace-separated files (TREC ``qrels`` and ``trec`` runs, the
  ``prefs-release`` and ``trec-prefs`` preference shapes).

A kind may accept several *shapes* (pairwise: native, arena, ...): the header
(or the first JSON object) picks exactly one, and a header that matches none or
mixes two is an error naming the columns found and the shapes accepted. A
column no shape uses is reported in ``notes`` (or, when it looks like a typo of
an absent column, is an error): nothing the user gave is dropped silently
(docs/input-formats.md, "Input formats").

Every value comes out as a string (missing optional columns are absent, empty
cells are ``""``), each row with the number of the physical line it starts on,
so that validation can name the line of any bad value.
"""

from __future__ import annotations

import csv
import difflib
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from orlbuild.errors import InputError
from orlbuild.ingest.source import InputFormat

__all__ = [
    "CHUNK_ROWS",
    "Column",
    "ColumnChunk",
    "RecordLayout",
    "choose_layout",
    "read_chunks",
    "unused_columns",
]

#: Rows per chunk: large enough for vectorised checks, small enough to stream.
CHUNK_ROWS = 32_768


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
    lines: Iterable[str],
    fmt: InputFormat,
    layouts: RecordLayout | Sequence[RecordLayout],
    label: str,
    notes: list[str] | None = None,
) -> Iterator[ColumnChunk]:
    """Parse the lines (numbered from 1) in format ``fmt`` into chunks of one shape's columns.

    Parameters
    ----------
    lines
        The decoded lines.
    fmt
        ``tsv``, ``csv``, ``jsonl`` or a headerless format of one of the shapes.
    layouts
        The shapes the kind accepts; a header picks exactly one.
    label
        File name for messages.
    notes
        Receives warnings (columns the shape does not use, which are ignored).

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
    if fmt in (InputFormat.tsv, InputFormat.csv):
        tabular = [s for s in shapes if s.signature or len(shapes) == 1]
        chunks = _delimited_chunks(
            lines, "\t" if fmt is InputFormat.tsv else ",", tabular, label, sink
        )
    elif fmt is InputFormat.jsonl:
        tabular = [s for s in shapes if s.signature or len(shapes) == 1]
        chunks = _jsonl_chunks(lines, tabular, label, sink)
    elif fmt in headerless:
        chunks = _whitespace_chunks(lines, fmt, headerless[fmt], label)
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


def unused_columns(
    names: Sequence[str],
    layout: RecordLayout,
    layouts: Sequence[RecordLayout],
    label: str,
    line: int,
) -> list[str]:
    """Header names the shape does not use; a likely typo of an absent column is an error.

    Parameters
    ----------
    names
        The header's column names (or a JSON object's keys).
    layout
        The shape chosen for the file.
    layouts
        Every shape of the kind: their columns are the names a typo is matched against.
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
        An unknown column is a near miss of a column the shapes know that the
        header lacks (``anotator`` for ``annotator``): reading on would
        silently drop what the user meant to give.
    """
    used = layout.names()
    known = sorted(set().union(*(s.names() for s in layouts)) - set(names))
    unused = [n for n in names if n not in used]
    for name in unused:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
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


def _ignored_note(unused: Sequence[str], layout: RecordLayout, label: str) -> str:
    """The warning for columns read but not stored."""
    shown = ", ".join(repr(n) if n else "(unnamed)" for n in unused)
    return (
        f"{label}: ignored column(s) {shown}, not part of the {layout.shape} columns "
        f"({layout.describe()})"
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


def _delimited_chunks(
    lines: Iterable[str],
    delimiter: str,
    layouts: Sequence[RecordLayout],
    label: str,
    notes: list[str],
) -> Iterator[ColumnChunk]:
    """Chunks of a delimited file with a header row (csv module)."""
    reader = csv.reader(lines, delimiter=delimiter)
    try:
        header = next((row for row in reader if not _is_blank(row)), None)
        if header is None:
            raise InputError(
                "the file has no header row", file=label, line=1, hint=layouts[0].describe()
            )
        line = reader.line_num
        _looks_separated_otherwise(header, delimiter, label, line)
        names = [h.strip().lower() for h in header]
        layout = choose_layout(names, layouts, label, line)
        positions = _header_map(header, layout, label, line)
        unused = unused_columns(names, layout, layouts, label, line)
        if unused:
            notes.append(_ignored_note(unused, layout, label))
        consumed = reader.line_num
        while rows := list(itertools.islice(reader, CHUNK_ROWS)):
            starts = _row_starts(rows, consumed, reader.line_num)
            consumed = reader.line_num
            chunk = _columns_of(rows, starts, header, positions, label)
            if len(chunk):
                chunk.shape = layout.shape
                yield chunk
    except csv.Error as exc:
        raise InputError(
            f"malformed {'TSV' if delimiter == chr(9) else 'CSV'} ({exc})",
            file=label,
            line=reader.line_num,
            hint="check the quoting on this line",
        ) from None


def _row_starts(rows: list[list[str]], consumed: int, end: int) -> np.ndarray:
    """The physical line each row starts on, given the lines read before and after them.

    One line per row unless a quoted field spans lines; then each row starts
    after the line breaks inside the rows before it.
    """
    starts = np.arange(consumed + 1, consumed + 1 + len(rows), dtype=np.int64)
    if end - consumed != len(rows):
        breaks = np.fromiter(
            (sum(field.count("\n") for field in row) for row in rows), np.int64, len(rows)
        )
        starts += np.concatenate([[0], np.cumsum(breaks)[:-1]])
    return starts


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


def _jsonl_chunks(
    lines: Iterable[str], layouts: Sequence[RecordLayout], label: str, notes: list[str]
) -> Iterator[ColumnChunk]:
    """Chunks of a JSON Lines file (objects keyed by the column names of one shape).

    The first object picks the shape; later objects may not use another
    shape's keys. Keys no shape uses are reported once in ``notes``.
    """
    layout: RecordLayout | None = None
    values: dict[str, list[str]] = {}
    starts: list[int] = []
    present: set[str] = set()
    used: set[str] = set()
    foreign: set[str] = set()
    unused: list[str] = []
    for number, record in _json_objects(lines, label):
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
            found = unused_columns(sorted(record), layout, layouts, label, number)
            unused += [n for n in found if n not in unused]
        if layout.tier_list_key is not None and layout.tier_list_key in record:
            rows = _tier_list_rows(record, layout, label, number)
        else:
            rows = [_json_row(record, keys, layout, label, number)]
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
        notes.append(_ignored_note(unused, layout, label))


def _json_objects(lines: Iterable[str], label: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of every non-blank line of a JSON Lines file."""
    for number, text in enumerate(lines, start=1):
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
                hint="write one JSON object per line",
            ) from None
        if not isinstance(record, dict):
            raise InputError(
                "expected a JSON object", file=label, line=number, value=text.strip()[:80]
            )
        yield number, record


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
) -> dict[str, str]:
    """One flat JSONL object as canonical column -> string."""
    row: dict[str, str] = {}
    for column in layout.columns:
        for key in keys[column.name]:
            if key in record:
                row[column.name] = _json_text(record[key])
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
    record: dict[str, object], layout: RecordLayout, label: str, number: int
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
    base = {"query": _json_text(record["query"])}
    if "annotator" in record:
        base["annotator"] = _json_text(record["annotator"])
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
        rows.extend({**base, "item": _json_text(m), "rank": str(rank)} for m in members)
    return rows


def _whitespace_chunks(
    lines: Iterable[str], fmt: InputFormat, layout: RecordLayout, label: str
) -> Iterator[ColumnChunk]:
    """Chunks of a headerless whitespace-separated TREC file (qrels or run)."""
    names = layout.headerless_columns
    width = len(names)
    rows: list[list[str]] = []
    starts: list[int] = []
    for number, text in enumerate(lines, start=1):
        fields = text.split()
        if not fields:
            continue
        if len(fields) != width:
            raise InputError(
                f"a {'TREC ' if fmt in (InputFormat.qrels, InputFormat.trec) else ''}"
                f"{fmt.value} line needs {width} fields ({' '.join(names)}), "
                f"found {len(fields)}",
                file=label,
                line=number,
                value=text.strip(),
                hint="separate fields by whitespace; identifiers cannot contain spaces",
            )
        rows.append(fields)
        starts.append(number)
        if len(rows) >= CHUNK_ROWS:
            yield _positional_chunk(rows, starts, layout)
            rows, starts = [], []
    if rows:
        yield _positional_chunk(rows, starts, layout)


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
