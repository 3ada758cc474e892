"""The options of a power analysis, declared once for ``power`` and ``report``
(``--budgets``, ``--subsamples``), checked before any work (docs/development.md,
"Development"). Like :mod:`orlbuild.cli.options`, this module loads no NumPy,
pandas, SciPy or SQLAlchemy.
"""

from __future__ import annotations

from typing import Annotated

import typer

from orlbuild.cli.statistics_options import count_callback, count_help
from orlbuild.errors import ConfigError

__all__ = ["BudgetsOption", "SubsamplesOption", "parse_budgets"]

SubsamplesOption = Annotated[
    int,
    typer.Option(
        "--subsamples",
        callback=count_callback("subsamples"),
        help=count_help("Random query subsets per budget", "subsamples"),
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
