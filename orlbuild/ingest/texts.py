"""Reading query and item text files: MS MARCO TSV, BEIR and Pyserini JSON Lines, TREC topics.

The shapes of docs/input-formats.md, "Query and item text", gzip or bz2
compressed or not (:func:`orlbuild.ingest.source.open_input`):

- ``tsv``: ``id<TAB>text`` (MS MARCO's ``collection.tsv`` and ``queries.tsv``);
- ``title-tsv``: ``id<TAB>title<TAB>text`` for items, ``id<TAB>text<TAB>description``
  for queries;
- ``jsonl``: one object a line, the id under ``_id``, ``id``, ``doc_id``,
  ``docid``, ``query_id`` or ``qid``, the text under ``text``, ``contents``,
  ``body`` (or ``query`` / ``title`` for queries), with ``title``, ``url``,
  ``description`` and ``narrative`` when given;
- ``trec-topics``: ``<top> <num> <title> <desc> <narr> </top>`` blocks; the
  title is the query text, the description and narrative are kept.

A reader given the names the collection holds (``wanted``) keeps only their
records. For the two TSV shapes it never decodes a skipped line: each block of
about a megabyte is searched for its line ids as bytes, the ids are
intersected with the wanted set, and only the lines of the ids found are
located, decoded and checked (bounded memory: one block and the kept records).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import queue
import re
import sys
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, cast

from orlbuild.errors import InputError
from orlbuild.ingest.characters import invisible_name_note
from orlbuild.ingest.source import (
    BLOCK_BYTES,
    MAX_LINE_CHARS,
    STDIN,
    open_input,
    require_regular_file,
)
from orlbuild.vocabulary import TextFormat, TextOf

__all__ = [
    "ID_KEYS",
    "NAME_MAX",
    "TextCounts",
    "TextReader",
    "TextRecord",
    "sniff_text_format",
]

#: Longest query or item id (the store's name columns).
NAME_MAX = 512

#: JSON keys that hold the id, in the order they are looked up.
ID_KEYS = ("_id", "id", "doc_id", "docid", "query_id", "qid")
#: JSON keys of an item's text, then of a query's.
_ITEM_TEXT_KEYS = ("text", "contents", "body")
_QUERY_TEXT_KEYS = ("text", "query", "contents", "body", "title")

#: Records handed on at a time.
CHUNK_RECORDS = 10_000

#: A line's id, as bytes: what follows a newline up to a tab or the line's end.
_LINE_ID = re.compile(rb"\n([^\t\n]*)")
#: What follows a line's id: its tab, or the end of a line that has no other field.
_ID_ENDS = (b"\t", b"\n")

#: The value under an id key of a JSON object, as bytes (a superset: nested keys count too).
_ID_KEY = rb'"(?:_id|id|doc_id|docid|query_id|qid)"\s*:\s*'
_JSON_ID_VALUE = re.compile(_ID_KEY + rb'"?([^"\\,}\s]*)')
#: An id value written with a backslash escape (its bytes are not the id's).
_JSON_ID_ESCAPED = re.compile(_ID_KEY + rb'"[^"\\]*\\')

#: Bytes of JSON lines checked at once for a wanted id (about 80 passages of MS MARCO).
_JSON_PART_BYTES = 1 << 15

#: First-row words that make it a header rather than a record.
_HEADER_IDS = frozenset({"id", "_id", "docid", "doc_id", "pid", "qid", "query_id", "passage_id"})
_HEADER_WORDS = frozenset(
    {"text", "title", "contents", "body", "query", "passage", "url", "description"}
)

_BOM = b"\xef\xbb\xbf"
_GZIP_MAGIC = b"\x1f\x8b"
_BZ2_MAGIC = b"BZh"
#: zlib's window bits for gzip framing.
_GZIP_WBITS = 16 + zlib.MAX_WBITS
#: Compressed (or plain) bytes read from the file at a time.
_RAW_BYTES = 1 << 18
_SNIFF_LINES = 50


class TextRecord(NamedTuple):
    """One kept record: its line, its id and its fields in the store's column order.

    ``fields`` is ``(title, text, url)`` for items and ``(text, description,
    narrative)`` for queries; absent fields are ``None``.
    """

    line: int
    name: str
    fields: tuple[str | None, str | None, str | None]


@dataclass
class TextCounts:
    """What a reading saw: physical lines, records kept and records skipped.

    ``skipped`` counts the records whose id the collection does not name, and
    the repeats of a record already kept with the same text.
    """

    lines: int = 0
    kept: int = 0
    skipped: int = 0


def sniff_text_format(first_lines: list[str]) -> TextFormat:
    r"""The shape of a text file from its first non-blank lines.

    A ``{`` starts JSON Lines, a ``<top`` a TREC topic file; otherwise lines
    that all have exactly two tabs are ``title-tsv``, anything else ``tsv``.

    Examples
    --------
    >>> sniff_text_format(['{"_id": "1", "text": "a"}']).value
    'jsonl'
    >>> sniff_text_format(["<top>"]).value
    'trec-topics'
    >>> sniff_text_format(["1\tTitle\tSome text", "2\tT\tx"]).value
    'title-tsv'
    >>> sniff_text_format(["1\tSome text"]).value
    'tsv'
    """
    head = first_lines[0].lstrip() if first_lines else ""
    if head.startswith("{"):
        return TextFormat.jsonl
    if head.lower().startswith("<top"):
        return TextFormat.trec_topics
    if first_lines and all(line.rstrip("\r\n").count("\t") == 2 for line in first_lines):
        return TextFormat.title_tsv
    return TextFormat.tsv


def _is_header(fields: list[str]) -> bool:
    """Whether a TSV's first row names columns (``id<TAB>text``, ``docid<TAB>title<TAB>body``)."""
    words = [f.strip().lower() for f in fields]
    return (
        len(words) >= 2 and words[0] in _HEADER_IDS and all(w in _HEADER_WORDS for w in words[1:])
    )


def _snippet(line: bytes | str) -> str:
    """At most 80 characters of a line, for a message."""
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    return text.rstrip("\r\n")[:80]


class TextReader:
    """One text file, read once: its kept records in chunks, then its counts and digest.

    Parameters
    ----------
    name
        The file (``-`` for standard input).
    of
        Whose texts the file holds.
    fmt
        The shape; sniffed from the first lines when ``None``.
    wanted
        The ids to keep (the collection's names); ``None`` keeps every record.
    stream
        A binary stream to read instead of opening ``name`` (tests).

    Attributes
    ----------
    format
        The shape read (known once :meth:`chunks` has started).
    counts
        Lines read, records kept and skipped (complete once :meth:`chunks` is exhausted).
    """

    def __init__(
        self,
        name: str,
        of: TextOf,
        fmt: TextFormat | None = None,
        wanted: frozenset[str] | None = None,
        *,
        stream: BinaryIO | None = None,
    ) -> None:
        self.name = name
        self.of = TextOf(of)
        self.format = fmt
        self.counts = TextCounts()
        self._wanted = wanted
        self._wanted_bytes = (
            None if wanted is None else frozenset(n.encode("utf-8") for n in wanted)
        )
        self._stream = stream
        self._hash = hashlib.sha256()
        # id -> (line, digest of the fields) of every record kept so far
        self._seen: dict[str, tuple[int, bytes]] = {}
        self._header_checked = False
        # lines in the body just read, when its reader counted them anyway (else counted here)
        self._body_lines: int | None = None
        #: The warning for the first id holding a zero-width or bidi-control character.
        self.invisible_note: str | None = None

    @property
    def label(self) -> str:
        """How messages name the file."""
        return "<stdin>" if self.name == STDIN else self.name

    @property
    def sha256(self) -> str:
        """SHA-256 of the (decompressed) content read so far."""
        return self._hash.hexdigest()

    def _error(
        self, reason: str, line: int | None, value: object = None, hint: str | None = None
    ) -> InputError:
        return InputError(reason, file=self.label, line=line, value=value, hint=hint)

    # --- bytes to line blocks ---------------------------------------------------------------

    def _raw_blocks(self) -> Iterator[bytes]:
        """The decompressed content in blocks of at most :data:`BLOCK_BYTES` (hashed)."""
        if self._stream is not None:
            raw: BinaryIO = self._stream
        elif self.name == STDIN:
            raw = sys.stdin.buffer
        else:
            path = Path(self.name)
            require_regular_file(path, self.label)  # the other ingests' check and messages
            raw = path.open("rb")
        try:
            first = True
            for block in _prefetched(self._hashed(self._decompressed(raw))):
                if first and block.startswith(_BOM):
                    block = block[len(_BOM) :]
                first = False
                yield block
        finally:
            if raw is not self._stream and raw is not sys.stdin.buffer:
                raw.close()

    def _hashed(self, blocks: Iterator[bytes]) -> Iterator[bytes]:
        for block in blocks:
            self._hash.update(block)
            yield block

    def _decompressed(self, raw: BinaryIO) -> Iterator[bytes]:
        """The content in blocks of at most :data:`BLOCK_BYTES`: gzip inflated here by
        :mod:`zlib` (every member of a multi-member file), bz2 through
        :func:`~orlbuild.ingest.source.open_input`, plain bytes as they are."""
        head = raw.read(_RAW_BYTES)
        if head.startswith(_GZIP_MAGIC):
            yield from self._inflated(raw, head)
            return
        if head.startswith(_BZ2_MAGIC):
            stream = open_input(cast(BinaryIO, io.BufferedReader(_Prefixed(head, raw))))
            while True:
                try:
                    block = stream.read(BLOCK_BYTES)
                except (OSError, EOFError) as exc:
                    raise self._damaged(exc) from None
                if not block:
                    return
                yield block
        data = head
        while data:
            for start in range(0, len(data), BLOCK_BYTES):
                yield data[start : start + BLOCK_BYTES]
            data = raw.read(_RAW_BYTES)

    def _inflated(self, raw: BinaryIO, data: bytes) -> Iterator[bytes]:
        """gzip content inflated block by block (no more than :data:`BLOCK_BYTES` at a time)."""
        inflate, damage = _inflater()
        inflater = inflate(_GZIP_WBITS)
        fed = False
        try:
            while True:
                if not data:
                    data = raw.read(_RAW_BYTES)
                    if not data:
                        break
                fed = True
                out = inflater.decompress(data, BLOCK_BYTES)
                data = inflater.unconsumed_tail
                if out:
                    yield out
                if inflater.eof:  # the next member, if any (zero padding ends the file)
                    data = inflater.unused_data.lstrip(b"\0")
                    inflater, fed = inflate(_GZIP_WBITS), False
            while fed and not inflater.eof:  # the output still held back
                out = inflater.decompress(b"", BLOCK_BYTES)
                if not out:
                    break
                yield out
        except damage as exc:
            raise self._damaged(exc) from None
        if fed and not inflater.eof:
            raise self._damaged(EOFError("the stream ends before its end-of-stream marker"))

    def _damaged(self, exc: BaseException) -> InputError:
        return self._error(
            f"cannot decompress the file ({exc})",
            None,
            hint="the gzip/bz2 file is damaged or truncated",
        )

    def _bodies(self) -> Iterator[tuple[int, bytes]]:
        """``(lines before, body)``: each body is ``\\n`` followed by complete lines.

        Every line of a body ends with ``\\n`` (one is added to a last line
        without). A line longer than :data:`MAX_LINE_CHARS` characters is
        refused as soon as it is known to be; only the unfinished line is
        carried from a block to the next (at most four times the limit in bytes).
        """
        carry = b""
        before = 0
        empty = True
        for block in self._raw_blocks():
            empty = False
            data = b"\n" + carry + block if carry else b"\n" + block
            cut = data.rfind(b"\n") + 1
            if cut == 1 and len(data) > 1:  # no line ends in this block
                carry = data[1:]
                if len(carry) > 4 * MAX_LINE_CHARS:
                    raise self._too_long(before + 1)
                continue
            if carry:
                first_end = data.find(b"\n", 1)
                if first_end - 1 > MAX_LINE_CHARS:
                    self._check_length(data[1:first_end], before + 1)
            body = data[:cut]
            carry = data[cut:]
            self._body_lines = None
            yield before, body
            counted = self._body_lines
            before += body.count(b"\n") - 1 if counted is None else counted
        if carry:
            if len(carry) > MAX_LINE_CHARS:
                self._check_length(carry, before + 1)
            yield before, b"\n" + carry + b"\n"
            before += 1
        if empty:
            raise self._error("the file is empty", 1, hint="nothing to ingest")
        self.counts.lines = before

    def _check_length(self, line: bytes, number: int) -> None:
        """Refuse a line of more than :data:`MAX_LINE_CHARS` characters."""
        if len(self._decode(line, number)) > MAX_LINE_CHARS:
            raise self._too_long(number)

    def _too_long(self, number: int) -> InputError:
        return self._error(
            f"line longer than {MAX_LINE_CHARS:,} characters",
            number,
            hint="is this the right file (not a binary or a one-line dump)?",
        )

    def _decode(self, line: bytes, number: int) -> str:
        """A line as text; bytes that are not UTF-8 are refused, naming the line."""
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self._error(
                f"not valid UTF-8 (byte {line[exc.start : exc.end]!r})",
                number,
                _snippet(line),
                hint="save the file as UTF-8",
            ) from None

    # --- records ------------------------------------------------------------------------------

    def chunks(self) -> Iterator[list[TextRecord]]:
        """The kept records, in file order, in lists of at most :data:`CHUNK_RECORDS`.

        Raises
        ------
        InputError
            A record with too few fields, an empty id or text, an id given
            twice with different texts, bytes that are not UTF-8, an
            over-long line; one line naming the file, the line and the value.
        """
        bodies = self._bodies()
        first = next(bodies, None)
        assert first is not None  # an empty file raised
        if self.format is None:
            self.format = sniff_text_format(_first_lines(first[1]))
        if self.format is TextFormat.trec_topics and self.of is TextOf.items:
            raise self._error(
                "a TREC topic file holds queries", None, hint="use --of queries or another --format"
            )
        records = self._records(_chain(first, bodies))
        chunk: list[TextRecord] = []
        for record in records:
            if self._keep(record):
                chunk.append(record)
                if len(chunk) >= CHUNK_RECORDS:
                    yield chunk
                    chunk = []
        if chunk:
            yield chunk

    def _keep(self, record: TextRecord) -> bool:
        """Count a record; ``False`` for a repeat of a kept one (a conflicting repeat raises)."""
        digest = hashlib.blake2b(
            json.dumps(record.fields, ensure_ascii=False).encode("utf-8"), digest_size=16
        ).digest()
        seen = self._seen.get(record.name)
        if seen is None:
            self._seen[record.name] = (record.line, digest)
            self.counts.kept += 1
            return True
        if seen[1] != digest:
            raise self._error(
                f"id {record.name!r} is given twice with different texts (first on line {seen[0]})",
                record.line,
                record.name,
                hint="keep one text per id in a file",
            )
        self.counts.skipped += 1
        return False

    def _records(self, bodies: Iterator[tuple[int, bytes]]) -> Iterator[TextRecord]:
        if self.format in (TextFormat.tsv, TextFormat.title_tsv):
            if self._wanted_bytes is not None:
                return self._tsv_filtered(bodies)
            return self._tsv_all(bodies)
        if self.format is TextFormat.jsonl:
            return self._jsonl(bodies)
        return self._trec_topics(bodies)

    def _header(self, before: int, line: str) -> bool:
        """Whether this is the file's first line and names columns (then it is skipped)."""
        if self._header_checked or before != 0:
            return False
        self._header_checked = True
        return _is_header(line.rstrip("\r\n").split("\t"))

    def _tsv_filtered(self, bodies: Iterator[tuple[int, bytes]]) -> Iterator[TextRecord]:
        """The lines whose id is wanted, found without decoding the others."""
        wanted = self._wanted_bytes
        assert wanted is not None
        for before, body in bodies:
            ids = _LINE_ID.findall(body)  # one per newline: ids[k] starts line before + k + 1
            self._body_lines = len(ids) - 1  # so that _bodies need not count them again
            found = wanted.intersection(ids)
            kept = 0
            if found:
                at: list[tuple[int, int]] = []  # (line index, offset of its newline)
                for name in found:
                    k, start = ids.index(name), body.find(b"\n" + name)
                    while True:
                        while body[start + 1 + len(name) : start + 2 + len(name)] not in _ID_ENDS:
                            start = body.find(b"\n" + name, start + 1)  # a longer id
                        at.append((k, start))
                        try:
                            k = ids.index(name, k + 1)
                        except ValueError:
                            break
                        start = body.find(b"\n" + name, start + 1)
                for k, start in sorted(at):  # the lines found by offset: no split of the body
                    number = before + k + 1
                    line = self._decode(body[start + 1 : body.index(b"\n", start + 1)], number)
                    if self._header(number - 1, line):
                        continue
                    kept += 1
                    yield self._tsv_record(line, number)
            self.counts.skipped += len(ids) - 1 - kept

    def _tsv_all(self, bodies: Iterator[tuple[int, bytes]]) -> Iterator[TextRecord]:
        """Every line, decoded and checked."""
        for before, body in bodies:
            text = self._decode_body(body, before)
            number = before
            for line in text[1:-1].split("\n"):
                number += 1
                if not line.strip() or self._header(number - 1, line):
                    self.counts.skipped += 1
                    continue
                yield self._tsv_record(line, number)

    def _decode_body(self, body: bytes, before: int) -> str:
        """A whole body as text; undecodable bytes are refused naming their line."""
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError as exc:
            number = before + body.count(b"\n", 0, exc.start)
            start = body.rfind(b"\n", 0, exc.start) + 1
            end = body.find(b"\n", exc.start)
            self._decode(body[start:end], number)
            raise AssertionError("unreachable") from exc  # pragma: no cover

    def _tsv_record(self, line: str, number: int) -> TextRecord:
        """One TSV line as a record (``line`` without its line ending)."""
        line = line.rstrip("\r\n")
        titled = self.format is TextFormat.title_tsv
        parts = line.split("\t", 2 if titled else 1)
        want = 3 if titled else 2
        if len(parts) < want:
            shape = (
                "id<TAB>title<TAB>text"
                if titled and self.of is TextOf.items
                else "id<TAB>text<TAB>description"
                if titled
                else "id<TAB>text"
            )
            raise self._error(
                f"too few fields: expected {shape}, found {len(parts)}",
                number,
                _snippet(line),
                hint="pass --format if the shape was guessed wrong",
            )
        name = self._name(parts[0], number, line)
        if titled:
            first, text = parts[1], parts[2]
            if self.of is TextOf.items:
                return TextRecord(
                    number, name, (first or None, self._text(text, number, line), None)
                )
            return TextRecord(number, name, (self._text(first, number, line), text or None, None))
        text = self._text(parts[1], number, line)
        if self.of is TextOf.items:
            return TextRecord(number, name, (None, text, None))
        return TextRecord(number, name, (text, None, None))

    def _name(self, raw: str, number: int, line: str) -> str:
        name = raw.strip()
        if not name:
            raise self._error("empty id", number, _snippet(line))
        if len(name) > NAME_MAX:
            raise self._error(f"id longer than {NAME_MAX} characters", number, name[:80])
        if self.invisible_note is None:
            note = invisible_name_note(name, "id", f"{self.label}, line {number}")
            self.invisible_note = note and f"{note} (the first such id of the file)"
        return name

    def _text(self, text: str, number: int, line: str) -> str:
        if not text.strip():
            raise self._error("empty text", number, _snippet(line))
        return text

    def _jsonl(self, bodies: Iterator[tuple[int, bytes]]) -> Iterator[TextRecord]:
        """One JSON object a line; with wanted names, parts of the file surely of other names
        are not parsed (:meth:`_other_names`)."""
        wanted = self._wanted
        for before, part in self._json_parts(bodies):
            if self._other_names(part):
                self.counts.skipped += part.count(b"\n") - 1
                continue
            for k, raw in enumerate(part.split(b"\n")[1:-1]):
                number = before + k + 1
                if not raw.strip():
                    self.counts.skipped += 1
                    continue
                line = self._decode(raw, number)
                try:
                    value = json.loads(line)
                except ValueError as exc:
                    raise self._error(
                        f"not a JSON object ({exc.args[0].split(':')[0]})", number, _snippet(line)
                    ) from None
                if not isinstance(value, dict):
                    raise self._error("not a JSON object", number, _snippet(line))
                key = next((k for k in ID_KEYS if k in value), None)
                if key is None:
                    raise self._error(
                        f"no id: expected one of {', '.join(ID_KEYS)}",
                        number,
                        _snippet(line),
                    )
                name = self._name(_json_text(value[key]), number, line)
                if wanted is not None and name not in wanted:
                    self.counts.skipped += 1
                    continue
                yield self._json_record(value, name, number, line)

    def _json_parts(self, bodies: Iterator[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
        """The bodies, cut at line ends into parts of about :data:`_JSON_PART_BYTES` when
        only wanted names are kept (a part without one is skipped whole)."""
        for before, body in bodies:
            if self._wanted_bytes is None:
                yield before, body
                continue
            start, last = 0, len(body) - 1
            while start < last:
                end = body.find(b"\n", start + _JSON_PART_BYTES)
                end = last if end < 0 else end
                part = body[start : end + 1]
                yield before, part
                before += part.count(b"\n") - 1
                start = end

    def _other_names(self, data: bytes) -> bool:
        """Whether some JSON lines surely hold no wanted record.

        True when every line has a value under an id key, none of those values
        (as bytes) is wanted and none is written with a backslash escape: such
        lines are skipped without being parsed; any other is parsed.
        """
        wanted = self._wanted_bytes
        if wanted is None or _JSON_ID_ESCAPED.search(data):
            return False
        values = _JSON_ID_VALUE.findall(data)
        return len(values) >= data.count(b"\n") - 1 and wanted.isdisjoint(values)

    def _json_record(self, value: dict, name: str, number: int, line: str) -> TextRecord:
        keys = _ITEM_TEXT_KEYS if self.of is TextOf.items else _QUERY_TEXT_KEYS
        text_key = next((k for k in keys if _json_text(value.get(k)).strip()), None)
        if text_key is None:
            raise self._error(f"no text: expected one of {', '.join(keys)}", number, _snippet(line))
        text = _json_text(value[text_key])

        def optional(*names: str) -> str | None:
            for key in names:
                found = _json_text(value.get(key))
                if found.strip():
                    return found
            return None

        if self.of is TextOf.items:
            return TextRecord(number, name, (optional("title"), text, optional("url")))
        return TextRecord(
            number, name, (text, optional("description", "desc"), optional("narrative", "narr"))
        )

    def _trec_topics(self, bodies: Iterator[tuple[int, bytes]]) -> Iterator[TextRecord]:
        """``<top>`` blocks: ``<num>``, ``<title>``, ``<desc>``, ``<narr>``."""
        wanted = self._wanted
        topic: dict[str, list[str]] | None = None
        field = ""
        start = 0
        for before, body in bodies:
            text = self._decode_body(body, before)
            number = before
            for line in text[1:-1].split("\n"):
                number += 1
                rest = line.strip()
                while rest:
                    tag = _TAG.match(rest)
                    word = "" if tag is None else tag.group(1).replace(" ", "").lower()
                    if word.lstrip("/") not in _TOPIC_TAGS:  # text (HTML in a narrative, say)
                        if topic is None:
                            raise self._error("text outside a <top> block", number, _snippet(line))
                        if field:
                            topic[field].append(rest)
                        break
                    assert tag is not None
                    rest = rest[tag.end() :].strip()
                    if word == "top":
                        if topic is not None:
                            raise self._error("<top> inside a <top> block", number, _snippet(line))
                        topic, field, start = {k: [] for k in _TOPIC_FIELDS}, "", number
                    elif word == "/top":
                        if topic is None:
                            raise self._error("</top> without <top>", number, _snippet(line))
                        record = self._topic(topic, start)
                        topic, field = None, ""
                        if wanted is not None and record.name not in wanted:
                            self.counts.skipped += 1
                            continue
                        yield record
                    elif topic is None:
                        raise self._error(f"<{word}> outside a <top> block", number, _snippet(line))
                    else:
                        field = "" if word.startswith("/") else word
        if topic is not None:
            raise self._error("<top> block not closed by </top>", start, None)

    def _topic(self, topic: dict[str, list[str]], start: int) -> TextRecord:
        def joined(field: str, label: str) -> str:
            text = " ".join(" ".join(topic[field]).split())
            if text.lower().startswith(label):
                text = text[len(label) :].strip()
            return text

        name = joined("num", "number:")
        if not name:
            raise self._error("empty id: the topic has no <num>", start)
        if len(name) > NAME_MAX:
            raise self._error(f"id longer than {NAME_MAX} characters", start, name[:80])
        title = joined("title", "topic:")
        if not title:
            raise self._error("empty text: the topic has no <title>", start, name)
        return TextRecord(
            start,
            name,
            (title, joined("desc", "description:") or None, joined("narr", "narrative:") or None),
        )


_TOPIC_FIELDS = ("num", "title", "desc", "narr")
_TOPIC_TAGS = frozenset({"top", *_TOPIC_FIELDS})
_TAG = re.compile(r"<\s*(/?\s*[A-Za-z]+)[^>]*>")


def _json_text(value: object) -> str:
    """A JSON value as text: strings as they are, numbers written out, nothing as ``""``."""
    if value is None or isinstance(value, (dict, list)):
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _first_lines(body: bytes) -> list[str]:
    """The first non-blank lines of a body, decoded leniently (for sniffing only)."""
    lines = []
    for raw in body.split(b"\n"):
        if raw.strip():
            lines.append(raw.decode("utf-8", "replace"))
            if len(lines) >= _SNIFF_LINES:
                break
    return lines


def _chain(
    first: tuple[int, bytes], rest: Iterator[tuple[int, bytes]]
) -> Iterator[tuple[int, bytes]]:
    yield first
    yield from rest


#: Blocks read ahead by the reading thread (bounded memory: this many blocks at most).
_READ_AHEAD = 4


def _inflater() -> tuple[Any, tuple[type[BaseException], ...]]:
    """The gzip inflater and the errors it raises: ISA-L's (:mod:`isal.isal_zlib`, the same
    interface as :mod:`zlib`, about 1.7 times faster here) when installed, else :mod:`zlib`'s.

    Decompression is what bounds reading a gzip corpus (docs/input-formats.md,
    "Query and item text").
    """
    try:
        from isal import isal_zlib
    except ImportError:  # pragma: no cover - isal is a declared dependency
        return zlib.decompressobj, (zlib.error,)
    isal_error = cast("type[BaseException]", isal_zlib.error)
    return isal_zlib.decompressobj, (isal_error, zlib.error)


def _prefetched(blocks: Iterator[bytes]) -> Iterator[bytes]:
    """``blocks``, produced by a second thread while the caller works on the previous ones.

    Inflating (zlib) and hashing release the GIL, so on two cores reading
    overlaps with the scan of the lines. An exception of the producer is raised
    here; a caller that stops early stops the producer too.
    """
    ready: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=_READ_AHEAD)
    stop = threading.Event()

    def produce() -> None:
        try:
            for block in blocks:
                while not stop.is_set():
                    try:
                        ready.put(("block", block), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            ready.put(("end", None))
        except BaseException as exc:  # handed to the consumer, raised there
            ready.put(("error", exc))

    worker = threading.Thread(target=produce, name="orlbuild-text-reader", daemon=True)
    worker.start()
    try:
        while True:
            kind, value = ready.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()
        while worker.is_alive():  # unblock a producer waiting on a full queue
            with contextlib.suppress(queue.Empty):
                ready.get(timeout=0.1)
        worker.join()


class _Prefixed(io.RawIOBase):
    """``head`` (bytes already read) followed by the rest of ``raw``, as one raw stream."""

    def __init__(self, head: bytes, raw: BinaryIO) -> None:
        self._head = head
        self._raw = raw

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]  # a writable buffer
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._raw.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)
