"""Input sources: files or standard input, decoded line by line and hashed on the way.

Reading is streaming: the content is hashed (SHA-256 of the raw bytes, the
batch's provenance key) and decoded as UTF-8 in blocks, then split into
physical lines; a byte that is not UTF-8 is reported with its line number, and
a UTF-8 byte-order mark at the start is dropped.

Line length is capped while the line is read (:data:`MAX_LINE_CHARS`), before
it is buffered: a compressed file that expands to one enormous line is
refused after reading a few blocks, in bounded memory.

Compressed input (docs/input-formats.md, "Input formats"): a gzip or bz2 stream is recognised
by its first bytes, whatever the file is called, and decompressed while it is
read (never whole in memory). The hash is that of the decompressed content,
so the same data stored plain or compressed is recognised as the same batch.
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import hashlib
import io
import itertools
import re
import stat
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, cast

from orlbuild.errors import InputError
from orlbuild.vocabulary import InputFormat

__all__ = [
    "MAX_LINE_CHARS",
    "STDIN",
    "Source",
    "detect_format",
    "file_sha256",
    "input_size",
    "line_blocks",
    "open_input",
    "require_regular_file",
    "sniff_trec",
]

#: The file name that means standard input.
STDIN = "-"

_BOM = b"\xef\xbb\xbf"

#: First bytes of a compressed stream -> its name.
_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bz2"}

#: File name endings of compressed files, stripped before reading the extension.
COMPRESSED_SUFFIXES = (".gz", ".bz2")

#: Bytes read (and decoded) at a time.
BLOCK_BYTES = 1 << 20

#: Longest physical line (or JSON object) accepted, in characters (docs/input-formats.md,
#: "Limits and refused values"). A line completed inside one block is never longer than
#: the block, so the cap is checked only on lines that span blocks (and on the tail).
MAX_LINE_CHARS = BLOCK_BYTES


_EXTENSIONS = {
    ".tsv": InputFormat.tsv,
    ".tab": InputFormat.tsv,
    ".csv": InputFormat.csv,
    ".jsonl": InputFormat.jsonl,
    ".ndjson": InputFormat.jsonl,
    ".json": InputFormat.json,
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

    def _open(self) -> tuple[BinaryIO, BinaryIO]:
        """The (decompressed) stream to read and the raw stream under it."""
        if self.stream is not None:
            raw = self.stream
        elif self.name == STDIN:
            raw = sys.stdin.buffer
        else:
            path = Path(self.name)
            require_regular_file(path, self.name)
            raw = path.open("rb")
        return open_input(raw), raw

    def lines(self) -> Iterator[str]:
        """Yield every physical line, in order, with its line ending (line numbers from 1).

        Raises
        ------
        InputError
            On bytes that are not UTF-8 (naming the line), on an empty input
            and on a line longer than :data:`MAX_LINE_CHARS`.
        """
        return split_lines(self.texts(), self.label)

    def texts(self) -> Iterator[str]:
        """Yield the decoded content in blocks of about :data:`BLOCK_BYTES` (cut anywhere).

        Raises
        ------
        InputError
            On bytes that are not UTF-8 (naming the line) and on an empty input.
        """
        stream, under = self._open()
        decoder = codecs.getincrementaldecoder("utf-8")()
        lines_before = 0
        decoded_any = False
        position = _tell(under)
        try:
            while raw := self._read(stream):
                self._hash.update(raw)
                if stream is under or position is None:
                    self._advance(len(raw))
                else:  # progress in compressed bytes, as input_size counts them
                    now = _tell(under) or position
                    self._advance(now - position)
                    position = now
                if not decoded_any and raw.startswith(_BOM):
                    raw = raw[len(_BOM) :]
                pending = decoder.getstate()[0]
                try:
                    text = decoder.decode(raw)
                except UnicodeDecodeError as exc:
                    raise self._not_utf8(pending + raw, exc, lines_before) from None
                if text:
                    decoded_any = True
                    lines_before += text.count("\n")
                    yield text
            try:
                text = decoder.decode(b"", final=True)
            except UnicodeDecodeError as exc:
                raise self._not_utf8(decoder.getstate()[0], exc, lines_before) from None
        finally:
            if under is not self.stream and under is not sys.stdin.buffer:
                under.close()
        if text:
            yield text
        elif not decoded_any:
            raise InputError("the file is empty", file=self.label, line=1, hint="nothing to ingest")

    def _read(self, stream: BinaryIO) -> bytes:
        """The next block; a damaged compressed stream is an :class:`InputError`."""
        try:
            return stream.read(BLOCK_BYTES)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(
                f"cannot decompress the file ({exc})",
                file=self.label,
                hint="the gzip/bz2 file is damaged or truncated",
            ) from None

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


#: What a path that is not a regular file is, in a refusal.
_NOT_REGULAR = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def require_regular_file(path: Path, label: str) -> None:
    """Refuse an input path that is not a regular file, saying what it is.

    A named pipe (FIFO), a device or a socket is refused rather than read:
    the readers look at a file's start before reading it whole (and the
    pipeline hashes it first), which a pipe cannot give twice. Its content
    is read through standard input instead (docs/input-formats.md, "Input formats").

    Raises
    ------
    InputError
        ``no such file``, ``is a directory``, ``is a named pipe (FIFO), not a
        regular file``, ``is a character device``, ``a block device`` or ``a socket``.
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise InputError(
            "no such file", file=label, hint="check the path (use '-' for standard input)"
        ) from None
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror or exc})", file=label) from None
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise InputError("is a directory, not a file", file=label, hint="name a file in it")
    what = next((name for test, name in _NOT_REGULAR if test(mode)), "a special file")
    raise InputError(
        f"is {what}, not a regular file",
        file=label,
        hint=f"read it through standard input instead: give '-' as the file and < {label}",
    )


def split_lines(texts: Iterable[str], label: str) -> Iterator[str]:
    """The physical lines of decoded blocks, each with its line ending (the last may lack one).

    Raises
    ------
    InputError
        A line longer than :data:`MAX_LINE_CHARS`, named by its number, as soon
        as it is that long (the rest of it is never buffered).
    """
    return itertools.chain.from_iterable(line_blocks(texts, label))


def line_blocks(texts: Iterable[str], label: str) -> Iterator[list[str]]:
    """The complete physical lines of each decoded block, as one list per block.

    The lines of :func:`split_lines`, grouped, for readers that work a block at
    a time; it raises the same over-long-line error.
    """
    carry = ""
    lines_before = 0
    for text in texts:
        parts = (carry + text).split("\n")
        carry = parts.pop()
        if parts and len(parts[0]) > MAX_LINE_CHARS:
            _too_long(label, lines_before + 1)
        if len(carry) > MAX_LINE_CHARS:
            _too_long(label, lines_before + len(parts) + 1)
        lines_before += len(parts)
        yield [part + "\n" for part in parts]
    if carry:
        yield [carry]


def _too_long(label: str, line: int) -> None:
    """Raise the error of an over-long line."""
    raise InputError(
        f"line longer than {MAX_LINE_CHARS:,} characters",
        file=label,
        line=line,
        hint="identifiers are at most 512 characters; is this the right file (not a "
        "binary or a one-line dump)?",
    )


def _tell(stream: BinaryIO) -> int | None:
    """The position in a seekable stream, else ``None``."""
    try:
        return stream.tell()
    except (OSError, ValueError, AttributeError):
        return None


def open_input(raw: BinaryIO) -> BinaryIO:
    """``raw`` itself, or a streaming decompressor when it starts with gzip/bz2 magic bytes.

    Parameters
    ----------
    raw
        A binary stream at its start (a file, standard input, ``io.BytesIO``).

    Returns
    -------
    BinaryIO
        The stream to read the content from; closing it does not close ``raw``.
    """
    if hasattr(raw, "peek"):
        head = raw.peek(3)[:3]
    elif raw.seekable():  # e.g. io.BytesIO: look, then step back
        head = raw.read(3)
        raw.seek(-len(head), io.SEEK_CUR)
    else:  # pragma: no cover - a non-seekable stream without peek
        raw = io.BufferedReader(raw)  # type: ignore[type-var]
        head = raw.peek(3)[:3]
    for magic, name in _MAGIC.items():
        if head.startswith(magic):
            # Binary streams with every method a reader here uses (typeshed does not
            # declare GzipFile and BZ2File as typing.BinaryIO).
            if name == "gzip":
                return cast(BinaryIO, gzip.GzipFile(fileobj=raw, mode="rb"))
            return cast(BinaryIO, bz2.BZ2File(raw, mode="rb"))
    return raw


def base_suffix(name: str) -> str:
    """The lower-cased extension of ``name`` once ``.gz``/``.bz2`` is removed."""
    path = Path(name)
    if path.suffix.lower() in COMPRESSED_SUFFIXES:
        path = path.with_suffix("")
    return path.suffix.lower()


_INTEGER_FIELD = re.compile(r"[+-]?\d+")


def sniff_trec(first_line: str | None) -> InputFormat | None:
    r"""A TREC qrels or run line, recognised as trec_eval reads them (docs/input-formats.md, "Input
    formats").

    ``query iteration item grade`` (four whitespace-separated fields, an
    integer grade) is qrels; ``query Q0 item rank score tag`` (six fields, an
    integer rank and a numeric score) is a run. Anything else, e.g. a header
    row or a comma-separated line, is ``None``.

    Examples
    --------
    >>> sniff_trec("301 0 FBIS3-10082 1\n").value
    'qrels'
    >>> sniff_trec("301 Q0 FBIS3-10082 1 12.5 bm25\n").value
    'trec'
    >>> sniff_trec("query\titem\trank\tscore\n") is None
    True
    """
    if first_line is None or "," in first_line or first_line.lstrip()[:1] in ("{", "["):
        return None
    fields = first_line.split()
    if len(fields) == 4 and _INTEGER_FIELD.fullmatch(fields[3]):
        return InputFormat.qrels
    if len(fields) == 6 and _INTEGER_FIELD.fullmatch(fields[3]):
        try:
            float(fields[4])
        except ValueError:
            return None
        return InputFormat.trec
    return None


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's (decompressed) content: :attr:`Source.sha256` once it is read.

    The store keys ingested batches by this digest, so a file can be found
    stored without being parsed.
    """
    digest = hashlib.sha256()
    with path.open("rb") as raw, open_input(raw) as stream:
        for block in iter(lambda: stream.read(BLOCK_BYTES), b""):
            digest.update(block)
    return digest.hexdigest()


def input_size(name: str) -> int | None:
    """Size in bytes of a regular input file (``None`` for standard input), for progress bars."""
    path = Path(name)
    if name == STDIN or not path.is_file():
        return None
    return path.stat().st_size


def detect_format(
    name: str,
    override: InputFormat | None,
    first_line: str | None,
    *,
    format_option: str = "--format",
) -> InputFormat:
    """Choose the format: ``override``, else the file extension, else a sniff of stdin.

    Parameters
    ----------
    name
        File name as given (``-`` for standard input).
    override
        The ``--format`` option, if any.
    first_line
        The first non-blank line, used only for standard input: a ``[`` means
        a JSON array, a ``{`` JSONL, a tab TSV, otherwise CSV; headerless formats (``qrels``,
        ``trec``) are recognised by :func:`sniff_trec` before this is called.
    format_option
        The option the hint names (``--orl-format`` / ``--run-format`` in
        ``orlbuild eval``, whose ``--format`` is the output format).
    """
    if override is not None:
        return override
    if name != STDIN:
        suffix = base_suffix(name)
        if suffix in _EXTENSIONS:
            return _EXTENSIONS[suffix]
        raise InputError(
            "cannot tell the format from the file extension",
            file=name,
            value=suffix or name,
            hint=f"use .tsv, .csv, .jsonl, .json, .qrels or .trec (optionally .gz/.bz2), or pass "
            f"{format_option}",
        )
    text = (first_line or "").lstrip()
    if text.startswith("["):
        return InputFormat.json
    if text.startswith("{"):
        return InputFormat.jsonl
    return InputFormat.tsv if "\t" in text else InputFormat.csv
