"""Reading ORLs and runs straight from files, without a database (``orlbuild eval``).

ORL files (FORMATS.md): TREC qrels or a graded table (converted by the graded
route, native grades kept), a ``query item rank`` table (read with the
listwise rules: ranks consecutive from 1 per query), or the JSON export
``{"build": {...}, "queries": {query: {item: rank}}}``. Runs: TREC runs or
``query, item, rank[, score]`` tables. Files are read and validated by the
same code as ``orlbuild ingest``, so every error names the file, line and value.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from orlbuild.builders.graded import aggregate_grades
from orlbuild.errors import InputError
from orlbuild.ingest.kinds import DuplicatePolicy
from orlbuild.ingest.pipeline import read_input
from orlbuild.ingest.source import InputFormat
from scoring import ORL, ScoringError

__all__ = ["ParsedFile", "parse_file", "read_orl_file", "read_run_file"]


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
    """

    frame: pd.DataFrame
    label: str
    sha256: str
    dropped: int


def parse_file(
    kind: str,
    path: str | Path,
    *,
    fmt: InputFormat | None = None,
    duplicates: DuplicatePolicy = DuplicatePolicy.error,
) -> ParsedFile:
    """Read and validate a file of one input kind (``listwise``, ``graded``, ``run``, ...).

    Raises
    ------
    InputError
        Naming the file, line and value of the first problem.
    """
    parsed = read_input(kind, path, fmt=fmt, duplicates=duplicates)
    return ParsedFile(parsed.decoded(), parsed.label, parsed.sha256, parsed.dropped)


def _orls_from_json(path: Path) -> dict[str, ORL]:
    """The ORL export's ``queries`` object, validated query by query."""
    label = str(path)
    if not path.is_file():
        raise InputError("no such file", file=label, hint="check the path")
    try:
        document = json.loads(path.read_text(encoding="utf-8-sig"))
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
    path: str | Path, *, fmt: InputFormat | None = None, grade_agg: str = "median"
) -> tuple[dict[str, ORL], list[str]]:
    """Read ORLs from a qrels/graded table, a ``query item rank`` table or the JSON export.

    Parameters
    ----------
    path
        The file; ``.json`` is the ORL export, ``.qrels`` graded labels, other
        extensions a table whose columns decide: ``grade`` -> graded labels,
        ``rank`` -> explicit ORL ranks.
    fmt
        Force the table format.
    grade_agg
        How several annotators' grades are combined (``median``, ``mean``,
        ``max``, ``majority``; see :mod:`orlbuild.builders.graded`).

    Returns
    -------
    tuple
        ``{query: ORL}`` and warnings (queries left without an ORL).
    """
    path = Path(path)
    if path.suffix.lower() == ".json" and fmt is None:
        return _orls_from_json(path), []
    kind = "graded" if path.suffix.lower() == ".qrels" or fmt is InputFormat.qrels else None
    if kind is None:
        kind = "graded" if _header_names(path) & {"grade"} else "listwise"
    parsed = parse_file(kind, path, fmt=fmt)
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
        }, []
    grades = aggregate_grades(frame[["query", "item", "grade"]], grade_agg)
    orls: dict[str, ORL] = {}
    warnings = []
    for query, group in grades.groupby("query", sort=False):
        labels = dict(zip(group["item"], group["grade"].astype(float), strict=True))
        if any(g > 0 for g in labels.values()):
            orls[str(query)] = ORL.from_grades(labels)
        else:
            warnings.append(f"query {query!r} has no positive grade and gets no ORL")
    return orls, warnings


def _header_names(path: Path) -> set[str]:
    """Lower-cased header fields of a delimited file (empty when unreadable)."""
    try:
        with path.open(encoding="utf-8-sig") as handle:
            first = handle.readline()
    except (OSError, UnicodeDecodeError):
        return set()
    return {f.strip().strip('"').lower() for f in first.replace(",", "\t").split("\t")}


def read_run_file(
    path: str | Path,
    *,
    fmt: InputFormat | None = None,
    duplicates: DuplicatePolicy = DuplicatePolicy.error,
) -> pd.DataFrame:
    """A run as a ``query, item, score`` (or ``query, item, rank``) DataFrame.

    Runs with scores are ordered by score (RDQ.md section 8); runs without
    any score by their rank column.
    """
    frame = parse_file("run", path, fmt=fmt, duplicates=duplicates).frame
    if "score" in frame and np.isfinite(frame["score"].to_numpy(dtype=float)).all():
        return frame[["query", "item", "score"]]
    return frame[["query", "item", "rank"]]
