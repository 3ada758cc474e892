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
from typing import BinaryIO

import numpy as np
import pandas as pd

from orlbuild.errors import ConfigError, InputError
from orlbuild.gc_pause import paused_gc
from orlbuild.ingest.kinds import DEFAULT_QUERY, KINDS, NAME_COLUMNS, Facts, IngestKind
from orlbuild.ingest.name_codes import Vocabularies
from orlbuild.ingest.rows import RecordLayout, is_comment, read_chunks
from orlbuild.ingest.source import STDIN, Source, detect_format, sniff_trec
from orlbuild.ingest.trec_reader import NAME_LENGTH
from orlbuild.vocabulary import InputFormat, InputKind
from scoring.vocabulary import DuplicatePolicy, ScorePrecisionName

__all__ = [
    "SHAPE_FORMATS",
    "TABULAR_FORMATS",
    "ParsedInput",
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
    """

    kind: str
    facts: Facts
    vocabularies: Vocabularies
    label: str
    sha256: str
    dropped: int
    notes: tuple[str, ...] = ()

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
        """SHA-256 of the rows and names this reading keeps, in order.

        Two readings of the same bytes store the same batch exactly when their
        digests agree; ``--duplicates`` or ``--score-precision`` may keep other
        rows of the same file.
        """
        digest = hashlib.sha256(self.kind.encode())
        for vocabulary, names in sorted(self.vocabularies.as_lists().items()):
            digest.update(f"\x1e{vocabulary}\x1e".encode())
            digest.update("\x1f".join(names).encode())
        for column in sorted(self.facts):
            values = np.asarray(self.facts[column])
            digest.update(f"\x1e{column}:{values.dtype.str}\x1e".encode())
            if values.dtype.kind == "O":
                digest.update("\x1f".join(map(repr, values.tolist())).encode())
            else:
                digest.update(np.ascontiguousarray(values).tobytes())
        return digest.hexdigest()


def read_input(
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
) -> ParsedInput:
    """Read and validate one file exactly as ingesting it does, without storing it.

    Used by :func:`orlbuild.services.ingests.ingest_file` before it stores,
    and by ``orlbuild eval`` to score files without a database. Parameters
    are those of ``ingest_file``; ``format_option`` is the option that
    error hints name for forcing the format; ``query`` (pairwise only,
    ``--query``) puts every row into that one query.

    Raises
    ------
    InputError
        Naming the file, line and value of the first problem.
    """
    spec = KINDS[InputKind(kind)]
    if query is not None and kind != InputKind.pairwise:
        raise ConfigError("--query applies to pairwise preferences only")
    source = Source(str(path), stream=stream, on_progress=on_progress)
    vocab = Vocabularies()
    with paused_gc():
        first_line, texts = _with_first_line(source.texts())
        chosen = _choose_format(spec, source.name, fmt, first_line, format_option)
        parts: list[Facts] = []
        line_parts: list[np.ndarray] = []
        notes: list[str] = []
        shapes = _shapes(spec, fmt)
        without_query = False
        for chunk in read_chunks(texts, chosen, shapes, source.label, notes):
            parts.append(spec.parse(chunk, source.label, vocab))
            line_parts.append(chunk.lines)
            without_query = without_query or "query" not in chunk.columns
        facts = _concatenate(parts)
        vocab.finish(facts, NAME_COLUMNS)
        lines = np.concatenate(line_parts)
        if kind == "pairwise" and fmt is None and chosen is InputFormat.prefs_release:
            _refuse_qrels_read_as_preferences(facts, vocab, first_line, source.label)
        facts, dropped = spec.check(
            facts, lines, source.label, vocab, duplicates, score_precision, notes
        )
        if kind == "pairwise":
            if query is not None:
                facts = _into_one_query(facts, vocab, query, source.label, notes)
            elif without_query:
                notes.append(
                    f"{source.label}: no query column: every row is in query "
                    f"{DEFAULT_QUERY!r} (name it with --query NAME)"
                )
            else:
                notes.extend(_per_battle_warning(facts, vocab, source.label))
    return ParsedInput(kind, facts, vocab, source.label, source.sha256, dropped, tuple(notes))


#: Below this many queries, two-item queries are not taken for per-battle ids.
PER_BATTLE_MIN_QUERIES = 10


def _per_battle_warning(facts: Facts, vocab: Vocabularies, label: str) -> list[str]:
    """A warning when most queries compare only two items (a per-battle id read as the query)."""
    if not len(facts["query_id"]) or len(vocab.queries.names) < PER_BATTLE_MIN_QUERIES:
        return []
    queries = np.concatenate([facts["query_id"], facts["query_id"]]).astype(np.int64)
    items = np.concatenate([facts["winner_id"], facts["loser_id"]]).astype(np.int64)
    width = int(items.max()) + 1
    per_query = np.bincount(np.unique(queries * width + items) // width)  # distinct items
    per_query = per_query[per_query > 0]
    two = int((per_query <= 2).sum())
    if two * 2 <= len(per_query):
        return []
    return [
        f"{label}: {two} of {len(per_query)} queries compare only two items: a per-battle id "
        "(such as LMArena's question_id) was probably read as the query; to rank all items "
        "in one leaderboard, ingest again with --query NAME (TOML: query = NAME)"
    ]


def _into_one_query(
    facts: Facts, vocab: Vocabularies, query: str, label: str, notes: list[str]
) -> Facts:
    """Every row in query ``query`` (``--query``); the file's own query ids are not kept."""
    name = query.strip()
    if not name or len(name) > NAME_LENGTH or "\x00" in name:
        raise ConfigError(f"invalid --query {query!r}: use 1 to {NAME_LENGTH} characters")
    replaced = [q for q in vocab.queries.names if q != name]
    if replaced:
        shown = ", ".join(repr(q) for q in replaced[:3]) + (" ..." if len(replaced) > 3 else "")
        notes.append(
            f"{label}: --query {name!r} puts every row into one query; the file's "
            f"{len(replaced)} query id(s) ({shown}) are not stored"
        )
    vocab.queries.names = [name]
    return {**facts, "query_id": np.zeros(len(facts["query_id"]), dtype=np.int64)}


def _refuse_qrels_read_as_preferences(
    facts: Facts, vocab: Vocabularies, first_line: str | None, label: str
) -> None:
    """All-zero TREC qrels are not preferences, although ``q1 0 d1 0`` fits ``qid a b winner``.

    When the first line is also a TREC qrels line and the item ``0`` (the
    iteration field, grade 0) wins every comparison, the file is refused
    rather than read as preferences; ``--format prefs-release`` reads it anyway.
    """
    if sniff_trec(first_line) is not InputFormat.qrels:
        return
    winners = np.unique(facts["winner_id"])
    if len(winners) == 1 and vocab.items.names[int(winners[0])] == "0":
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
