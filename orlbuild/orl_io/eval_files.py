"""Reading ORLs and runs straight from files, without a database (``orlbuild eval``).

ORL files (docs/input-formats.md, "Input formats"): TREC qrels or a graded table (converted by the
graded route, native grades kept), a ``query item rank`` table (read with the
listwise rules: ranks consecutive from 1 per query), or the JSON export
``{"build": {...}, "queries": {query: {item: rank}}}``. Runs: TREC runs or
``query, item, rank[, score]`` tables. Files are read and validated by the
same code as ``orlbuild ingest``, so every error names the file, line and value.

TREC qrels and runs are recognised by their content whatever the file is
called, and ``.gz``/``.bz2`` files are read directly (docs/evaluating-files.md, "Evaluating
files"). Good TREC files are read by the C-speed reader of
:mod:`orlbuild.ingest.trec_reader`; anything it cannot vouch for is read again by the
line-exact ingest reader, whose error names the line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from orlbuild.errors import InputError
from orlbuild.ingest.run_order import rank_order_note_of_file
from orlbuild.ingest.source import (
    STDIN,
    base_suffix,
    open_input,
    require_regular_file,
    sniff_trec,
)
from orlbuild.ingest.trec_reader import fast_trec_frame, fast_trec_qrels
from orlbuild.nesting import checked_json_text
from orlbuild.vocabulary import InputFormat
from scoring import ORL, ScoringError
from scoring.orl import orls_from_coded_grades, orls_from_grade_table
from scoring.vocabulary import DuplicatePolicy, ScorePrecisionName

if TYPE_CHECKING:
    import pandas as pd

    from scoring.run import CodedRuns

__all__ = [
    "ParsedFile",
    "comment_notes",
    "first_line",
    "parse_file",
    "read_eval_files",
    "read_orl_file",
    "read_run_file",
]


@dataclass(frozen=True)
class ParsedFile:
    """One validated input file: typed columns with names decoded to strings.

    Attributes
    ----------
    frame
        One row per kept input row; id columns hold strings.
    label
        How messages name the file.
    sha256
        Hex digest of the file's bytes.
    dropped
        Rows dropped by ``--duplicates keep-first``.
    notes
        The reader's warnings, e.g. columns the kind does not use (docs/input-formats.md,
        "Input formats": never dropped without a word).
    """

    frame: pd.DataFrame
    label: str
    sha256: str
    dropped: int
    notes: tuple[str, ...] = ()


def _refuse_swapped(
    path: Path, first: str | None, found: InputFormat, message: str, hint: str
) -> None:
    """Refuse a file whose first line is ``found`` (TREC run or qrels) in the other's place."""
    if sniff_trec(first) is found:
        raise InputError(message, file=str(path), line=1, value=(first or "").strip(), hint=hint)


def parse_file(
    kind: str,
    path: str | Path,
    *,
    fmt: InputFormat | None = None,
    duplicates: DuplicatePolicy = DuplicatePolicy.error,
    format_option: str = "--format",
    score_precision: ScorePrecisionName = ScorePrecisionName.float32,
) -> ParsedFile:
    """Read and validate a file of one input kind (``listwise``, ``graded``, ``run``, ...).

    ``format_option`` is the option error hints name for forcing the format;
    ``score_precision`` orders the repeated lines of a run under ``keep-first``.

    Raises
    ------
    InputError
        Naming the file, line and value of the first problem.
    """
    from orlbuild.ingest.reading import read_input

    parsed = read_input(
        kind,
        path,
        fmt=fmt,
        duplicates=duplicates,
        format_option=format_option,
        score_precision=score_precision,
    )
    return ParsedFile(
        parsed.decoded(), parsed.label, parsed.sha256, parsed.dropped, tuple(parsed.notes)
    )


def _orls_from_json(path: Path) -> dict[str, ORL]:
    """The ORL export's ``queries`` object, validated query by query."""
    label = str(path)
    require_regular_file(path, label)
    try:
        with path.open("rb") as raw:
            document = json.loads(
                checked_json_text(open_input(raw).read().decode("utf-8-sig"), label)
            )
    except UnicodeDecodeError:
        raise InputError("not valid UTF-8", file=label, hint="save the file as UTF-8") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", file=label, line=exc.lineno) from None
    queries = document.get("queries") if isinstance(document, dict) else None
    if not isinstance(queries, dict) or not queries:
        raise InputError(
            'expected an object with a non-empty "queries" member',
            file=label,
            hint='the ORL export shape is {"build": {...}, "queries": {"q1": {"d1": 1}}}',
        )
    orls = {}
    for query, ranks in queries.items():
        if not isinstance(ranks, dict):
            raise InputError("an ORL must map items to ranks", file=label, value=query)
        try:
            orls[str(query)] = ORL(ranks)
        except ScoringError as exc:
            raise InputError(f"query {query!r}: {exc}", file=label) from None
    return orls


def read_orl_file(
    path: str | Path,
    *,
    fmt: InputFormat | None = None,
    grade_agg: str = "median",
    format_option: str = "--orl-format",
) -> tuple[dict[str, ORL], list[str]]:
    """Read ORLs from a qrels/graded table, a ``query item rank`` table or the JSON export.

    Parameters
    ----------
    path
        The file, plain or gzip/bz2-compressed. TREC qrels are recognised by
        their content (``query iteration item grade``), whatever the name;
        ``.json`` is the ORL export; other files are tables whose columns
        decide: ``grade`` -> graded labels, ``rank`` -> explicit ORL ranks.
    fmt
        Force the table format.
    grade_agg
        How several annotators' grades are combined (``median``, ``mean``,
        ``max``, ``majority``; see :mod:`orlbuild.builders.graded`).
    format_option
        The option error hints name for forcing the format.

    Returns
    -------
    tuple
        ``{query: ORL}`` and warnings (queries left without an ORL).
    """
    path = Path(path)
    first = first_line(path)
    suffix = base_suffix(str(path))
    if fmt is None:
        _refuse_swapped(
            path,
            first,
            InputFormat.trec,
            "this is a TREC run (query Q0 item rank score tag), not ORLs",
            "give the qrels (or ORL file) first and the runs after it",
        )
    if suffix == ".json" and fmt is None and sniff_trec(first) is None:
        return _orls_from_json(path), []
    is_qrels = fmt is InputFormat.qrels or (
        fmt is None and (sniff_trec(first) is InputFormat.qrels or suffix == ".qrels")
    )
    if is_qrels and str(path) != STDIN:
        fast = fast_trec_qrels(path)
        if fast is not None:
            queries, items, levels, comments = fast
            orls, warnings = _orls_from_grades(queries, items, levels)
            return orls, [*comment_notes(path, comments), *warnings]
    kind = "graded" if is_qrels else None
    if kind is None:
        kind = "graded" if _header_names(first) & {"grade"} else "listwise"
    parsed = parse_file(kind, path, fmt=fmt, format_option=format_option)
    frame = parsed.frame
    if kind == "listwise":
        if frame.groupby("query")["annotator"].nunique().max() > 1:
            raise InputError(
                "an ORL file holds one list per query, but a query has several annotators",
                file=parsed.label,
                hint="build an ORL from several lists with `orlbuild build --source listwise`",
            )
        return {
            str(q): ORL(dict(zip(g["item"], g["rank"].astype(int).tolist(), strict=True)))
            for q, g in frame.groupby("query", sort=False)
        }, list(parsed.notes)
    from orlbuild.builders.graded import aggregate_grades

    one_grade_each = not frame.duplicated(["query", "item"]).any()
    grades = frame[["query", "item", "grade"]]
    if not one_grade_each:
        grades = aggregate_grades(grades, grade_agg)
    orls, warnings = _orls_from_grades(
        grades["query"].to_numpy(dtype=object),
        grades["item"].to_numpy(dtype=object),
        grades["grade"].to_numpy(dtype=float),
    )
    return orls, [*parsed.notes, *warnings]


def read_eval_files(
    orl_file: Path,
    run_files: Sequence[Path],
    *,
    orl_format: InputFormat | None = None,
    run_format: InputFormat | None = None,
) -> tuple[dict[str, ORL], list[str], CodedRuns, list[int]] | None:
    """TREC qrels and TREC runs read together, ORLs and runs sharing one id table.

    The fast path of ``orlbuild eval`` (docs/performance.md, "Speed of
    `orlbuild eval`"): every id is hashed once
    (:func:`orlbuild.ingest.trec_reader.fast_trec_eval`), the ORLs carry
    their items' codes (:func:`scoring.orl.orls_from_coded_grades`) and the
    runs are scored on integer codes.

    Parameters
    ----------
    orl_file
        TREC qrels (recognised by content, or forced by ``orl_format``).
    run_files
        TREC runs (recognised by content, or forced by ``run_format``).
    orl_format, run_format
        As for :func:`read_orl_file` and :func:`read_run_file`.

    Returns
    -------
    tuple or None
        ``{query: ORL}``, the ORL file's notes (as :func:`read_orl_file`),
        the runs and each run file's number of comment lines; ``None`` when
        a file is not a regular TREC file the C-speed reader accepts (the
        caller then reads each file on its own, errors named exactly).
    """
    from orlbuild.ingest.trec_reader import fast_trec_eval

    files = [orl_file, *run_files]
    if not run_files or any(str(path) == STDIN or not path.is_file() for path in files):
        return None
    if orl_format not in (None, InputFormat.qrels) or run_format not in (None, InputFormat.trec):
        return None
    if orl_format is None and sniff_trec(first_line(orl_file)) is not InputFormat.qrels:
        return None
    if run_format is None and any(
        sniff_trec(first_line(path)) is not InputFormat.trec for path in run_files
    ):
        return None
    read = fast_trec_eval(orl_file, run_files)
    if read is None:
        return None
    qrels, runs, comments = read
    orls, without = orls_from_coded_grades(
        qrels.query_codes, qrels.queries, qrels.item_codes, qrels.items, qrels.grades
    )
    warnings = [f"query {query!r} has no positive grade and gets no ORL" for query in without]
    return orls, [*comment_notes(orl_file, qrels.comments), *warnings], runs, comments


def _orls_from_grades(
    queries: np.ndarray, items: np.ndarray, grades: np.ndarray
) -> tuple[dict[str, ORL], list[str]]:
    """One ORL per query from aligned ``query, item, grade`` columns (one grade per pair)."""
    orls, without = orls_from_grade_table(queries, items, np.asarray(grades, dtype=float))
    return orls, [f"query {query!r} has no positive grade and gets no ORL" for query in without]


def _comment_notes(frame: pd.DataFrame, path: Path) -> list[str]:
    """The note about the comment lines the C-speed reader skipped (as the exact reader says)."""
    return comment_notes(path, int(frame.attrs.get("comment_lines", 0)))


def comment_notes(path: Path, comments: int) -> list[str]:
    """The note about ``comments`` comment lines skipped in ``path``; none for 0."""
    if not comments:
        return []  # without importing the exact reader's module (tens of milliseconds)
    from orlbuild.ingest.rows import comment_note

    return [comment_note(str(path), comments)]


def first_line(path: Path) -> str | None:
    """The first non-blank, non-comment line of a (possibly compressed) file.

    ``None`` when unreadable. Comment lines (``#``, docs/input-formats.md, "Input formats")
    are skipped; only the first 64 KiB of a line are looked at.
    """
    if str(path) == STDIN or not path.is_file():
        return None
    try:
        with path.open("rb") as raw, open_input(raw) as stream:
            for _ in range(1000):
                line = stream.readline(1 << 16)
                if not line:
                    break
                text = line.decode("utf-8-sig", errors="replace")
                if text.strip() and not text.lstrip().startswith("#"):
                    return text
    except (OSError, EOFError, UnicodeDecodeError, ValueError):
        return None
    return None


def _header_names(first: str | None) -> set[str]:
    """Lower-cased header fields of a delimited file's first line (empty when unreadable)."""
    if first is None:
        return set()
    return {f.strip().strip('"').lower() for f in first.replace(",", "\t").split("\t")}


def read_run_file(
    path: str | Path,
    *,
    fmt: InputFormat | None = None,
    duplicates: DuplicatePolicy = DuplicatePolicy.error,
    format_option: str = "--run-format",
    notes: list[str] | None = None,
    score_precision: ScorePrecisionName = ScorePrecisionName.float32,
) -> pd.DataFrame:
    """A run as a ``query, item, score`` (or ``query, item, rank``) DataFrame.

    Runs with scores are ordered by score (docs/evaluating-files.md, "Score precision"); runs
    without any score by their rank column. TREC runs are recognised by their
    content whatever the file is called; ``.gz``/``.bz2`` files are read
    directly. ``format_option`` is the option error hints name. The reader's
    warnings (columns a run does not use) are appended to ``notes`` when given.
    ``score_precision`` chooses the line ``keep-first`` keeps of a repeated
    (query, item).
    """
    path = Path(path)
    first = None if str(path) == STDIN else first_line(path)
    if fmt is None:
        _refuse_swapped(
            path,
            first,
            InputFormat.qrels,
            "this is TREC qrels (query iteration item grade), not a run",
            "give the qrels first and the runs after it",
        )
    if str(path) != STDIN and (
        fmt is InputFormat.trec or (fmt is None and sniff_trec(first) is InputFormat.trec)
    ):
        fast = fast_trec_frame(path, InputFormat.trec)
        if fast is not None:
            if notes is not None:
                notes.extend(_comment_notes(fast, path))
                notes.extend(filter(None, [rank_order_note_of_file(path)]))
            return fast[["query", "item", "score"]]
    parsed = parse_file(
        "run",
        path,
        fmt=fmt,
        duplicates=duplicates,
        format_option=format_option,
        score_precision=score_precision,
    )
    if notes is not None:
        notes.extend(parsed.notes)
    frame = parsed.frame
    if "score" in frame and np.isfinite(frame["score"].to_numpy(dtype=float)).all():
        return frame[["query", "item", "score"]]
    return frame[["query", "item", "rank"]]
