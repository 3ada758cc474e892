"""The report's leaderboard with simultaneous rank intervals.

See docs/comparing-systems.md, "Comparing many systems".
"""

from __future__ import annotations

import pandas as pd

from orlbuild.report.data import ReportData
from orlbuild.report.figures import figure_to_svg, rank_interval_figure
from orlbuild.report.markup import esc, table, tag
from scoring.statistics import score_panels
from scoring.statistics.rank_intervals import rank_interval_table

__all__ = ["LEADERBOARD_PERMUTATIONS", "leaderboard_ranks", "leaderboard_section"]

#: Permutations behind the report's rank intervals.
LEADERBOARD_PERMUTATIONS = 1000


def leaderboard_ranks(data: ReportData) -> pd.DataFrame:
    """Every measure's rank intervals over the queries all systems scored."""
    if len(data.per_query) < 2:
        return pd.DataFrame(columns=["measure", "system", "mean", "rank", "rank_lo", "rank_hi"])
    panels = score_panels(data.per_query, data.measures)
    return rank_interval_table(
        panels, alpha=data.alpha, permutations=LEADERBOARD_PERMUTATIONS, seed=data.seed
    )


def leaderboard_section(data: ReportData, ranks: pd.DataFrame) -> str:
    """The leaderboard: a rank-interval figure and a systems x measures table of intervals."""
    if ranks.empty:
        return ""
    coverage = 1.0 - data.alpha
    caption = (
        f"Rank intervals (1 = best) that cover the true ranks of all systems at once with "
        f"probability {coverage:.0%} (Mogstad, Romano, Shaikh & Wilhelm 2024; randomized "
        f"Tukey HSD permutations, {LEADERBOARD_PERMUTATIONS:,}, step-down). Dot: the rank by "
        "mean; a system whose interval is one number is placed for sure."
    )
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
