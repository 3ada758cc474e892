"""The report section "What the next round would buy" (docs/planning.md, "Planning the next
judgments"): per query, its status, its open decisions, the comparisons the plan proposes
for it and how many open decisions they are expected to settle."""

from __future__ import annotations

import pandas as pd

from orlbuild.report.data import ReportData
from orlbuild.report.markup import esc, fmt_number, table, tag

__all__ = ["next_round_section"]

#: Rows shown (the queries with the most planned comparisons first).
SHOWN = 200

_COLUMNS = (
    ("query", "query"),
    ("status", "status"),
    ("open_boundary", "unbacked boundaries"),
    ("open_tie", "open ties"),
    ("open_item", "poorly measured items"),
    ("planned", "planned comparisons"),
    ("expected_decided", "decisions expected"),
    ("expected_judgments", "judgments to settle"),
)


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NA:
        return "–"
    if isinstance(value, float):
        return fmt_number(value, 1)
    return esc(str(value))


def next_round_section(data: ReportData) -> str:
    """The section, or ``""`` when the report has no plan."""
    frame = data.next_round
    if frame is None or frame.empty:
        return ""
    shown = frame.sort_values(["planned", "query"], ascending=[False, True]).head(SHOWN)
    rows = [
        tag(
            "tr",
            *(
                tag("td", _cell(row[name]), class_="num" if k > 1 else "")
                for k, (name, _) in enumerate(_COLUMNS)
            ),
        )
        for _, row in shown.iterrows()
    ]
    settled = int((frame["status"] == "settled").sum())
    planned = int(frame["planned"].sum())
    expected = float(frame["expected_decided"].sum())
    caption = (
        f"{settled} of {len(frame)} queries are settled (every boundary backed, no poorly "
        f"measured item, ties unlikely to split with twice the judgments) and get no comparison. "
        f"The next round proposes {planned} comparisons, expected to decide about "
        f"{expected:.0f} open pairs (plug-in estimate; see docs/planning.md). "
        "'judgments to settle': further judgments, spread as today's, until every open "
        "decision is expected decided ('–': not reachable by more judgments alone)."
    )
    more = (
        tag("p", esc(f"{len(frame) - SHOWN} more queries are in the plan's JSON."), class_="note")
        if len(frame) > SHOWN
        else ""
    )
    return tag(
        "section",
        tag("h2", esc("What the next round would buy")),
        tag("p", esc(caption), class_="caption"),
        table([label for _, label in _COLUMNS], rows, id="next-round-table", class_="data"),
        more,
        id="next-round",
    )
