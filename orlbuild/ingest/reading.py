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
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, ParamSpec

import numpy as np
import pandas as pd

from orlbuild.errors import ConfigError, InputError
from orlbuild.gc_pause import paused_gc
from orlbuild.ingest.characters import INVISIBLE_CHARACTERS, describe, visible
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
from orlbuild.nesting import checked_json_text
from orlbuild.records import NamedChunk
from orlbuild.vocabulary import InputFormat, InputKind
from scoring.vocabulary import DuplicatePolicy, ScorePrecisionName

__all__ = [
    "HEADERLESS_FIELDS",
    "SHAPE_FORMATS",
    "TABULAR_FORMATS",
    "InputStream",
    "ParsedInput",
    "ReadingDigest",
    "input_format",
    "kind_formats",
    "read_input",
    "refuse_wrong_kind",
    "shape_words",
]


#: Characters of the start of a file looked at to find its first line.
HEAD_CHARS = 1 << 16


def _with_first_line(texts: Iterator[str]) -> tuple[str | None, Iterator[str]]:
    """Peek at the first non-blank, non-comment line without losing it.

    Only the first :data:`HEAD_CHARS` characters are looked at (a one-line
    JSON array may be the whole file): a longer first line is returned cut.
    """
    head, texts = _with_head(texts)
    return _first_line_of(head, final=True), texts


def _with_head(texts: Iterator[str]) -> tuple[str, Iterator[str]]:
    """The decoded start of the file (at least its first line, or :data:`HEAD_CHARS`), and
    the whole content, that start included."""
    seen: list[str] = []
    head = ""
    for text in texts:
        seen.append(text)
        head += text
        if _first_line_of(head) is not None or len(head) > HEAD_CHARS:
            break
    return head, itertools.chain(seen, texts)


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


#: The fields of each headerless format, in the words docs/input-formats.md uses.
HEADERLESS_FIELDS = {
    InputFormat.prefs_release: "qid a b winner",
    InputFormat.trec_prefs: "qid jg jsg docno rel_level",
    InputFormat.qrels: "query iteration item grade",
    InputFormat.trec: "query Q0 item rank score tag",
}


def shape_words(fmt: InputFormat, shapes: tuple[RecordLayout, ...], chunk: ColumnChunk) -> str:
    """How a file was read, for the ingest message: ``prefs-release: qid a b winner``,
    ``native tsv: query winner loser`` (the shape, when the kind has several, the syntax
    and the columns the file gives)."""
    if fmt in HEADERLESS_FIELDS:
        return f"{fmt.value}: {HEADERLESS_FIELDS[fmt]}"
    shape = f"{chunk.shape} " if len(shapes) > 1 else ""
    return f"{shape}{fmt.value}: {' '.join(chunk.columns)}"


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
    *,
    sniff_headerless: bool = True,
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
    if override is None and sniff and sniff_headerless:
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
    columns
        ``--columns``: the file's column names (lower case) -> ours
        (:func:`orlbuild.ingest.column_names.parse_column_map`).
    require_answers
        Pairwise only (``--require-answers``): a row whose answer (``winner``,
        crowd-kit's ``label``) is empty is an error, instead of a pair not
        judged yet that is skipped and counted in ``notes``
        (docs/input-formats.md, "Partly answered plan files").

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
    shape_read
        How the file is read (:func:`shape_words`), once its first rows are.
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
        require_answers: bool = False,
        columns: Mapping[str, str] | None = None,
    ) -> None:
        self.kind = kind
        self._require_answers = require_answers
        self._columns = dict(columns or {})
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
        self.shape_read: str | None = None
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
        head, texts = _with_head(self._source.texts())
        first_line = _first_line_of(head, final=True)
        if self._fmt is None and not self._columns:
            refuse_wrong_kind(self.kind, head, first_line, self.label, self._format_option)
        chosen = _choose_format(
            self._spec,
            self._source.name,
            self._fmt,
            first_line,
            self._format_option,
            sniff_headerless=not self._columns,
        )
        shapes = _shapes(self._spec, self._fmt)
        chunks = read_chunks(texts, chosen, shapes, self.label, self.notes, self._columns)
        first = next(chunks)  # a file without rows raises here
        self.shape_read = shape_words(chosen, shapes, first)
        rest = itertools.chain([first], chunks)
        if self.kind == InputKind.pairwise and first.shape != "trec-prefs":
            qrels_like = (
                self._fmt is None
                and chosen is InputFormat.prefs_release
                and sniff_trec(first_line) is InputFormat.qrels
            )
            answered = _Answered(self.label, require=self._require_answers)
            yield from self._pairwise_chunks(
                answered.chunks(rest), first_line if qrels_like else None
            )
            self.notes.extend(answered.notes())
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
        lines = np.concatenate(line_parts)
        invisible = _Invisible(label)
        invisible.check(
            {v: np.asarray(n, dtype=object) for v, n in vocab.as_lists().items()}, facts, lines
        )
        if invisible.note is not None:
            self.notes.append(invisible.note)
        facts, self.dropped = spec.check(
            facts,
            lines,
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
        invisible = _Invisible(label)
        for chunk in chunks:
            vocab = Vocabularies()
            facts = spec.parse(chunk, label, vocab)
            vocab.finish(facts, NAME_COLUMNS)
            invisible.check(
                {v: np.asarray(n, dtype=object) for v, n in vocab.as_lists().items()},
                facts,
                chunk.lines,
            )
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
        if invisible.note is not None:
            self.notes.append(invisible.note)
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


class _Invisible:
    """Zero-width and bidi-control characters in ids: one warning per file naming the first
    line, and a preference whose two items differ only by them refused
    (:mod:`orlbuild.ingest.characters`)."""

    def __init__(self, label: str) -> None:
        self._label = label
        self.note: str | None = None

    def check(self, names: dict[str, np.ndarray], facts: Facts, lines: np.ndarray) -> None:
        """Look at one chunk (``facts`` rows aligned with ``lines``, codes into ``names``)."""
        bad = {
            vocabulary: np.fromiter(
                (INVISIBLE_CHARACTERS.search(n) is not None for n in values), bool, len(values)
            )
            for vocabulary, values in names.items()
            if len(values) and INVISIBLE_CHARACTERS.search("\x1f".join(values.tolist()))
        }
        if not bad:
            return
        if "items" in bad and "winner_id" in facts:
            self._refuse_twins(names["items"], facts, lines)
        if "items" in bad and {"annotator_id", "item_id", "rank"} <= facts.keys():
            self._refuse_listed_twins(names["items"], facts, lines)
        if self.note is not None:
            return
        first: tuple[int, str, str] | None = None
        for column, vocabulary in NAME_COLUMNS.items():
            if vocabulary not in bad or column not in facts:
                continue
            rows = np.flatnonzero(bad[vocabulary][facts[column]])
            if rows.size and (first is None or rows[0] < first[0]):
                first = (int(rows[0]), column, names[vocabulary][facts[column][rows[0]]])
        if first is None:
            return
        row, column, name = first
        self.note = (
            f"{self._label}, line {int(lines[row])}: {column.removesuffix('_id')} {name!r} holds "
            f"an invisible character ({describe(name)}); ids are compared exactly, so it is not "
            f"{visible(name)!r} (the first such id of the file)"
        )

    def _refuse_twins(self, items: np.ndarray, facts: Facts, lines: np.ndarray) -> None:
        """A preference between two items that look the same is refused."""
        seen = np.asarray([visible(n) for n in items.tolist()], dtype=object)
        winner, loser = facts["winner_id"], facts["loser_id"]
        twins = np.flatnonzero((winner != loser) & (seen[winner] == seen[loser]))
        if twins.size:
            row = int(twins[0])
            a, b = items[winner[row]], items[loser[row]]
            raise InputError(
                f"the two items differ only by invisible characters ({describe(a) or describe(b)})",
                file=self._label,
                line=int(lines[row]),
                value=f"{a!r} vs {b!r}",
                hint="remove the zero-width or bidi-control characters from the ids",
            )

    def _refuse_listed_twins(self, items: np.ndarray, facts: Facts, lines: np.ndarray) -> None:
        """A list (query and annotator) holding two items that look the same is refused: its
        ranks state an order (or a tie) between them."""
        import pandas as pd

        seen = pd.factorize(np.asarray([visible(n) for n in items.tolist()], dtype=object))[0]
        frame = pd.DataFrame(
            {
                "query": facts["query_id"],
                "annotator": facts["annotator_id"],
                "seen": seen[facts["item_id"]],
                "item": facts["item_id"],
            }
        )
        distinct = frame.groupby(["query", "annotator", "seen"])["item"].transform("nunique")
        twins = np.flatnonzero(distinct.to_numpy() > 1)
        if twins.size:
            row = int(twins[-1])  # the second of the two: the line that makes the pair
            key = frame.iloc[row]
            first = frame[
                (frame["query"] == key["query"])
                & (frame["annotator"] == key["annotator"])
                & (frame["seen"] == key["seen"])
                & (frame["item"] != key["item"])
            ].iloc[0]
            a, b = items[int(first["item"])], items[int(key["item"])]
            raise InputError(
                "one list holds two items that differ only by invisible characters "
                f"({describe(a) or describe(b)})",
                file=self._label,
                line=int(lines[row]),
                value=f"{a!r} vs {b!r}",
                hint="remove the zero-width or bidi-control characters from the ids",
            )


#: The column that holds a pairwise shape's answer (empty: the pair is not judged yet).
ANSWER_COLUMNS = {"arena": "winner", "evalica": "winner", "crowd-kit": "label"}


class _Answered:
    """Rows of a partly answered file (``orlbuild plan``'s, ``winner`` empty): skipped, counted.

    With ``require`` an empty answer is an error naming its line instead.
    """

    def __init__(self, label: str, *, require: bool) -> None:
        self._label, self._require = label, require
        self.skipped, self._first, self._rows = 0, 0, 0
        self._column = "winner"

    def chunks(self, chunks: Iterator[ColumnChunk]) -> Iterator[ColumnChunk]:
        """The chunks without their unanswered rows."""
        for chunk in chunks:
            self._rows += len(chunk)
            column = ANSWER_COLUMNS.get(chunk.shape)
            if column is None:
                yield chunk
                continue
            said = chunk.columns[column]
            empty = np.fromiter((not v.strip() for v in said), dtype=bool, count=len(said))
            if not empty.any():
                yield chunk
                continue
            where = int(np.flatnonzero(empty)[0])
            if self._require:
                raise InputError(
                    f"{column} is not answered (the cell is empty)",
                    file=self._label,
                    line=int(chunk.lines[where]),
                    hint=f"fill {column} in every row, or leave out --require-answers to skip "
                    "the rows not answered",
                )
            if not self.skipped:
                self._first, self._column = int(chunk.lines[where]), column
            self.skipped += int(empty.sum())
            kept = np.flatnonzero(~empty)
            yield ColumnChunk(
                chunk.lines[kept],
                {
                    name: [values[i] for i in kept.tolist()]
                    for name, values in chunk.columns.items()
                },
                chunk.shape,
            )
        if self.skipped and self.skipped == self._rows:
            raise InputError(
                f"no row is answered (every {self._column} is empty)",
                file=self._label,
                line=self._first,
                hint=f"fill {self._column} in the rows judged",
            )

    def notes(self) -> list[str]:
        """The warning counting the rows skipped, if any."""
        if not self.skipped:
            return []
        return [
            f"{self._label}: skipped {self.skipped} row(s) not answered (empty {self._column}, "
            f"first at "
            f"line {self._first}); pass --require-answers to refuse such a file"
        ]


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


#: The headerless TREC formats recognised by content: what they are called, their fields
#: and the ingest command that reads them.
TREC_KINDS = {
    InputFormat.qrels: ("TREC qrels", InputKind.graded),
    InputFormat.trec: ("TREC run", InputKind.run),
}


def refuse_wrong_kind(
    kind: str, head: str, first_line: str | None, label: str, format_option: str = "--format"
) -> None:
    """Refuse a TREC qrels or run file given to the ingest of another kind, before any row.

    The file's kind is recognised by content as ``orlbuild eval`` does
    (:func:`~orlbuild.ingest.source.sniff_trec`). A pairwise file whose
    first line is also a ``qid a b winner`` preference (``q1 0 d1 0``) is
    taken for qrels only when a line of the start of the file is qrels and
    not a preference; one whose every line is both is judged at its end
    (:func:`_refuse_qrels_read_as_preferences`).

    Raises
    ------
    InputError
        ``this is a TREC qrels file; use `orlbuild ingest graded```, naming
        line 1 (``--format`` reads the file anyway).
    """
    found = sniff_trec(first_line)
    if found is None:
        _refuse_other_header(kind, first_line, label, format_option)
        return
    if found in kind_formats(kind):
        return
    if kind == InputKind.pairwise and found is InputFormat.qrels:
        lines = [t for t in head.splitlines() if t.strip() and not is_comment(t)]
        complete = lines[:-1] if len(head) > HEAD_CHARS and len(lines) > 1 else lines
        preference = next(
            layout
            for layout in KINDS[InputKind.pairwise].layouts
            if layout.headerless is InputFormat.prefs_release
        ).headerless_test
        if not any(
            sniff_trec(t) is InputFormat.qrels
            and preference is not None
            and not preference(t.split())
            for t in complete
        ):
            return
    name, command = TREC_KINDS[found]
    raise InputError(
        f"this is a {name} file; use `orlbuild ingest {command.value}`",
        file=label,
        line=1,
        value=(first_line or "").strip()[:200],
        hint=f"its lines read as {HEADERLESS_FIELDS[found]}; if it really holds {kind} data, "
        f"name its format with {format_option}",
    )


def _header_names(first_line: str | None) -> set[str] | None:
    """The column names of a header row or of a first JSON object, lower-cased (else ``None``)."""
    text = (first_line or "").strip()
    if text.startswith("["):
        return None  # a JSON array: its first object may span lines
    if text.startswith("{"):
        try:  # a line nested too deep is left to the reader, which refuses it naming its line
            keys = json.loads(checked_json_text(text, "header"))
        except (ValueError, InputError):
            return None
        return {str(k).strip().lower() for k in keys} if isinstance(keys, dict) else None
    return {f.strip().strip('"').lower() for f in text.split("\t" if "\t" in text else ",")}


def _fits(layout: RecordLayout, names: set[str]) -> bool:
    """Whether ``names`` hold every column ``layout`` requires (by name or alias)."""
    if layout.tier_list_key is not None and layout.tier_list_key in names:
        return "query" in names
    return all({c.name, *c.aliases} & names for c in layout.columns if c.required)


def _refuse_other_header(kind: str, first_line: str | None, label: str, format_option: str) -> None:
    """Refuse a header that no shape of ``kind`` fits but another kind's does."""
    names = _header_names(first_line)
    if not names or any(_fits(layout, names) for layout in KINDS[InputKind(kind)].layouts):
        return
    others = [
        other
        for other in InputKind
        if other != kind and any(_fits(layout, names) for layout in KINDS[other].layouts)
    ]
    if not others:
        return
    commands = " or ".join(f"`orlbuild ingest {other.value}`" for other in others)
    kinds = " or ".join(other.value for other in others)
    raise InputError(
        f"this is a {kinds} file; use {commands}",
        file=label,
        line=1,
        value=(first_line or "").strip()[:200],
        hint=f"its columns are those of {kinds} data, and fit no {kind} shape "
        f"({format_option} does not change that)",
    )


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
