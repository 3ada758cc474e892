"""The report's verdicts under reference resampling.

See docs/comparing-systems.md, "Comparing many systems".
"""

from __future__ import annotations

from orlbuild.report.data import ReportData
from orlbuild.report.markup import esc, fmt_p, table, tag

__all__ = ["reference_section"]


def reference_section(data: ReportData) -> str:
    """Each pair verdict with the share of rebuilt references keeping it; fragile ones marked."""
    if data.reference is None or data.reference.empty:
        return ""
    pairs = data.reference
    fragile = pairs[pairs["fragile"].astype(bool)]
    caption = (
        f"The ORLs were rebuilt on {data.reference_resamples} annotator-bootstrap resamples of "
        "the judgments and every system rescored. 'holds': share of rebuilt references under "
        "which the verdict (significant in the same direction, or not significant) is the same. "
        f"{len(fragile)} of {len(pairs)} verdicts hold under fewer than 95% (marked ⚠)."
    )
    rows = []
    for entry in pairs.to_dict(orient="records"):
        a, b, diff = str(entry["a"]), str(entry["b"]), float(entry["diff"])
        better, worse = (a, b) if diff > 0 else (b, a)
        verdict = f"{better} > {worse}" if bool(entry["significant"]) else f"{a} ~ {b} (n.s.)"
        mark = " ⚠" if bool(entry["fragile"]) else ""
        rows.append(
            tag(
                "tr",
                tag("td", esc(str(entry["measure"]))),
                tag("td", esc(verdict + mark)),
                tag("td", fmt_p(float(entry["p_adjusted"])), class_="num"),
                tag("td", f"{float(entry['holds']):.0%}", class_="num"),
                class_="fragile" if mark else None,
            )
        )
    return tag(
        "section",
        tag("h2", "Verdicts under reference uncertainty"),
        tag("p", esc(caption), class_="caption"),
        table(["measure", "verdict", "adjusted p", "holds"], rows, class_="reference"),
        id="reference",
    )
