"""TREC qrels and runs read from their bytes with NumPy, no Python object per line.

The fast path of ``orlbuild eval`` on TREC files (docs/performance.md,
"Speed of `orlbuild eval`"). Each file is read whole into one buffer and
split into fields by a vectorised search for whitespace, a block of lines
at a time (so the temporary arrays stay small); each id is hashed from its
bytes (read as 64-bit words) and factorised through its hash, checked
exact; ranks, grades and scores are parsed column-wise from their bytes.
One Python string is made per *distinct* id, none per line.

It reads a conservative subset of what the line-exact reader of
:mod:`orlbuild.ingest` reads, and reads it the same way; anything outside it
gives ``None`` and the caller takes the pandas path of
:mod:`orlbuild.ingest.trec_reader` (and from there, on any doubt, the
line-exact reader, whose error names the file, line and value):

- bytes: ASCII without control characters other than space, tab, line
  feed, and carriage return only before a line feed (so every separator the
  line-exact reader's ``str.split()`` knows is one of these, and a
  character is a byte);
- every non-blank line has exactly the format's number of fields and at
  most :data:`LONGEST_LINE` bytes; comment lines (first non-blank character
  ``#``) are taken out first and counted;
- ranks and grades: 1 to 10 decimal digits, at most 2**31 - 1;
- scores: an optional sign, decimal digits and at most one point, parsed
  exactly (correctly rounded, as Python's ``float``); any other spelling made
  of digits, signs, points and exponents is parsed by NumPy (the same
  correctly rounded conversion); the value must be finite;
- ids: at most :data:`NAME_LENGTH` characters.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

from scoring.batch import IdTable

__all__ = [
    "COMMENT_LINE",
    "LONGEST_LINE",
    "NAME_LENGTH",
    "ByteColumns",
    "Text",
    "read_sections",
    "read_text",
]

#: Longest identifier the store accepts (as :mod:`orlbuild.ingest.trec_reader`).
NAME_LENGTH = 512
#: Largest integer a rank or grade may take (as :mod:`orlbuild.ingest.fields`).
MAX_INTEGER = 2**31 - 1
#: Longest line read here (in bytes, its line feed included); longer ones (far
#: beyond any TREC line) are left to the pandas path, which caps line lengths.
LONGEST_LINE = 1 << 16
#: Bytes split into fields at a time (whole lines; at least :data:`LONGEST_LINE`).
_BLOCK = 1 << 20
#: A comment line (first non-blank character ``#``), with its line feed.
COMMENT_LINE = re.compile(rb"^[ \t]*#[^\n]*(?:\n|$)", re.MULTILINE)
_BOM = "\ufeff".encode()
#: Zero bytes after the content, so that an 8-byte word can be read at any field start.
_PAD = 16
#: ``_MASKS[r]`` keeps the first ``r`` bytes of a little-endian 64-bit word.
_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(9)], dtype=np.uint64)
#: Odd 64-bit constants of the id hash (its quality only matters for speed:
#: codes are checked exact).
_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F))
#: Largest integer every float64 holds exactly, and the largest exact power of ten.
_EXACT_MANTISSA = 2**53
_EXACT_POWER = 22
_POWERS = 10.0 ** np.arange(_EXACT_POWER + 1)
#: Field positions of the two TREC layouts, by number of fields.
_LAYOUTS = {
    4: {"query": 0, "item": 2, "grade": 3},  # query iteration item grade
    6: {"query": 0, "item": 2, "rank": 3, "score": 4},  # query Q0 item rank score tag
}


@dataclass(frozen=True)
class Text:
    """A file's content as :func:`read_text` reads it.

    ``buffer[:size]`` is the content (byte-order mark blanked, comment lines
    removed, a final line feed added if missing), followed by at least
    ``_PAD - 1`` zero bytes; ``comments`` comment lines were removed.
    """

    buffer: bytearray
    size: int
    comments: int


def read_text(stream: BinaryIO) -> Text:
    """The whole content of ``stream``, made ready for :func:`read_sections`.

    A regular file is read straight into the buffer (no copy); the byte-order
    mark becomes three spaces (which change no field); comment lines are
    removed and counted as :class:`orlbuild.ingest.trec_reader` counts them.

    Raises
    ------
    OSError, EOFError, zlib.error
        As reading ``stream`` raises them.
    """
    buffer = _read_padded(stream)
    size = len(buffer) - _PAD
    if buffer.startswith(_BOM):
        buffer[: len(_BOM)] = b"   "
    comments = 0
    if buffer.find(b"#", 0, size) >= 0:
        content, comments = COMMENT_LINE.subn(b"", memoryview(buffer)[:size])
        buffer = bytearray(content) + bytes(_PAD)
        size = len(content)
    if size and buffer[size - 1] != 0x0A:
        buffer[size] = 0x0A
        size += 1
    return Text(buffer, size, comments)


def _read_padded(stream: BinaryIO) -> bytearray:
    """``stream``'s bytes followed by ``_PAD`` zero bytes (a regular file read in place)."""
    if isinstance(stream, io.BufferedReader):
        try:
            expected = os.fstat(stream.fileno()).st_size - stream.tell()
        except (OSError, ValueError):
            expected = -1
        if expected >= 0:
            buffer = bytearray(expected + _PAD)
            got = stream.readinto(memoryview(buffer)[:expected])
            rest = stream.read()
            if got == expected and not rest:
                return buffer
            return bytearray(bytes(buffer[:got]) + rest) + bytes(_PAD)  # the file changed
    return bytearray(stream.read()) + bytes(_PAD)


@dataclass(frozen=True)
class ByteColumns:
    """The rows of several files read by :func:`read_sections`.

    Row ``i`` belongs to file ``sections[i]`` (rows in file order, files
    ascending). ``query_codes``/``item_codes`` index ``queries``/``items``
    (distinct ids as strings, numbered in order of first appearance over all
    rows, as ``pandas.factorize`` numbers them). ``numbers`` holds
    ``grade`` (int64) for the rows of the qrels files and ``score`` (float64)
    for the rows of the run files, in row order.
    """

    sections: np.ndarray
    query_codes: np.ndarray
    queries: np.ndarray
    item_codes: np.ndarray
    items: IdTable
    numbers: dict[str, np.ndarray]


def read_sections(sections: Sequence[tuple[Text, int]]) -> ByteColumns | None:
    """Rows of TREC qrels (4 fields) or runs (6 fields) files, ids coded over all of them.

    Parameters
    ----------
    sections
        Each file as :func:`read_text` read it, and its number of fields: 4
        (qrels: ``query iteration item grade``) or 6 (runs: ``query Q0 item
        rank score tag``).

    Returns
    -------
    ByteColumns or None
        The rows of every file (ranks are checked, not kept); ``None`` for
        anything outside the subset this reader reads (module docstring), a
        file without rows included.
    """
    ids: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {"query": [], "item": []}
    numbers: dict[str, list[np.ndarray]] = {"grade": [], "score": []}
    counts = []
    for text, _ in sections:
        if int(np.frombuffer(text.buffer, dtype=np.int8, count=text.size).min(initial=0)) < 0:
            return None  # a byte beyond ASCII: declined before any other work on any file
    for text, width in sections:
        read = _section(text, width)
        if read is None:
            return None
        for name, (words, lengths) in read[0].items():
            ids[name].append((words, lengths))
        for name, values in read[1].items():
            numbers[name].append(values)
        counts.append(len(read[0]["query"][1]))
    coded = []
    for name in ("query", "item"):
        # Items (600,000 distinct in a long-id run) stay bytes until read: no string each.
        factorized = _factorize_fields(*_stacked(ids[name]), lazy=name == "item")
        if factorized is None:
            return None
        coded.append(factorized)
    (query_codes, queries), (item_codes, items) = coded
    assert isinstance(queries, np.ndarray) and isinstance(items, IdTable)
    return ByteColumns(
        sections=np.repeat(np.arange(len(sections), dtype=np.int64), counts),
        query_codes=query_codes,
        queries=queries,
        item_codes=item_codes,
        items=items,
        numbers={
            name: np.concatenate(values) if values else np.zeros(0)
            for name, values in numbers.items()
        },
    )


def _stacked(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Field words and lengths of several files as one table (zero-padded to the widest)."""
    if len(parts) == 1:
        return parts[0]
    chunks = max(len(words) for words, _ in parts)
    out = np.zeros((chunks, sum(len(lengths) for _, lengths in parts)), dtype=np.uint64)
    at = 0
    for words, lengths in parts:
        out[: len(words), at : at + len(lengths)] = words
        at += len(lengths)
    return out, np.concatenate([lengths for _, lengths in parts])


def _section(
    text: Text, width: int
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], dict[str, np.ndarray]] | None:
    """One file's id fields (as words and lengths) and numbers, a block of lines at a time."""
    buffer, size = text.buffer, text.size
    raw = np.frombuffer(buffer, dtype=np.uint8)
    words = np.ndarray(shape=(len(buffer) - 7,), dtype="<u8", buffer=buffer, strides=(1,))
    layout = _LAYOUTS[width]
    columns: dict[str, list[np.ndarray]] = {"query": [], "item": []}
    lengths: dict[str, list[np.ndarray]] = {"query": [], "item": []}
    numbers: dict[str, list[np.ndarray]] = {"grade": [], "score": []}
    start = 0
    while start < size:
        stop = buffer.rfind(b"\n", start, min(start + _BLOCK, size)) + 1
        if stop <= start:
            return None  # a line longer than the block
        fields = _block_fields(raw[start:stop], width)
        if fields is None:
            return None
        if not len(fields[0]):  # blank lines only
            start = stop
            continue
        for name, at in layout.items():
            first, length = fields[0][:, at] + start, fields[1][:, at]
            if name in ("query", "item"):
                columns[name].append(first)
                lengths[name].append(length)
                continue
            parse = _decimals if name == "score" else _integers
            values = parse(words, first, length)
            if values is None:
                return None
            if name in numbers:  # ranks are only checked
                numbers[name].append(values)
        start = stop
    if not sum(map(len, columns["query"])):
        return None  # no rows: the other readers say what is wrong
    ids = {}
    for name in ("query", "item"):
        first = np.concatenate(columns[name])
        length = np.concatenate(lengths[name])
        if int(length.max()) > NAME_LENGTH:
            return None  # an id the store refuses: the exact reader names it
        ids[name] = (_field_words(words, first, length), length)
    return ids, {name: np.concatenate(values) for name, values in numbers.items() if values}


def _block_fields(raw: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Start offsets and lengths of the fields of whole lines, one row of ``width`` per line.

    ``raw`` ends with a line feed. ``None`` unless every byte is ASCII and
    not a control character other than a space, a tab, a line feed, or a
    carriage return before a line feed, and every non-blank line has
    ``width`` fields and at most :data:`LONGEST_LINE` bytes.
    """
    # Separators (far fewer than the bytes), and as signed bytes every non-ASCII byte too.
    if (raw == 0x7F).any():
        return None  # DEL, a control character the exact reader refuses
    blank = np.flatnonzero(raw.view(np.int8) <= 0x20)
    kinds = raw[blank]
    regular = _regular_fields(blank, kinds, width)
    if regular is not None:
        return regular
    feeds = kinds == 0x0A
    if not (feeds | (kinds == 0x20) | (kinds == 0x09) | (kinds == 0x0D)).all():
        return None  # not ASCII, or another control character (str.split() splits on some)
    returns = np.flatnonzero(kinds == 0x0D)  # never the last: raw ends with a line feed
    if len(returns) and not (feeds[returns + 1] & (blank[returns + 1] == blank[returns] + 1)).all():
        return None  # a carriage return not followed by a line feed
    if int(np.diff(blank[feeds], prepend=-1).max()) > LONGEST_LINE:
        return None  # a long line: the pandas path applies the line-length cap
    # A field lies between two separators that are not adjacent (and before the first).
    gap = np.flatnonzero(np.diff(blank) > 1)
    starts, ends = blank[gap] + 1, blank[gap + 1]
    lines = np.cumsum(feeds)[gap]
    if blank[0] > 0:
        starts = np.concatenate([[0], starts])
        ends = np.concatenate([[blank[0]], ends])
        lines = np.concatenate([[0], lines])
    if len(starts) % width:
        return None  # a line with another number of fields
    rows = lines.reshape(-1, width)
    if not ((rows[:, 0] == rows[:, -1]).all() and (np.diff(rows[:, 0]) > 0).all()):
        return None  # a row over two lines, or two on one: another number of fields
    return starts.reshape(-1, width), (ends - starts).reshape(-1, width)


def _regular_fields(
    blank: np.ndarray, kinds: np.ndarray, width: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_block_fields` of a block written the usual way, found without searching.

    Every line ``width`` fields, each followed by one space or tab (the last
    by the line feed), nothing before the first: the separators are then
    ``width`` per line, and the fields lie between them. ``None`` for any
    other block (blank lines, runs of blanks, carriage returns, other
    bytes...), which the general search reads.
    """
    if not len(blank) or len(blank) % width or blank[0] == 0:
        return None
    ends = blank.reshape(-1, width)
    kind = kinds.reshape(-1, width)
    if not (kind[:, -1] == 0x0A).all():
        return None
    inner = kind[:, :-1]
    if not ((inner == 0x20) | (inner == 0x09)).all():
        return None
    if int(np.diff(blank).min(initial=2)) < 2:
        return None  # two separators in a row: an empty line, a run of blanks
    starts = np.empty_like(ends)
    starts[:, 1:] = ends[:, :-1] + 1
    starts[0, 0] = 0
    starts[1:, 0] = ends[:-1, -1] + 1
    if int((ends[:, -1] - starts[:, 0]).max()) + 1 > LONGEST_LINE:
        return None  # a long line: the pandas path applies the line-length cap
    return starts, ends - starts


def _field_words(words: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each field's bytes as little-endian 64-bit words, zero after its end: (chunks, fields)."""
    chunks = max(1, (int(lengths.max(initial=0)) + 7) // 8)
    shortest = int(lengths.min(initial=0))
    out = np.empty((chunks, len(starts)), dtype=np.uint64)
    last = len(words) - 1
    for chunk in range(chunks):
        if shortest >= 8 * (chunk + 1):  # a whole word of every field: inside the buffer
            out[chunk] = words[starts + 8 * chunk]  # (np.take with out= is 10x slower here)
            continue
        kept = np.minimum(np.maximum(lengths - 8 * chunk, 0), 8)
        np.bitwise_and(words[np.minimum(starts + 8 * chunk, last)], _MASKS[kept], out=out[chunk])
    return out


def _factorize_fields(
    field_words: np.ndarray, lengths: np.ndarray, *, lazy: bool = False
) -> tuple[np.ndarray, np.ndarray | IdTable] | None:
    """``pandas.factorize`` of the fields' strings, computed from their bytes (same codes).

    The fields are hashed from their 64-bit words and factorised through the
    hashes; every field is then compared with the first field of its hash,
    so the codes are exact (``None`` on a 64-bit collision, or an id longer
    than :data:`NAME_LENGTH`). Strings are made only of the distinct fields;
    with ``lazy``, the distinct fields are an :class:`~scoring.batch.IdTable`
    (their bytes, strings made only for those read).
    """
    # Ids that repeat on consecutive rows (a run's query) are factorised once per block.
    change = np.empty(len(lengths), dtype=bool)
    change[0] = True
    np.not_equal(lengths[1:], lengths[:-1], out=change[1:])
    for chunk in field_words:
        change[1:] |= chunk[1:] != chunk[:-1]
    heads = np.flatnonzero(change)
    if len(heads) < len(lengths) // 2:
        coded = _factorize_words(field_words[:, heads], lengths[heads], lazy)
        if coded is None:
            return None
        codes, strings = coded
        return np.repeat(codes, np.diff(np.append(heads, len(lengths)))), strings
    return _factorize_words(field_words, lengths, lazy)


def _factorize_words(
    field_words: np.ndarray, lengths: np.ndarray, lazy: bool = False
) -> tuple[np.ndarray, np.ndarray | IdTable] | None:
    """:func:`_factorize_fields` of fields given as words and lengths."""
    hashes = lengths.astype(np.uint64) * _MIX[0]
    for chunk in field_words:
        hashes ^= chunk
        hashes *= _MIX[1]
        hashes ^= hashes >> np.uint64(29)
    codes, first = _first_appearance_codes(hashes)
    owner = first[codes]
    if not (lengths[owner] == lengths).all() or any(
        (chunk[owner] != chunk).any() for chunk in field_words
    ):
        return None  # a 64-bit hash collision: the pandas path reads the file
    if lazy:
        distinct = field_words[:, first]
        fixed = np.ascontiguousarray(distinct.T).view(f"S{8 * len(distinct)}").ravel()
        return codes, IdTable(fixed)
    return codes, _strings(field_words[:, first])


def _first_appearance_codes(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``pandas.factorize(keys)``'s codes, and the row where each distinct key first appears.

    Sorted, not hashed (NumPy sorts 64-bit keys in SIMD, and no pandas is
    loaded): the distinct keys are numbered in order of first appearance,
    as ``pandas.factorize`` numbers them.
    """
    if not len(keys):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = np.argsort(keys)  # any order within equal keys: their first row is taken below
    ordered = keys[order]
    new = np.empty(len(keys), dtype=bool)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    first = np.minimum.reduceat(order, starts)
    appearance = np.argsort(first)
    number = np.empty(len(starts), dtype=np.int64)
    number[appearance] = np.arange(len(starts), dtype=np.int64)
    codes = np.empty(len(keys), dtype=np.int64)
    codes[order] = number[np.cumsum(new) - 1]
    return codes, first[appearance].astype(np.int64, copy=False)


def _strings(field_words: np.ndarray) -> np.ndarray:
    """The fields of :func:`_field_words` as an object array of ``str``.

    Their bytes, zero-padded, with each zero made a space, decoded in one call
    and split on whitespace in C: fields hold no whitespace, and each is
    followed by at least one padding byte.
    """
    chunks, count = field_words.shape
    table = np.empty((count, chunks * 8 + 1), dtype=np.uint8)
    table[:, :-1] = np.ascontiguousarray(field_words.T).view(np.uint8).reshape(count, -1)
    table[:, -1] = 0
    np.maximum(table, 0x20, out=table)
    out = np.empty(count, dtype=object)
    out[:] = str(table.data, "ascii").split()  # decoded from the array's own buffer
    return out


def _field_bytes(words: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each field's bytes, zero after its end: (fields, width) uint8, width a multiple of 8."""
    field_words = _field_words(words, starts, lengths)
    return np.ascontiguousarray(field_words.T).view(np.uint8).reshape(len(starts), -1)


def _integers(words: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
    """Fields of 1 to 10 decimal digits as int64, ``None`` for any other or one above 2**31 - 1."""
    if int(lengths.max(initial=0)) > 10:
        return None
    table = _field_bytes(words, starts, lengths)
    values = np.zeros(len(starts), dtype=np.int64)
    for position in range(int(lengths.max(initial=0))):
        inside = position < lengths
        digit = table[:, position].astype(np.int64) - 0x30
        if ((digit[inside] < 0) | (digit[inside] > 9)).any():
            return None
        values = np.where(inside, values * 10 + digit, values)
    if (values > MAX_INTEGER).any():
        return None
    return values


def _decimals(words: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
    """Fields as float64, correctly rounded (as ``float``); ``None`` for a non-number or non-finite.

    ``[+-]digits[.digits]`` with a mantissa below 2**53 and at most 22 digits
    after the point is the exact quotient of two exact float64 values, so one
    correctly rounded division; any other field made only of digits, signs,
    points and ``e``/``E`` is converted by NumPy (correctly rounded too).
    """
    table = _field_bytes(words, starts, lengths)
    count = len(starts)
    mantissa = np.zeros(count, dtype=np.int64)
    digits = np.zeros(count, dtype=np.int64)
    after_point = np.zeros(count, dtype=np.int64)
    points = np.zeros(count, dtype=np.int64)
    other = np.zeros(count, dtype=bool)  # a byte the simple form does not have
    unusual = np.zeros(count, dtype=bool)  # a byte no number has
    negative = table[:, 0] == ord("-")
    signed = negative | (table[:, 0] == ord("+"))
    for position in range(int(lengths.max(initial=0))):
        inside = position < lengths
        byte = table[:, position]
        digit = byte.astype(np.int64) - 0x30
        is_digit = inside & (digit >= 0) & (digit <= 9)
        is_point = inside & (byte == ord("."))
        rest = inside & ~is_digit & ~is_point
        if position == 0:
            rest &= ~signed
        other |= rest
        exponent = (byte == ord("e")) | (byte == ord("E")) | (byte == ord("+")) | (byte == ord("-"))
        unusual |= rest & ~exponent
        # Digits past 18 could overflow int64: those fields are "other" below.
        mantissa = np.where(is_digit & (digits < 18), mantissa * 10 + digit, mantissa)
        digits += is_digit
        after_point += is_digit & (points > 0)
        points += is_point
    if unusual.any():
        return None  # letters, "_", ...: the pandas path (and the exact reader) decide
    simple = (
        ~other
        & (digits > 0)
        & (points <= 1)
        & (digits <= 18)
        & (mantissa < _EXACT_MANTISSA)
        & (after_point <= _EXACT_POWER)
    )
    values = mantissa.astype(np.float64) / _POWERS[np.minimum(after_point, _EXACT_POWER)]
    values = np.where(negative, -values, values)
    hard = np.flatnonzero(~simple)
    if len(hard):
        texts = np.ascontiguousarray(table[hard]).view(f"S{table.shape[1]}").ravel()
        try:
            values[hard] = texts.astype(np.float64)
        except (ValueError, OverflowError):
            return None
    if not np.isfinite(values).all():
        return None
    return values
