"""The options of the commands that read input files (``ingest``, ``eval``, ``score``),
declared once: which file, how its rows are read, and where they are stored.

Like :mod:`orlbuild.cli.options`, this module loads no NumPy, pandas, SciPy or
SQLAlchemy (docs/development.md, "Development").
"""

from __future__ import annotations

from typing import Annotated

import typer

from orlbuild.vocabulary import InputFormat, SystemNameSource
from scoring.vocabulary import DuplicatePolicy, ScorePrecisionName

__all__ = [
    "DuplicatesOption",
    "IngestCollectionOption",
    "InputFileArgument",
    "InputFormatOption",
    "PairwiseQueryOption",
    "RunDuplicatesOption",
    "RunFilesArgument",
    "RunSystemOption",
    "ScorePrecisionOption",
    "SystemFromOption",
]

#: The one file of ``ingest listwise|pairwise|graded``.
InputFileArgument = Annotated[str, typer.Argument(help="Input file, or '-' for standard input.")]
#: ``ingest --collection``: where the rows go.
IngestCollectionOption = Annotated[
    str, typer.Option("--collection", "-c", help="Collection (namespace) to store into.")
]
#: ``ingest --format``: how the file is read.
InputFormatOption = Annotated[
    InputFormat | None,
    typer.Option(
        "--format",
        "-f",
        help="Input format (default: TREC qrels/runs by content, else the file extension or "
        "content); pairwise also takes the shapes arena, prefs-release and trec-prefs.",
    ),
]
#: ``ingest pairwise --query``.
PairwiseQueryOption = Annotated[
    str | None,
    typer.Option(
        "--query",
        help="Put every row into this one query (one leaderboard), e.g. for LMArena "
        "battles whose question_id names a battle, not a query.",
    ),
]
#: The files of ``ingest run``.
RunFilesArgument = Annotated[
    list[str],
    typer.Argument(
        help="Run files (TREC runs, or query, item, rank, score); '-' for standard input "
        "(one file, with --system).",
        show_default=False,
    ),
]
#: ``ingest run --system``.
RunSystemOption = Annotated[
    str | None,
    typer.Option("--system", "-s", help="Name of the system (one file only)."),
]
#: ``ingest run --system-from``.
SystemFromOption = Annotated[
    SystemNameSource | None,
    typer.Option(
        "--system-from",
        help="Name each run's system after its tag (the TREC run's sixth column, or a "
        "'tag' column) or its file's stem (bm25.trec.gz: bm25).",
    ),
]
#: ``ingest run --duplicates``: the choice of the run's stored rows.
RunDuplicatesOption = Annotated[
    DuplicatePolicy,
    typer.Option(
        "--duplicates",
        help="A repeated (query, item): 'error', or 'keep-first' (best-ordered line).",
    ),
]
#: ``--duplicates`` of the commands that score run files.
DuplicatesOption = Annotated[
    DuplicatePolicy,
    typer.Option("--duplicates", help="Repeated (query, item) lines of a run file."),
]
#: The ``--score-precision`` option of every command that orders runs by score.
ScorePrecisionOption = Annotated[
    ScorePrecisionName,
    typer.Option(
        "--score-precision",
        help="Compare run scores as float32 (trec_eval <= 9.0.8, pytrec_eval, official TREC "
        "results) or float64 (trec_eval 10).",
    ),
]
