"""Ingest one file: read, validate, and store it as one batch in one transaction.

The file is streamed once (hashing, decoding and parsing in chunks), checked
completely, and only then written; any error leaves the store untouched.
Identical content already stored is reported and skipped when this reading
keeps the same rows (README, "Input formats"); read another way it is refused.
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
from sqlalchemy import Engine

from orlbuild.errors import ConfigError, InputError
from orlbuild.ingest.kinds import KINDS, DuplicatePolicy, Facts, IngestKind, ScorePrecisionName
from orlbuild.ingest.records import RecordLayout, read_chunks
from orlbuild.ingest.source import STDIN, InputFormat, Source, detect_format, sniff_trec
from orlbuild.ingest.vocabulary import Vocabularies
from orlbuild.store.batches import NAME_COLUMNS, NewBatch, store_batch
from orlbuild.store.bulk import paused_gc
from orlbuild.store.models import NAME_LENGTH
from orlbuild.store.read import DEFAULT_COLLECTION
from orlbuild.store.users import USER_ENV_VAR, current_user

__all__ = [
    "USER_ENV_VAR",
    "IngestResult",
    "ParsedInput",
    "ingest_file",
    "ingest_graded_file",
    "ingest_listwise_file",
    "ingest_pairwise_file",
    "ingest_run_file",
    "kind_formats",
    "read_input",
]


@dataclass(frozen=True)
class IngestResult:
    """What an ingest did.

    Attributes
    ----------
    batch_id
        The new batch, or the existing one holding identical content.
    created
        ``False`` when the content was already stored (nothing was written).
    kind, file_name, sha256
        The input.
    rows
        Rows stored in the batch.
    dropped
        Rows not stored: identical repeated grades, or run lines dropped by
        ``--duplicates keep-first``.
    system
        The run's system (runs only).
    new_queries
        Runs only: queries the collection did not hold before this run.
    notes
        Warnings about the file (columns read but ignored).
    score_precision
        Runs only: how scores were compared to choose the line kept of a
        repeated (query, item).
    """

    batch_id: int
    created: bool
    kind: str
    file_name: str
    sha256: str
    rows: int
    dropped: int = 0
    system: str | None = None
    new_queries: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    score_precision: str | None = None

    @property
    def warnings(self) -> list[str]:
        """What the user must hear about besides the outcome (standard error)."""
        lines = list(self.notes)
        if self.new_queries:
            shown = ", ".join(repr(q) for q in self.new_queries[:5])
            more = f" and {len(self.new_queries) - 5} more" if len(self.new_queries) > 5 else ""
            lines.append(
                f"{len(self.new_queries)} queries of this run are new to the collection: "
                f"{shown}{more}; check that the run uses the judgments' query ids "
                "(they are compared exactly)"
            )
        return lines

    @property
    def message(self) -> str:
        """One line for the user."""
        if not self.created:
            owner = f", a run of system {self.system!r}" if self.system else ""
            return (
                f"{self.file_name} is already stored as batch {self.batch_id} (same content, "
                f"sha256 {self.sha256[:12]}{owner}); nothing to do"
            )
        text = f"stored {self.rows} {self.kind} rows from {self.file_name} as batch {self.batch_id}"
        if self.system:
            text += f" (system {self.system!r})"
        if self.dropped:
            text += f"; skipped {self.dropped} repeated rows"
            if self.score_precision:
                text += f" (kept the best-ordered line, scores as {self.score_precision})"
        return text


def _with_first_line(lines: Iterator[str]) -> tuple[str | None, Iterator[str]]:
    """Peek at the first non-blank line without losing it."""
    seen: list[str] = []
    for text in lines:
        seen.append(text)
        if text.strip():
            break
    first = seen[-1] if seen and seen[-1].strip() else None
    return first, itertools.chain(seen, lines)


#: Formats that name a shape of a kind rather than a file syntax (the syntax comes
#: from the extension): ``--format arena``.
SHAPE_FORMATS = {InputFormat.arena: "arena"}


#: File syntaxes every kind can be written in (a header names the columns).
TABULAR_FORMATS = (InputFormat.tsv, InputFormat.csv, InputFormat.jsonl)


def kind_formats(kind: str) -> tuple[InputFormat, ...]:
    """The ``--format`` values that apply to ``kind`` (README, "Input formats").

    The kind's own headerless format (``qrels``, ``trec``), the tabular
    syntaxes, then its other shapes: named ones (``arena``) and headerless
    ones (``prefs-release``, ``trec-prefs``).
    """
    spec = KINDS[kind]
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
    if first_line is None or "," in first_line or first_line.lstrip().startswith("{"):
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
    """Join the per-chunk facts column by column."""
    return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}


def _check_name(value: str, what: str) -> str:
    """A collection or system name: non-empty after stripping, not too long."""
    name = value.strip()
    if not name or len(name) > NAME_LENGTH:
        raise ConfigError(f"invalid {what} name {value!r}: use 1 to {NAME_LENGTH} characters")
    return name


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


def _reading_words(
    kind: str,
    fmt: InputFormat | None,
    duplicates: DuplicatePolicy,
    score_precision: ScorePrecisionName,
) -> str:
    """The reading options in the words of the command line, for messages."""
    words = [f"--format {fmt.value}" if fmt is not None else "detected format"]
    words.append(f"--duplicates {DuplicatePolicy(duplicates).value}")
    if kind == "run":
        words.append(f"--score-precision {ScorePrecisionName(score_precision).value}")
    return ", ".join(words)


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
) -> ParsedInput:
    """Read and validate one file exactly as :func:`ingest_file` does, without storing it.

    Used by ``orlbuild eval`` to score files without a database. Parameters
    are those of :func:`ingest_file`; ``format_option`` is the option that
    error hints name for forcing the format.

    Raises
    ------
    InputError
        Naming the file, line and value of the first problem.
    """
    spec = KINDS[kind]
    source = Source(str(path), stream=stream, on_progress=on_progress)
    vocab = Vocabularies()
    with paused_gc():
        first_line, lines = _with_first_line(source.lines())
        chosen = _choose_format(spec, source.name, fmt, first_line, format_option)
        parts: list[Facts] = []
        line_parts: list[np.ndarray] = []
        notes: list[str] = []
        shapes = _shapes(spec, fmt)
        for chunk in read_chunks(lines, chosen, shapes, source.label, notes):
            parts.append(spec.parse(chunk, source.label, vocab))
            line_parts.append(chunk.lines)
        facts = _concatenate(parts)
        vocab.finish(facts, NAME_COLUMNS)
        facts, dropped = spec.check(
            facts, np.concatenate(line_parts), source.label, vocab, duplicates, score_precision
        )
    return ParsedInput(kind, facts, vocab, source.label, source.sha256, dropped, tuple(notes))


def ingest_file(
    engine: Engine,
    kind: str,
    path: str | Path,
    *,
    collection: str = DEFAULT_COLLECTION,
    fmt: InputFormat | None = None,
    system: str | None = None,
    duplicates: DuplicatePolicy = DuplicatePolicy.error,
    stream: BinaryIO | None = None,
    on_progress: Callable[[int], None] | None = None,
    on_write: Callable[[int, int], None] | None = None,
    score_precision: ScorePrecisionName = ScorePrecisionName.float32,
) -> IngestResult:
    """Read, validate and store one file of judgments or one run (README, "Input formats").

    Parameters
    ----------
    engine
        A store engine at the newest schema (:func:`orlbuild.store.open_store`).
    kind
        ``listwise``, ``pairwise``, ``graded`` or ``run``.
    path
        The file, or ``-`` for standard input.
    collection
        Collection to store into (created if new).
    fmt
        Force a format instead of detecting it from the extension.
    system
        The system a run belongs to (required for runs).
    duplicates
        Runs only: a repeated (query, item) is an error, or ``keep-first``
        keeps its best-ordered occurrence.
    stream
        Read from this binary stream instead of opening ``path`` (which is
        then only the name used in messages).
    on_progress
        Called with the number of bytes read, for progress bars.
    on_write
        Called with the number of rows just written and the total, while the
        batch is written (the second phase of a progress display).
    score_precision
        Runs only: scores compared as float32 (default) or float64 when
        ``keep-first`` orders repeated lines (README, "Score precision").

    Returns
    -------
    IngestResult
        The batch written, or the existing batch with identical content.

    Raises
    ------
    InputError
        Bad input; the message names the file, line and value. Nothing is stored.
    """
    collection = _check_name(collection, "collection")
    if kind == "run":
        if system is None:
            raise ConfigError("ingesting a run needs the system's name: pass --system NAME")
        system = _check_name(system, "system")
    elif system is not None:
        raise ConfigError("--system applies to runs only")
    parsed = read_input(
        kind,
        path,
        fmt=fmt,
        duplicates=duplicates,
        stream=stream,
        on_progress=on_progress,
        score_precision=score_precision,
    )
    with paused_gc():
        stored = store_batch(
            engine,
            NewBatch(
                kind=kind,
                collection=collection,
                file_name=parsed.label,
                sha256=parsed.sha256,
                created_by=current_user(),
                vocabularies=parsed.vocabularies.as_lists(),
                facts=parsed.facts,
                system=system,
                reading_sha256=parsed.reading_sha256(),
                reading=_reading_words(kind, fmt, duplicates, score_precision),
            ),
            on_rows=None if on_write is None else _rows_written(on_write, len(parsed)),
        )
    return IngestResult(
        batch_id=stored.id,
        created=stored.created,
        kind=kind,
        file_name=parsed.label,
        sha256=parsed.sha256,
        rows=stored.row_count,
        dropped=parsed.dropped if stored.created else 0,
        system=stored.system,
        new_queries=stored.new_queries,
        notes=parsed.notes,
        score_precision=ScorePrecisionName(score_precision).value if kind == "run" else None,
    )


def _rows_written(on_write: Callable[[int, int], None], total: int) -> Callable[[int], None]:
    """Adapt a ``(rows, total)`` callback to the store's ``rows`` callback."""
    return lambda n: on_write(n, total)


def ingest_listwise_file(engine: Engine, path: str | Path, **options: object) -> IngestResult:
    """Ingest listwise judgments (``query, annotator, item, rank``); see :func:`ingest_file`."""
    return ingest_file(engine, "listwise", path, **options)  # type: ignore[arg-type]


def ingest_pairwise_file(engine: Engine, path: str | Path, **options: object) -> IngestResult:
    """Ingest pairwise preferences (``query, annotator, winner, loser, tie``)."""
    return ingest_file(engine, "pairwise", path, **options)  # type: ignore[arg-type]


def ingest_graded_file(engine: Engine, path: str | Path, **options: object) -> IngestResult:
    """Ingest graded labels (TREC qrels or ``query, annotator, item, grade``)."""
    return ingest_file(engine, "graded", path, **options)  # type: ignore[arg-type]


def ingest_run_file(
    engine: Engine, path: str | Path, *, system: str, **options: object
) -> IngestResult:
    """Ingest a system's run (TREC run or ``query, item, rank, score``)."""
    return ingest_file(engine, "run", path, system=system, **options)  # type: ignore[arg-type]
