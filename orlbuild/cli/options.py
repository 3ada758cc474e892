"""The command-line options several commands share, declared once.

Each option is an ``Annotated`` type whose choices come from the vocabulary
that owns them (:mod:`scoring.vocabulary` for the scoring core's words,
:mod:`orlbuild.vocabulary` for the builders'), so a Typer option, the
pipeline TOML validator and the library accept the same words (docs/development.md,
"Development"). This module loads no NumPy, pandas, SciPy or SQLAlchemy: a
command's options are declared before its work is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from orlbuild.errors import ConfigError
from orlbuild.limits import (
    COUNT_LIMITS,
    PERMUTATIONS_MAX,
    SEED_MAX,
    check_count,
    check_permutations,
    check_seed,
)
from orlbuild.vocabulary import OutputFormat
from scoring.vocabulary import (
    CorrectionName,
    DuplicatePolicy,
    MissingPolicy,
    ScorePrecisionName,
    SignificanceTest,
)

__all__ = [
    "AlphaOption",
    "BudgetsOption",
    "BuildOption",
    "CollectionFilterOption",
    "CollectionOption",
    "CorrectionOption",
    "DuplicatesOption",
    "FormatOption",
    "MeasureOption",
    "MissingOption",
    "PerQueryOption",
    "PermutationsOption",
    "ScorePrecisionOption",
    "SeedOption",
    "SubsamplesOption",
    "SystemsOption",
    "TestOption",
    "count_callback",
    "count_help",
    "parse_budgets",
]


#: The ``--format`` option of every command that prints a table.
FormatOption = Annotated[OutputFormat, typer.Option("--format", help="Output format.")]

MeasureOption = Annotated[
    list[str],
    typer.Option("--measure", "-m", help="Measure name, e.g. RDQm2-a1@10 (repeatable)."),
]
BuildOption = Annotated[
    str, typer.Option("--build", "-b", help="Build id, name (its newest version) or NAME@N.")
]
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
TestOption = Annotated[
    SignificanceTest | None,
    typer.Option(
        "--test",
        help="max-t (studentized step-down Tukey HSD; default for 3+ systems), tukey-hsd, "
        "randomization (sign flips; default for 2) or t.",
        show_default=False,
    ),
]


def seed_option(value: int | None) -> int | None:
    """``--seed`` callback: a seed within the documented limit, checked before any work."""
    return None if value is None else check_seed(value)


def permutations_option(value: int) -> int:
    """``--permutations`` callback: 1 to the documented cap, checked before any work."""
    return check_permutations(value)


def count_callback(name: str) -> Callable[[int], int]:
    """The callback of a count option that sizes work (``--subsamples``, ``--bootstrap``):
    its documented limit (:data:`orlbuild.limits.COUNT_LIMITS`), checked before any work."""

    def check(value: int) -> int:
        return check_count(name, value)

    return check


def count_help(text: str, name: str) -> str:
    """``text`` with the count's limit, for ``--help``."""
    return f"{text} (at most {COUNT_LIMITS[name].high:,})."


SubsamplesOption = Annotated[
    int,
    typer.Option(
        "--subsamples",
        callback=count_callback("subsamples"),
        help=count_help("Random query subsets per budget", "subsamples"),
    ),
]
PermutationsOption = Annotated[
    int,
    typer.Option(
        "--permutations",
        callback=permutations_option,
        help="Draws of the randomization tests (a minimum: raised when too few to reject; "
        f"at most {PERMUTATIONS_MAX:,}).",
    ),
]
SeedOption = Annotated[
    int,
    typer.Option(
        "--seed",
        callback=seed_option,
        help=f"Seed of sign flips (and subsets), 0 to {SEED_MAX}.",
    ),
]
CorrectionOption = Annotated[
    CorrectionName | None,
    typer.Option(
        "--correction",
        help="Adjust p-values over the pairs of each measure (default holm; "
        "not with max-t or tukey-hsd, which are family-wise already).",
        show_default=False,
    ),
]
AlphaOption = Annotated[
    float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level.")
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
BudgetsOption = Annotated[
    str | None,
    typer.Option(
        "--budgets",
        metavar="<int,...>",
        help="Query budgets, e.g. 25,50,100 (default 25..500 step 25, up to the queries).",
        show_default=False,
    ),
]


def parse_budgets(text: str | None) -> list[int] | None:
    """``"50,25,50"`` -> ``[25, 50]``; ``None`` stays ``None`` (the default budgets).

    Parameters
    ----------
    text
        The ``--budgets`` value: positive whole numbers separated by commas.

    Returns
    -------
    list of int or None
        The distinct budgets in increasing order.

    Raises
    ------
    ConfigError
        For a part that is not a positive whole number, or no budget at all.
    """
    if text is None:
        return None
    budgets = set()
    for part in text.split(","):
        value = part.strip()
        if not value.isdigit() or int(value) < 1:
            raise ConfigError(
                f"--budgets: {value!r} is not a positive whole number; write e.g. 25,50,100"
            )
        budgets.add(int(value))
    return sorted(budgets)
