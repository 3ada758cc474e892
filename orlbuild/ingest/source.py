"""Input sources: files or standard input, decoded line by line and hashed on the way.

Reading is streaming: the content is hashed (SHA-256 of the raw bytes, the
batch's provenance key) and decoded as UTF-8 in blocks, then split into
physical lines; a byte that is not UTF-8 is reported with its line number, and
a UTF-8 byte-order mark at the start is dropped.
"""

from __future__ import annotations

import codecs
import hashlib
import itertools
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import BinaryIO

from orlbuild.errors import InputError

__all__ = [
    "STDIN",
    "InputFormat",
    "Source",
    "detect_format",
    "input_size",
]

#: The file name that means standard input.
STDIN = "-"

_BOM = b"\xef\xbb\xbf"

#: Bytes read (and decoded) at a time.
BLOCK_BYTES = 1 << 20


class InputFormat(str, Enum):
    """File formats of FORMATS.md (``--format`` values)."""

    tsv = "tsv"
    csv = "csv"
    jsonl = "jsonl"
    qrels = "qrels"
    trec = "trec"
    # Pairwise shapes (README "Input formats"): arena is tabular (syntax from the
    # extension), the other two are headerless and whitespace-separated.
    arena = "arena"
    prefs_release = "prefs-release"
    trec_prefs = "trec-prefs"


_EXTENSIONS = {
    ".tsv": InputFormat.tsv,
    ".tab": InputFormat.tsv,
    ".csv": InputFormat.csv,
    ".jsonl": InputFormat.jsonl,
    ".ndjson": InputFormat.jsonl,
    ".qrels": InputFormat.qrels,
    ".trec": InputFormat.trec,
    ".run": InputFormat.trec,
}


@dataclass
class Source:
    """One input (a path or ``-``), read once as numbered, decoded lines.

    Attributes
    ----------
    name
        The file name as given (``-`` for standard input); used in messages.
    sha256
        Hex digest of every byte read so far; complete once :meth:`lines` is
        exhausted.
    bytes_read
        Bytes consumed so far (for progress bars).
    """

    name: str
    stream: BinaryIO | None = None
    bytes_read: int = 0
    _hash: hashlib._Hash = field(default_factory=hashlib.sha256)
    on_progress: Callable[[int], None] | None = None

    @property
    def label(self) -> str:
        """How messages name the input."""
        return "<stdin>" if self.name == STDIN else self.name

    @property
    def sha256(self) -> str:
        """SHA-256 of the raw content read so far."""
        return self._hash.hexdigest()

    def _open(self) -> BinaryIO:
        """The binary stream to read (standard input or the file)."""
        if self.stream is not None:
            return self.stream
        if self.name == STDIN:
            return sys.stdin.buffer
        path = Path(self.name)
        if not path.is_file():
            raise InputError(
                "no such file", file=self.name, hint="check the path (use '-' for standard input)"
            )
        return path.open("rb")

    def lines(self) -> Iterator[str]:
        """Yield every physical line, in order, with its line ending (line numbers from 1).

        Raises
        ------
        InputError
            On bytes that are not UTF-8 (naming the line) and on an empty input.
        """
        return itertools.chain.from_iterable(self._blocks())

    def _blocks(self) -> Iterator[list[str]]:
        """Decode the input in blocks of :data:`BLOCK_BYTES`, as lists of complete lines."""
        stream = self._open()
        decoder = codecs.getincrementaldecoder("utf-8")()
        carry = ""
        lines_before = 0
        decoded_any = False
        try:
            while raw := stream.read(BLOCK_BYTES):
                self._hash.update(raw)
                self._advance(len(raw))
                if not decoded_any and not carry and raw.startswith(_BOM):
                    raw = raw[len(_BOM) :]
                pending = decoder.getstate()[0]
                try:
                    text = decoder.decode(raw)
                except UnicodeDecodeError as exc:
                    raise self._not_utf8(pending + raw, exc, lines_before) from None
                decoded_any = decoded_any or bool(text)
                parts = (carry + text).split("\n")
                carry = parts.pop()
                lines_before += len(parts)
                yield [part + "\n" for part in parts]
            try:
                carry += decoder.decode(b"", final=True)
            except UnicodeDecodeError as exc:
                raise self._not_utf8(decoder.getstate()[0], exc, lines_before) from None
        finally:
            if stream is not self.stream and stream is not sys.stdin.buffer:
                stream.close()
        if carry:
            yield [carry]
        elif not decoded_any:
            raise InputError("the file is empty", file=self.label, line=1, hint="nothing to ingest")

    def _not_utf8(self, data: bytes, exc: UnicodeDecodeError, lines_before: int) -> InputError:
        """The error for undecodable bytes at ``exc.start`` of ``data``."""
        line = lines_before + data.count(b"\n", 0, exc.start) + 1
        start = data.rfind(b"\n", 0, exc.start) + 1
        end = data.find(b"\n", exc.start)
        snippet = data[start : end if end >= 0 else len(data)][:80]
        return InputError(
            f"not valid UTF-8 (byte {data[exc.start : exc.end]!r})",
            file=self.label,
            line=line,
            value=snippet,
            hint="save the file as UTF-8",
        )

    def _advance(self, n: int) -> None:
        """Count ``n`` more bytes read and report them to the progress callback."""
        self.bytes_read += n
        if self.on_progress is not None and n:
            self.on_progress(n)


def input_size(name: str) -> int | None:
    """Size in bytes of a regular input file (``None`` for standard input), for progress bars."""
    path = Path(name)
    if name == STDIN or not path.is_file():
        return None
    return path.stat().st_size


def detect_format(name: str, override: InputFormat | None, first_line: str | None) -> InputFormat:
    """Choose the format: ``override``, else the file extension, else a sniff of stdin.

    Parameters
    ----------
    name
        File name as given (``-`` for standard input).
    override
        The ``--format`` option, if any.
    first_line
        The first non-blank line, used only for standard input: a ``{`` means
        JSONL, a tab TSV, otherwise CSV; headerless formats (``qrels``,
        ``trec``) need ``--format`` there.
    """
    if override is not None:
        return override
    if name != STDIN:
        suffix = Path(name).suffix.lower()
        if suffix in _EXTENSIONS:
            return _EXTENSIONS[suffix]
        raise InputError(
            "cannot tell the format from the file extension",
            file=name,
            value=suffix or name,
            hint="use .tsv, .csv, .jsonl, .qrels or .trec, or pass --format",
        )
    text = (first_line or "").lstrip()
    if text.startswith("{"):
        return InputFormat.jsonl
    return InputFormat.tsv if "\t" in text else InputFormat.csv
