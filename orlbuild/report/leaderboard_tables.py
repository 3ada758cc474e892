"""The leaderboard as a table: rows for CSV, and Markdown or LaTeX to paste into a paper.

``orlbuild compare --format csv --table leaderboard``, ``--format markdown`` and
``--format latex`` (docs/comparing-systems.md, "Leaderboards for papers"): one row
per system with, per measure, the mean and its confidence interval, the tier and
the rank interval, and a footnote naming the test they rest on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np
import pandas as pd

from orlbuild.report.intervals import mean_interval

__all__ = [
    "LEADERBOARD_COLUMNS",
    "leaderboard_footnote",
    "leaderboard_frame",
    "leaderboard_latex",
    "leaderboard_markdown",
]

LEADERBOARD_COLUMNS: Final = (
    "measure",
    "rank",
    "system",
    "mean",
    "low",
    "high",
    "queries",
    "tier",
    "letters",
    "rank_lo",
    "rank_hi",
)
#: LaTeX's special characters and what stands for each in text.
_LATEX: Final = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def leaderboard_frame(
    panels: Mapping[str, pd.DataFrame], tiers: pd.DataFrame, *, level: float = 0.95
) -> pd.DataFrame:
    """One row per (measure, system): rank, mean and its interval, tier, letters, rank interval.

    Parameters
    ----------
    panels
        Measure -> paired panel (one column per system) the comparison tested.
    tiers
        ``SystemComparison.tiers()`` of those panels (best first per measure).
    level
        Confidence level of the t-interval of each mean over the panel's queries.

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`LEADERBOARD_COLUMNS`, in ``tiers``' order.
    """
    rows = []
    for entry in tiers.to_dict(orient="records"):
        values = panels[str(entry["measure"])][entry["system"]].to_numpy(dtype=np.float64)
        mean, low, high = mean_interval(values, level=level)
        rows.append(
            {
                "measure": entry["measure"],
                "rank": int(entry["rank"]),
                "system": entry["system"],
                "mean": mean,
                "low": low,
                "high": high,
                "queries": int(values.size),
                "tier": int(entry["tier"]),
                "letters": entry["letters"],
                "rank_lo": int(entry["rank_lo"]),
                "rank_hi": int(entry["rank_hi"]),
            }
        )
    return pd.DataFrame(rows, columns=list(LEADERBOARD_COLUMNS))


def leaderboard_footnote(test: str, alpha: float, level: float, implied: int) -> str:
    """The footnote under a leaderboard: what the interval, tier and ranks mean, and the test."""
    text = (
        f"Mean over the queries with its {level:.0%} t-interval. Tier: systems sorted by mean, "
        "each joining the tier of the leader it does not differ from significantly (1 = best). "
        "Ranks: rank interval from the same verdicts, 1 + the systems significantly above to "
        "the systems minus those significantly below (Mogstad, Romano, Shaikh & Wilhelm 2024). "
        f"Significance: {test}, alpha = {alpha:g}."
    )
    if implied:
        text += (
            f" {implied} verdict{'s' if implied != 1 else ''} follow{'' if implied != 1 else 's'} "
            "by transitivity from significant pairs."
        )
    return text


def _wide(frame: pd.DataFrame, order: Sequence[str]) -> tuple[list[str], list[list[str]]]:
    """Measures, and one row of cells per system in ``order``: mean [low, high], tier, ranks."""
    measures = list(dict.fromkeys(str(m) for m in frame["measure"]))
    cells = {(str(r["measure"]), str(r["system"])): r for r in frame.to_dict(orient="records")}
    rows = []
    for system in order:
        row = []
        for measure in measures:
            entry = cells.get((measure, system))
            if entry is None:
                row += ["–", "–", "–"]
                continue
            row += [
                f"{entry['mean']:.3f} [{entry['low']:.3f}, {entry['high']:.3f}]",
                str(entry["tier"]),
                f"{entry['rank_lo']}–{entry['rank_hi']}",
            ]
        rows.append(row)
    return measures, rows


def leaderboard_markdown(
    frame: pd.DataFrame, order: Sequence[str], footnote: str, *, level: float = 0.95
) -> str:
    """A GitHub-flavoured Markdown table of :func:`leaderboard_frame`, with its footnote.

    Parameters
    ----------
    frame
        :func:`leaderboard_frame`.
    order
        The systems top to bottom.
    footnote
        :func:`leaderboard_footnote`.
    level
        The intervals' confidence level (for the header).
    """
    measures, rows = _wide(frame, order)

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    header = ["#", "system"]
    for measure in measures:
        header += [f"{measure} mean [{level:.0%} CI]", "tier", "ranks"]
    align = ["---:", ":---"] + ["---:", "---:", ":---:"] * len(measures)
    lines = [
        "| " + " | ".join(cell(h) for h in header) + " |",
        "| " + " | ".join(align) + " |",
    ]
    for rank, (system, row) in enumerate(zip(order, rows, strict=True), start=1):
        lines.append("| " + " | ".join([str(rank), cell(system), *map(cell, row)]) + " |")
    return "\n".join(lines) + "\n\n" + footnote + "\n"


def _latex(text: str) -> str:
    return "".join(_LATEX.get(char, char) for char in text).replace("–", "--")


def leaderboard_latex(
    frame: pd.DataFrame, order: Sequence[str], footnote: str, *, level: float = 0.95
) -> str:
    """A LaTeX ``table`` (booktabs) of :func:`leaderboard_frame`, with its footnote.

    Parameters are those of :func:`leaderboard_markdown`; every name is escaped.
    """
    measures, rows = _wide(frame, order)
    spec = "rl" + "rcc" * len(measures)
    groups = " & ".join(rf"\multicolumn{{3}}{{c}}{{{_latex(m)}}}" for m in measures)
    rules = " ".join(rf"\cmidrule(lr){{{3 + 3 * k}-{5 + 3 * k}}}" for k in range(len(measures)))
    percent = f"{level:.0%}".replace("%", r"\%")
    columns = " & ".join([f"Mean [{percent} CI] & Tier & Ranks"] * len(measures))
    body = [
        " & ".join([str(rank), _latex(system), *(_latex(c) for c in row)]) + r" \\"
        for rank, (system, row) in enumerate(zip(order, rows, strict=True), start=1)
    ]
    lines = [
        r"\begin{table}",
        r"\centering",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        rf"\# & System & {groups} \\",
        rules,
        rf" & & {columns} \\",
        r"\midrule",
        *body,
        r"\bottomrule",
        r"\end{tabular}",
        r"\par\smallskip",
        rf"{{\footnotesize {_latex(footnote)}\par}}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"
