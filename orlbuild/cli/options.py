"""The command-line options several commands share, declared once: what to read from the
store, how to print it, and where the work runs.

The options of the significance tests and resampling are in
:mod:`orlbuild.cli.statistics_options`, those of reading input files in
:mod:`orlbuild.cli.input_options`. Each option is an ``Annotated`` type whose
choices come from the vocabulary that owns them (:mod:`scoring.vocabulary` for
the scoring core's words, :mod:`orlbuild.vocabulary` for the builders'), so a
Typer option, the pipeline TOML validator and the library accept the same words
(docs/development.md, "Development"). These modules load no NumPy, pandas,
SciPy or SQLAlchemy: a command's options are declared before its work is
imported.
"""

from __future__ import annotations

from typing import Annotated

import typer

from orlbuild.vocabulary import OutputFormat
from scoring.vocabulary import MissingPolicy

__all__ = [
    "BuildArgument",
    "BuildOption",
    "CollectionFilterOption",
    "CollectionOption",
    "FormatOption",
    "JobsOption",
    "MeasureOption",
    "MissingOption",
    "OutputForceOption",
    "PerQueryOption",
    "QueryFilterOption",
    "RawCellsOption",
    "SchedulerOption",
    "SystemsOption",
]


#: The ``--format`` option of every command that prints a table.
FormatOption = Annotated[OutputFormat, typer.Option("--format", help="Output format.")]

MeasureOption = Annotated[
    list[str],
    typer.Option("--measure", "-m", help="Measure name, e.g. RDQm2-a1@10 (repeatable)."),
]
_BUILD_HELP = "Build id, name (its newest version) or NAME@N."
BuildOption = Annotated[str, typer.Option("--build", "-b", help=_BUILD_HELP)]
#: The build a command shows or exports, given as its argument.
BuildArgument = Annotated[str, typer.Argument(help=_BUILD_HELP)]
#: ``--query`` of the commands that show builds: every query when omitted.
QueryFilterOption = Annotated[str | None, typer.Option(help="Only this query.")]
SystemsOption = Annotated[
    list[str],
    typer.Option("--system", "-s", help="A system with a stored run (repeat for each system)."),
]
CollectionOption = Annotated[
    str, typer.Option("--collection", "-c", help="Collection (namespace) to read.")
]
#: ``--collection`` of the commands that list or count: all collections when omitted.
CollectionFilterOption = Annotated[
    str | None, typer.Option("--collection", "-c", help="Only this collection.")
]
PerQueryOption = Annotated[bool, typer.Option("--per-query", help="One row per query.")]
MissingOption = Annotated[
    MissingPolicy,
    typer.Option(
        "--missing",
        help="ORL queries absent from a run: zero (score 0, trec_eval -c) or skip.",
    ),
]
JobsOption = Annotated[
    int,
    typer.Option(
        "--jobs",
        help="Processes for the per-query work (this one and N-1 workers): 1 runs serially, "
        "-1 uses every core. "
        "Results do not depend on it.",
    ),
]
SchedulerOption = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        help="Dask scheduler address tcp://HOST:PORT (default $ORLBUILD_SCHEDULER); "
        "wins over --jobs.",
        show_default=False,
    ),
]

#: ``--force`` of the commands that write ``-o``: the output may overwrite a file a stored
#: batch was read from (docs/reliability.md, "Output files").
OutputForceOption = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Write the output even over a file a stored batch was read from (named).",
    ),
]

#: ``--raw-cells`` of the commands that write CSV (or TSV) for people: text cells that a
#: spreadsheet would run as a formula get a leading ``'`` unless it is given
#: (docs/reliability.md, "Spreadsheet-safe CSV").
RawCellsOption = Annotated[
    bool,
    typer.Option(
        "--raw-cells",
        help="csv/tsv: write cells beginning with = + - @ as they are "
        "(default: prefixed with ' so a spreadsheet does not run them).",
    ),
]
