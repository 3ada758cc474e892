"""Read and validate one input file of any kind, without storing it (docs/input-formats.md, "Input
formats").

:func:`read_input` streams a file once (hashing, decoding and parsing in
chunks) and checks it completely; :mod:`orlbuild.services.ingests` stores
what it returns, and ``orlbuild eval`` scores it without a database. Nothing
here touches the store.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, ParamSpec

import numpy as np
import pandas as pd

from orlbuild.errors import ConfigError, InputError
from orlbuild.gc_pause import paused_gc
from orlbuild.ingest.kinds import (
    DEFAULT_QUERY,
    KINDS,
    NAME_COLUMNS,
    Facts,
    IngestKind,
    no_comparison_error,
    zero_count_note,
)
from orlbuild.ingest.name_codes import Vocabularies
from orlbuild.ingest.rows import ColumnChunk, RecordLayout, is_comment, read_chunks
from orlbuild.ingest.source import STDIN, Source, detect_format, sniff_trec
from orlbuild.ingest.trec_reader import NAME_LENGTH
from orlbuild.records import NamedChunk
from orlbuild.vocabulary import InputFormat, InputKind
from scoring.vocabulary import DuplicatePolicy, ScorePrecisionName

__all__ = [
    "SHAPE_FORMATS",
    "TABULAR_FORMATS",
    "InputStream",
    "ParsedInput",
    "ReadingDigest",
    "input_format",
    "kind_formats",
    "read_input",
]


#: Characters of the start of a file looked at to find its first line.
HEAD_CHARS = 1 << 16


def _with_first_line(texts: Iterator[str]) -> tuple[str | None, Iterator[str]]:
    """Peek at the first non-blank, non-comment line without losing it.

    Only the first :data:`HEAD_CHARS` characters are looked at (a one-line
    JSON array may be the whole file): a longer first line is returned cut.
    """
    seen: list[str] = []
    head = ""
    for text in texts:
        seen.append(text)
        head += text
        first = _first_line_of(head)
        if first is not None or len(head) > HEAD_CHARS:
            break
    return _first_line_of(head, final=True), itertools.chain(seen, texts)


def _first_line_of(head: str, *, final: bool = False) -> str | None:
    """The first complete non-blank, non-comment line of ``head`` (or, when ``final``, cut)."""
    start = 0
    while start < len(head):
        end = head.find("\n", start)
        if end < 0:
            text = head[start : start + HEAD_CHARS]
            return text if final and text.strip() and not is_comment(text) else None
        text = head[start : end + 1]
        if text.strip() and not is_comment(text):
            return text
        start = end + 1
    return None


#: Formats that name a shape of a kind rather than a file syntax (the syntax comes
#: from the extension): ``--format arena``.
SHAPE_FORMATS = {InputFormat.arena: "arena"}


#: File syntaxes every kind can be written in (a header names the columns).
TABULAR_FORMATS = (InputFormat.tsv, InputFormat.csv, InputFormat.jsonl, InputFormat.json)


def kind_formats(kind: str) -> tuple[InputFormat, ...]:
    """The ``--format`` values that apply to ``kind`` (docs/input-formats.md, "Input formats").

    The kind's own headerless format (``qrels``, ``trec``), the tabular
    syntaxes, then its other shapes: named ones (``arena``) and headerless
    ones (``prefs-release``, ``trec-prefs``).
    """
    spec = KINDS[InputKind(kind)]
    shape_format = {shape: fmt for fmt, shape in SHAPE_FORMATS.items()}
    native = () if spec.layout.headerless is None else (spec.layout.headerless,)
    others = [
        layout.headerless if layout.headerless is not None else shape_format[layout.shape]
        for layout in spec.alternatives
        if layout.headerless is not None or layout.shape in shape_format
    ]
    return (*native, *TABULAR_FORMATS, *others)


def _header_words(kind: IngestKind) -> set[str]:
    """Every column name of every shape of ``kind`` (plus the pairwise ones)."""
    return set().union(*(layout.names() for layout in kind.layouts)) | {"winner", "loser"}


def _sniff_headerless(kind: IngestKind, first_line: str | None) -> InputFormat | None:
    """A headerless layout recognised from the first line (no header word, right width)."""
    if first_line is None or "," in first_line or first_line.lstrip()[:1] in ("{", "["):
        return None
    fields = first_line.split()
    if _header_words(kind) & {f.lower() for f in fields}:
        return None
    for layout in kind.layouts:
        fits = layout.headerless is not None and len(fields) == len(layout.headerless_columns)
        if fits and (layout.headerless_test is None or layout.headerless_test(fields)):
            return layout.headerless
    return None


def _choose_format(
    kind: IngestKind,
    name: str,
    override: InputFormat | None,
    first_line: str | None,
    format_option: str = "--format",
) -> InputFormat:
    """``--format``, else TREC qrels/run content, else the extension, else a sniff.

    Graded labels and runs in TREC's headerless formats are recognised by their
    content whatever the file is called. A pairwise file whose first line holds
    no column name and fits a headerless preference shape is read as that shape
    whatever its extension.
    """
    if override in SHAPE_FORMATS:
        return detect_format(name, None, first_line, format_option=format_option)
    trec_formats = {layout.headerless for layout in kind.layouts} & {
        InputFormat.qrels,
        InputFormat.trec,
    }
    by_content = sniff_trec(first_line)
    if override is None and by_content is not None and by_content in trec_formats:
        return by_content  # recognised by content, whatever the name
    sniff = name == STDIN or not _known_extension(name) or len(kind.layouts) > 1
    if override is None and sniff:
        sniffed = _sniff_headerless(kind, first_line)
        if sniffed is not None:
            return sniffed
    return detect_format(name, override, first_line, format_option=format_option)


def _shapes(kind: IngestKind, override: InputFormat | None) -> tuple[RecordLayout, ...]:
    """The shapes to accept: the one ``--format`` names (e.g. ``arena``), else all."""
    if override not in SHAPE_FORMATS:
        return kind.layouts
    wanted = SHAPE_FORMATS[override]
    named = tuple(layout for layout in kind.layouts if layout.shape == wanted)
    if not named:
        raise ConfigError(f"--format {override.value} applies to pairwise preferences only")
    return named


def _known_extension(name: str) -> bool:
    """Whether :func:`detect_format` recognises the extension of ``name``."""
    try:
        detect_format(name, None, None)
    except InputError:
        return False
    return True


def _concatenate(parts: list[Facts]) -> Facts:
    """Join the per-chunk facts column by column.

    ``count`` may first appear in a later chunk (JSON objects need not all
    carry it): a chunk without it counts 1 per row.
    """
    names = list(parts[0]) + [
        n for n in ("count",) if n not in parts[0] and any(n in p for p in parts)
    ]
    return {
        name: np.concatenate(
            [
                p[name] if name in p else np.ones(len(next(iter(p.values()))), np.int64)
                for p in parts
            ]
        )
        for name in names
    }


#: The scheme of reading digests: every name column hashed as names row by row,
#: independent of codes and of how the file was cut into chunks.
DIGEST_SCHEME = "2"

#: The canonical byte layout of each kind of value column in the digest.
_DIGEST_DTYPES = {"b": "|b1", "i": "<i8", "u": "<i8", "f": "<f8"}

#: Fact columns left out of the digest: which item was shown first follows from the
#: content and its shape, never from a reading option, and leaving it out keeps the
#: digests of the batches stored before it was kept (migration 0009_presentation_order).
_UNDIGESTED = frozenset({"winner_first"})


class ReadingDigest:
    """SHA-256 of the rows and names a reading keeps, fed chunk by chunk.

    Each column has its own hash, fed in row order (a name column with the
    names, each ``\\x1f``-terminated; a value column in a fixed byte layout),
    so the digest depends on the rows, not on the codes nor on the chunks;
    the final digest hashes the kind and the column digests in column order,
    written ``2:`` and 62 hex digits (the scheme tells it from the digests of
    earlier versions).
    """

    def __init__(self, kind: str) -> None:
        self._kind = kind
        self._columns: dict[str, hashlib._Hash] = {}

    def update(self, chunk: NamedChunk) -> None:
        """Add the rows of ``chunk``."""
        for column, values in chunk.facts.items():
            if not len(values) or column in _UNDIGESTED:
                continue
            vocabulary = NAME_COLUMNS.get(column)
            key = column
            if vocabulary is not None:
                text = np.asarray(chunk.names[vocabulary], dtype=object)[values]
                data = ("\x1f".join(text.tolist()) + "\x1f").encode()
            elif values.dtype.kind == "O":
                data = ("\x1f".join(map(repr, values.tolist())) + "\x1f").encode()
            else:
                layout = _DIGEST_DTYPES[values.dtype.kind]
                data = np.ascontiguousarray(values, dtype=layout).tobytes()
                key = f"{column}:{layout}"
            self._columns.setdefault(key, hashlib.sha256()).update(data)

    def hexdigest(self) -> str:
        """The digest of every row added so far."""
        total = hashlib.sha256(self._kind.encode())
        for column in sorted(self._columns):
            total.update(f"\x1e{column}\x1e".encode() + self._columns[column].digest())
        return f"{DIGEST_SCHEME}:{total.hexdigest()[:62]}"


@dataclass(frozen=True)
class ParsedInput:
    """One input file read and fully validated, not stored.

    Attributes
    ----------
    kind
        ``listwise``, ``pairwise``, ``graded`` or ``run``.
    facts
        Column -> aligned array; ``query_id``, ``annotator_id``, ``item_id``,
        ``winner_id`` and ``loser_id`` hold codes into ``vocabularies``
        (see :meth:`decoded`); ``score`` is NaN where a run has none.
    vocabularies
        The names the codes stand for.
    label, sha256
        How messages name the file, and the hex digest of its bytes.
    dropped
        Rows not kept (identical repeated grades, ``--duplicates keep-first``).
    notes
        Warnings about the file (columns read but ignored).
    digest
        :meth:`reading_sha256`.
    """

    kind: str
    facts: Facts
    vocabularies: Vocabularies
    label: str
    sha256: str
    dropped: int
    notes: tuple[str, ...] = ()
    digest: str = ""

    def __len__(self) -> int:
        """Rows to store."""
        return len(next(iter(self.facts.values()))) if self.facts else 0

    def decoded(self) -> pd.DataFrame:
        """The facts as a DataFrame with names instead of codes (``query``, ``item``, ...)."""
        names = self.vocabularies.as_lists()
        columns: dict[str, np.ndarray] = {}
        for column, values in self.facts.items():
            vocabulary = NAME_COLUMNS.get(column)
            if vocabulary is None:
                columns[column] = values
            else:
                columns[column.removesuffix("_id")] = np.asarray(names[vocabulary], dtype=object)[
                    values
                ]
        return pd.DataFrame(columns)

    def reading_sha256(self) -> str:
        """Digest of the rows and names this reading keeps (:class:`ReadingDigest`).

        Two readings of the same bytes store the same batch exactly when their
        digests agree; ``--duplicates`` or ``--score-precision`` may keep other
        rows of the same file.
        """
        return self.digest


#: Below this many queries, two-item queries are not taken for per-battle ids.
PER_BATTLE_MIN_QUERIES = 10

#: Rows whose queries and items decide the per-battle warning (the first ones of a file).
PER_BATTLE_SAMPLE_ROWS = 250_000


class InputStream:
    """One input file, read, validated and handed out in chunks of checked rows.

    Pairwise files (every shape but ``trec-prefs``) are checked row by row and
    handed out chunk by chunk, each chunk with its own names, so that an
    ingest streams them into its transaction in bounded memory; a bad line
    raises while the chunks are consumed (the transaction then stores
    nothing). The other kinds need whole-file checks (a repeated item, rank
    gaps, conflicting grades, trec-prefs groups) and come as one chunk
    (docs/performance.md, "Ingesting large vocabularies").

    Parameters
    ----------
    kind
        ``listwise``, ``pairwise``, ``graded`` or ``run``.
    path
        The file, or ``-`` for standard input.
    fmt
        Force a format instead of detecting it from the extension.
    duplicates
        Runs only: a repeated (query, item) is an error, or ``keep-first``.
    stream
        Read from this binary stream instead of opening ``path``.
    on_progress
        Called with the number of bytes read.
    format_option
        The option that error hints name for forcing the format.
    score_precision
        Runs only: how ``keep-first`` compares scores.
    query
        Pairwise only (``--query``): every row goes into this one query.

    Attributes
    ----------
    label
        How messages name the file.
    notes
        Warnings about the file, complete once the chunks are consumed.
    dropped
        Rows not kept (identical repeated grades, ``--duplicates keep-first``).
    rows
        Rows handed out so far.
    whole
        The number of rows when the file comes as one chunk (known before it
        is stored), else ``None``.
    """

    def __init__(
        self,
        kind: str,
        path: str | Path,
        *,
        fmt: InputFormat | None = None,
        duplicates: DuplicatePolicy = DuplicatePolicy.error,
        stream: BinaryIO | None = None,
        on_progress: Callable[[int], None] | None = None,
        format_option: str = "--format",
        score_precision: ScorePrecisionName = ScorePrecisionName.float32,
        query: str | None = None,
    ) -> None:
        self.kind = kind
        self._spec = KINDS[InputKind(kind)]
        if query is not None and kind != InputKind.pairwise:
            raise ConfigError("--query applies to pairwise preferences only")
        if query is not None:
            name = query.strip()
            if not name or len(name) > NAME_LENGTH or "\x00" in name:
                raise ConfigError(f"invalid --query {query!r}: use 1 to {NAME_LENGTH} characters")
            query = name
        self._query = query
        self._fmt, self._duplicates, self._precision = fmt, duplicates, score_precision
        self._format_option = format_option
        self._source = Source(str(path), stream=stream, on_progress=on_progress)
        self.label = self._source.label
        self.notes: list[str] = []
        self.dropped = 0
        self.rows = 0
        self.whole: int | None = None
        self._digest = ReadingDigest(kind)

    @property
    def sha256(self) -> str:
        """SHA-256 of the content (complete once the chunks are consumed)."""
        return self._source.sha256

    def reading_sha256(self) -> str:
        """Digest of the rows and names handed out so far (:class:`ReadingDigest`)."""
        return self._digest.hexdigest()

    def __iter__(self) -> Iterator[NamedChunk]:
        with paused_gc():
            for chunk in self._chunks():
                self.rows += len(chunk)
                self._digest.update(chunk)
                yield chunk

    def _chunks(self) -> Iterator[NamedChunk]:
        """The checked chunks: streamed (pairwise) or one whole-file chunk."""
        first_line, texts = _with_first_line(self._source.texts())
        chosen = _choose_format(
            self._spec, self._source.name, self._fmt, first_line, self._format_option
        )
        shapes = _shapes(self._spec, self._fmt)
        chunks = read_chunks(texts, chosen, shapes, self.label, self.notes)
        first = next(chunks)  # a file without rows raises here
        rest = itertools.chain([first], chunks)
        if self.kind == InputKind.pairwise and first.shape != "trec-prefs":
            qrels_like = (
                self._fmt is None
                and chosen is InputFormat.prefs_release
                and sniff_trec(first_line) is InputFormat.qrels
            )
            yield from self._pairwise_chunks(rest, first_line if qrels_like else None)
        else:
            whole = self._whole_file(rest)
            self.whole = len(whole)
            yield whole

    def _whole_file(self, chunks: Iterator[ColumnChunk]) -> NamedChunk:
        """Every chunk parsed into one vocabulary, then the kind's whole-file checks."""
        spec, label, vocab = self._spec, self.label, Vocabularies()
        parts: list[Facts] = []
        line_parts: list[np.ndarray] = []
        for chunk in chunks:
            parts.append(spec.parse(chunk, label, vocab))
            line_parts.append(chunk.lines)
        facts = _concatenate(parts)
        vocab.finish(facts, NAME_COLUMNS)
        facts, self.dropped = spec.check(
            facts,
            np.concatenate(line_parts),
            label,
            vocab,
            self._duplicates,
            self._precision,
            self.notes,
        )
        names = {v: np.asarray(n, dtype=object) for v, n in vocab.as_lists().items()}
        if self.kind == InputKind.pairwise:  # trec-prefs: expanded into pairs
            if self._query is not None:
                one_query = _OneQuery(self._query)
                facts, names = one_query.apply(facts, names)
                self.notes.extend(one_query.notes(label))
            else:
                battles = _BattleShapes()
                battles.add(names, facts)
                self.notes.extend(battles.warning(label))
        return NamedChunk(names, facts)

    def _pairwise_chunks(
        self, chunks: Iterator[ColumnChunk], qrels_line: str | None
    ) -> Iterator[NamedChunk]:
        """Pairwise chunks checked one by one (winner != loser, counts), then the file's notes.

        ``qrels_line``: the first line, when the file could be all-zero TREC
        qrels read as preferences (refused at the end if every winner is ``0``).
        """
        spec, label = self._spec, self.label
        zeros, first_zero = 0, 0
        all_zero_winners = qrels_line is not None
        without_query = False
        battles = _BattleShapes()
        one_query = _OneQuery(self._query) if self._query is not None else None
        for chunk in chunks:
            vocab = Vocabularies()
            facts = spec.parse(chunk, label, vocab)
            vocab.finish(facts, NAME_COLUMNS)
            without_query = without_query or "query" not in chunk.columns
            counts = facts.pop("count", None)  # count 0 is judged for the whole file below
            facts, _ = spec.check(
                facts, chunk.lines, label, vocab, self._duplicates, self._precision, self.notes
            )
            if all_zero_winners:
                winners = np.unique(facts["winner_id"])
                all_zero_winners = len(winners) == 1 and vocab.items.names[int(winners[0])] == "0"
            if counts is None:
                counts = np.ones(len(chunk), dtype=np.int64)
            elif not counts.all():
                kept = counts != 0
                if not zeros:
                    first_zero = int(chunk.lines[np.flatnonzero(~kept)[0]])
                zeros += int((~kept).sum())
                facts = {name: values[kept] for name, values in facts.items()}
                counts = counts[kept]
            facts["count"] = counts
            names = {v: np.asarray(n, dtype=object) for v, n in vocab.as_lists().items()}
            if one_query is not None:
                facts, names = one_query.apply(facts, names)
            elif self.rows < PER_BATTLE_SAMPLE_ROWS:
                battles.add(names, facts)
            yield NamedChunk(names, facts)
        if all_zero_winners:
            _refuse_qrels_read_as_preferences(qrels_line, label)
        if zeros and not self.rows:
            raise no_comparison_error(label, first_zero)
        if zeros:
            self.notes.append(zero_count_note(label, zeros))
        if one_query is not None:
            self.notes.extend(one_query.notes(label))
        elif without_query:
            self.notes.append(
                f"{label}: no query column: every row is in query "
                f"{DEFAULT_QUERY!r} (name it with --query NAME)"
            )
        else:
            self.notes.extend(battles.warning(label))


_P = ParamSpec("_P")


def _read_whole(stream: Callable[_P, InputStream]) -> Callable[_P, ParsedInput]:
    """:func:`read_input` over ``stream`` (:class:`InputStream`): it takes the stream's
    arguments, declared once on the stream."""

    def read_input(*args: _P.args, **kwargs: _P.kwargs) -> ParsedInput:
        """Read and validate one file exactly as ingesting it does, without storing it.

        Used by ``orlbuild eval`` to score files without a database (an ingest
        streams the same chunks into the store: :class:`InputStream`). Parameters
        are those of :class:`InputStream`.

        Raises
        ------
        InputError
            Naming the file, line and value of the first problem.
        """
        read = stream(*args, **kwargs)
        vocab = Vocabularies()
        parts: list[Facts] = []
        for chunk in read:
            offsets = {v: getattr(vocab, v).add(names) for v, names in chunk.names.items()}
            parts.append(
                {
                    column: values + offsets[NAME_COLUMNS[column]]
                    if column in NAME_COLUMNS
                    else values
                    for column, values in chunk.facts.items()
                }
            )
        facts = _concatenate(parts)
        vocab.finish(facts, NAME_COLUMNS)
        return ParsedInput(
            kind=read.kind,
            facts=facts,
            vocabularies=vocab,
            label=read.label,
            sha256=read.sha256,
            dropped=read.dropped,
            notes=tuple(read.notes),
            digest=read.reading_sha256(),
        )

    return read_input


read_input = _read_whole(InputStream)


def _name_hashes(names: np.ndarray) -> np.ndarray:
    """A hash of each name (equal names, equal hashes, whatever the chunk; one process)."""
    return np.fromiter(map(hash, names), dtype=np.int64, count=len(names))


#: Distinct hashes kept before they are merged (bounded memory).
_MERGE_HASHES = 1_000_000


class _OneQuery:
    """``--query NAME``: every row in one query; counts the file's own query ids replaced."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._first: list[str] = []
        self._hashes: list[np.ndarray] = []

    def apply(
        self, facts: Facts, names: dict[str, np.ndarray]
    ) -> tuple[Facts, dict[str, np.ndarray]]:
        """The chunk with every row in query ``name``."""
        replaced = [q for q in names["queries"].tolist() if q != self.name]
        self._first.extend(replaced[: max(0, 3 - len(self._first))])
        self._hashes.append(np.unique(_name_hashes(np.asarray(replaced, dtype=object))))
        if sum(len(h) for h in self._hashes) > _MERGE_HASHES:
            self._hashes = [np.unique(np.concatenate(self._hashes))]
        facts = {**facts, "query_id": np.zeros(len(facts["query_id"]), dtype=np.int64)}
        return facts, {**names, "queries": np.asarray([self.name], dtype=object)}

    def notes(self, label: str) -> list[str]:
        """The note naming the query ids not stored, if any."""
        count = len(np.unique(np.concatenate(self._hashes))) if self._hashes else 0
        if not count:
            return []
        shown = ", ".join(repr(q) for q in self._first) + (" ..." if count > 3 else "")
        return [
            f"{label}: --query {self.name!r} puts every row into one query; the file's "
            f"{count} query id(s) ({shown}) are not stored"
        ]


class _BattleShapes:
    """Distinct (query, item) pairs of the rows seen, for the per-battle warning.

    Names are hashed, so that equal names meet across chunks; a streamed file
    is judged on its first :data:`PER_BATTLE_SAMPLE_ROWS` rows.
    """

    def __init__(self) -> None:
        self._keys: list[np.ndarray] = []
        self._queries: list[np.ndarray] = []

    def add(self, names: dict[str, np.ndarray], facts: Facts) -> None:
        """Count the pairs of one chunk."""
        if not len(facts["query_id"]):
            return
        queries = _name_hashes(names["queries"])[np.tile(facts["query_id"], 2)]
        items = _name_hashes(names["items"])[
            np.concatenate([facts["winner_id"], facts["loser_id"]])
        ]
        with np.errstate(over="ignore"):
            keys = queries * np.int64(-7046029254386353131) + items
        keys, first = np.unique(keys, return_index=True)
        self._keys.append(keys)
        self._queries.append(queries[first])

    def warning(self, label: str) -> list[str]:
        """The warning when most queries compare only two items (a per-battle id)."""
        if not self._keys:
            return []
        _, first = np.unique(np.concatenate(self._keys), return_index=True)
        _, per_query = np.unique(np.concatenate(self._queries)[first], return_counts=True)
        if len(per_query) < PER_BATTLE_MIN_QUERIES:
            return []
        two = int((per_query <= 2).sum())
        if two * 2 <= len(per_query):
            return []
        return [
            f"{label}: {two} of {len(per_query)} queries compare only two items: a per-battle "
            "id (such as LMArena's question_id) was probably read as the query; to rank all "
            "items in one leaderboard, ingest again with --query NAME (TOML: query = NAME)"
        ]


def _refuse_qrels_read_as_preferences(first_line: str | None, label: str) -> None:
    """All-zero TREC qrels are not preferences, although ``q1 0 d1 0`` fits ``qid a b winner``.

    Called when the first line is also a TREC qrels line and the item ``0``
    (the iteration field, grade 0) won every comparison: the file is refused
    rather than read as preferences; ``--format prefs-release`` reads it anyway.
    """
    raise InputError(
        "this looks like TREC qrels with every grade 0 (query iteration item grade), "
        "not preferences",
        file=label,
        line=1,
        value=(first_line or "").strip(),
        hint="ingest it with `orlbuild ingest graded`; if these really are "
        "preferences, pass --format prefs-release",
    )


def input_format(kind: str, path: str | Path, fmt: InputFormat | None = None) -> InputFormat:
    """The format :func:`read_input` reads ``path`` in (``--format``, else content or name).

    Only the start of the file is read (its first data line).
    """
    source = Source(str(path))
    first_line, _texts = _with_first_line(source.texts())
    return _choose_format(KINDS[InputKind(kind)], source.name, fmt, first_line)
