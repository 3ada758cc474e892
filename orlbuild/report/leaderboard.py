"""The report's leaderboard with simultaneous rank intervals.

See docs/comparing-systems.md, "Comparing many systems".
"""

from __future__ import annotations

import pandas as pd

from orlbuild.report.data import ReportData
from orlbuild.report.figures import figure_to_svg, rank_interval_figure
from orlbuild.report.markup import esc, table, tag
from scoring.statistics import system_tiers
from scoring.statistics.comparison import overlap_notes

__all__ = ["leaderboard_ranks", "leaderboard_section"]

_RANK_COLUMNS = ["measure", "system", "mean", "rank", "rank_lo", "rank_hi"]


def leaderboard_ranks(data: ReportData) -> pd.DataFrame:
    """Every compared measure's rank intervals: those of the comparison's verdicts
    (docs/comparing-systems.md, "One family of decisions"), the same as ``orlbuild compare``'s."""
    if data.comparisons.empty:
        return pd.DataFrame(columns=_RANK_COLUMNS)
    return system_tiers(data.comparisons).loc[:, _RANK_COLUMNS]


def rank_caption(data: ReportData) -> str:
    """What the rank intervals are, and the coverage the test gives them."""
    test = data.test or f"paired test, {data.correction} correction"
    text = (
        "Rank intervals (1 = best) from the significance verdicts below: rank_lo = 1 + the "
        "systems significantly above, rank_hi = the systems minus those significantly below "
        f"(Mogstad, Romano, Shaikh & Wilhelm 2024; {test}). Dot: the rank by mean; a system "
        "whose interval is one number differs significantly from every other."
    )
    if data.correction == "none":
        return text + " The p-values are not adjusted: the intervals have no joint coverage."
    return text + (
        f" They cover the true ranks of all systems at once with probability about "
        f"{1.0 - data.alpha:.0%}, the chance that every verdict is right."
    )


def leaderboard_section(data: ReportData, ranks: pd.DataFrame) -> str:
    """The leaderboard: a rank-interval figure and a systems x measures table of intervals."""
    if ranks.empty:
        return ""
    caption = rank_caption(data) + " " + " ".join(overlap_notes(data.comparisons))
    order = list(dict.fromkeys(ranks.loc[ranks["measure"] == data.measures[0], "system"]))
    lookup = {
        (str(r["measure"]), str(r["system"])): (int(r["rank_lo"]), int(r["rank_hi"]))
        for r in ranks.to_dict(orient="records")
    }
    rows = []
    for system in order:
        cells = [tag("th", esc(system), scope="row")]
        for measure in data.measures:
            lo_hi = lookup.get((measure, system))
            text = "–" if lo_hi is None else f"{lo_hi[0]}–{lo_hi[1]}"
            cells.append(tag("td", esc(text), class_="num rank-interval"))
        rows.append(tag("tr", *cells))
    return tag(
        "section",
        tag("h2", "Leaderboard with rank intervals"),
        tag("p", esc(caption), class_="caption"),
        tag("figure", figure_to_svg(rank_interval_figure(ranks, data.measures)), class_="chart"),
        table(["system", *data.measures], rows, class_="ranks"),
        id="leaderboard",
    )
