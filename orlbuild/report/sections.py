"""The sections of the report, each a small function from :class:`ReportData` to HTML."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from orlbuild.builders.tiering.posterior_summary import one_tier_note, pooled_risk
from orlbuild.records import QueryORL, TieDecision
from orlbuild.report.data import ReportData, ReportTexts
from orlbuild.report.figures import (
    cell_colours,
    colour_scale,
    difference_colour,
    figure_to_svg,
    interval_figure,
    plot_power_stability,
    tier_figure,
)
from orlbuild.report.markup import esc, fmt_number, fmt_p, table, tag
from scoring.statistics import system_tiers

#: Beyond this many systems the letters give way to rank intervals (letters of 63 systems
#: run to 60+ glyphs) and each difference matrix to a heat map with the verdicts on hover,
#: so that the report fits a 1280 px window (docs/comparing-systems.md, "Many systems").
COMPACT_LIMIT = 10

__all__ = [
    "header_section",
    "heatmap_section",
    "orl_section",
    "power_section",
    "significance_section",
    "system_order",
    "systems_section",
]


def system_order(intervals: pd.DataFrame, measures: Sequence[str]) -> list[str]:
    """Systems by decreasing mean of the first measure defined somewhere (ties by name)."""
    defined = intervals[intervals["mean"].notna()]
    measure = next((m for m in measures if (defined["measure"] == m).any()), None)
    rows = intervals[intervals["measure"] == (measure or measures[0])]
    ranked = sorted(
        zip(rows["mean"].fillna(-np.inf), rows["system"], strict=True), key=lambda r: (-r[0], r[1])
    )
    return [system for _, system in ranked]


def _natural_key(text: str) -> list[Any]:
    """Sort ``q2`` before ``q10``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _significant(data: ReportData) -> pd.DataFrame:
    frame = data.comparisons
    if frame.empty:
        return frame
    return frame[frame["significant"].astype(bool)]


def header_section(data: ReportData) -> str:
    """Title, build metadata, the data at a glance and the notes."""
    queries = sorted(
        {q for f in data.per_query.values() for q in f.index.astype(str)}, key=_natural_key
    )
    glance = [
        (str(len(queries)), "queries"),
        (str(len(data.systems)), "systems"),
        (str(len(data.measures)), "measures"),
        (str(len(data.orls)), "ORLs"),
    ]
    if not data.comparisons.empty:
        glance.append(
            (f"{len(_significant(data))} of {len(data.comparisons)}", "differences significant")
        )
    build_items = [(str(k), _plain(v)) for k, v in data.build.items()]
    blocks = [tag("h1", esc(data.title))]
    blocks.append(
        tag(
            "ul",
            *(tag("li", tag("strong", esc(v)), " ", esc(k)) for v, k in glance),
            class_="glance",
        )
    )
    if build_items:
        blocks.append(
            tag(
                "details",
                tag("summary", "Build"),
                tag(
                    "dl",
                    *(tag("dt", esc(k)) + tag("dd", esc(v)) for k, v in build_items),
                    class_="meta",
                ),
                class_="build",
                open=True,
            )
        )
    if data.notes:
        blocks.append(tag("ul", *(tag("li", esc(n)) for n in data.notes), class_="notes"))
    return tag("header", *blocks)


def _plain(value: object) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_plain(v)}" for k, v in value.items()) or "–"
    if isinstance(value, (list, tuple)):
        return ", ".join(_plain(v) for v in value) or "–"
    return str(value)


def systems_section(data: ReportData, intervals: pd.DataFrame, order: Sequence[str]) -> str:
    """Per-system means with confidence intervals: a table and a forest plot.

    Each compared measure's mean column is followed by the system's ``tier``
    and ``letters`` on that measure (docs/comparing-systems.md, "Comparing many systems"), columns
    of their own so that a reader can scan them down 60+ systems.
    """
    indexed = intervals.set_index(["system", "measure"])
    tiers = _tier_lookup(data)
    tiered = {measure for measure, _ in tiers}
    compact = len(order) > COMPACT_LIMIT
    level = f"{data.level:.0%}"
    method = "t-interval" if data.interval_method == "t" else "BCa bootstrap"
    rows = []
    for rank, system in enumerate(order, start=1):
        cells = [tag("td", str(rank), class_="num"), tag("th", esc(system), scope="row")]
        for measure in data.measures:
            cells.append(_mean_cell(indexed.loc[(system, measure)], system, measure, level))
            if measure in tiered:
                entry = tiers.get((measure, system))
                cells.extend(_tier_cells(entry, system, measure, compact=compact))
        rows.append(tag("tr", *cells))
    figure = figure_to_svg(interval_figure(intervals, order, data.measures))
    caption = (
        f"Mean over queries with its {level} confidence interval ({method} over per-query scores)."
    )
    if tiers:
        caption += (
            " tier: the system's tier on the measure to its left (leader walk over the systems "
            "sorted by mean: a system joins the tier of the leader it does not differ from "
            "significantly); "
        )
        caption += (
            "ranks: its rank interval from the same verdicts (see the leaderboard)."
            if compact
            else "letters: systems sharing a letter do not differ significantly."
        )
    summary = tag(
        "table",
        tag("thead", _systems_header(data.measures, tiered, compact=compact)),
        tag("tbody", *rows),
        id="systems-table",
        class_="data",
    )
    return _figure_section("systems", "Systems", caption, summary, figure)


def _systems_header(measures: Sequence[str], tiered: set[str], *, compact: bool) -> str:
    """``#``, ``system``, then per measure its name and, when compared, ``tier`` and
    ``letters`` (``ranks``, the rank interval, beyond :data:`COMPACT_LIMIT` systems)."""
    cells = [tag("th", "#", scope="col"), tag("th", "system", scope="col")]
    for measure in measures:
        cells.append(tag("th", esc(measure), scope="col", class_="measure"))
        if measure in tiered:
            cells.append(tag("th", "tier", scope="col", title=f"{measure}: tier (1 = best)"))
            if compact:
                cells.append(tag("th", "ranks", scope="col", title=f"{measure}: rank interval"))
            else:
                cells.append(
                    tag("th", "letters", scope="col", title=f"{measure}: compact letter display")
                )
    return tag("tr", *cells)


def _mean_cell(entry: pd.Series, system: str, measure: str, level: str) -> str:
    """The mean and its confidence interval (``–`` when undefined)."""
    if np.isnan(entry["mean"]):
        return tag("td", "–", class_="num na measure", title=f"{measure}: undefined")
    interval = f"[{fmt_number(entry['low'])}, {fmt_number(entry['high'])}]"
    title = (
        f"{system} {measure}: mean {fmt_number(entry['mean'], 4)}, "
        f"{level} CI {interval}, n = {entry['n']}"
    )
    return tag(
        "td",
        tag("span", fmt_number(entry["mean"]), class_="mean"),
        " ",
        tag("span", esc(interval), class_="ci"),
        class_="num measure",
        title=title,
    )


def _tier_cells(
    entry: tuple[int, str, int, int] | None, system: str, measure: str, *, compact: bool
) -> list[str]:
    """The ``tier`` and ``letters`` (or ``ranks``) cells of one system on one measure."""
    if entry is None:
        return [tag("td", "–", class_="num na"), tag("td", "–", class_="na")]
    tier, letters, low, high = entry
    tier_cell = tag("td", str(tier), class_="num tier", title=f"{system}: tier {tier} on {measure}")
    if compact:
        title = f"{system}: rank interval {low}–{high} on {measure} (letters {letters})"
        return [tier_cell, tag("td", f"{low}–{high}", class_="num rank-interval", title=title)]
    return [
        tier_cell,
        tag("td", esc(letters), class_="cld", title=f"{system}: letters {letters} on {measure}"),
    ]


def _tier_lookup(data: ReportData) -> dict[tuple[str, str], tuple[int, str, int, int]]:
    """(measure, system) -> (tier, letters, rank_lo, rank_hi), empty without comparisons."""
    if data.comparisons.empty:
        return {}
    tiers = system_tiers(data.comparisons)
    return {
        (str(r["measure"]), str(r["system"])): (
            int(r["tier"]),
            str(r["letters"]),
            int(r["rank_lo"]),
            int(r["rank_hi"]),
        )
        for r in tiers.to_dict(orient="records")
    }


def significance_section(data: ReportData, order: Sequence[str]) -> str:
    """System tiers as a figure, and per measure the matrix of differences.

    Row mean minus column mean, coloured when significant. Beyond
    :data:`COMPACT_LIMIT` systems each matrix is a heat map of every pair (a
    small coloured cell, the numbers and verdict on hover) and the tier figure
    labels the systems with their rank intervals rather than letters.
    """
    if data.comparisons.empty:
        return tag(
            "section",
            tag("h2", "Significant differences"),
            tag("p", "No comparison was run."),
            id="significance",
        )
    blocks = [tag("h2", "Significant differences")]
    test = data.test or f"paired test, {data.correction} correction"
    tiers = system_tiers(data.comparisons)
    compact = len(order) > COMPACT_LIMIT
    labels = (
        "beside each system its rank interval (the leaderboard's)"
        if compact
        else "letters: systems sharing a letter do not differ significantly"
    )
    blocks.append(
        tag(
            "p",
            esc(
                f"Test: {test}; significant means adjusted p < alpha = {data.alpha:g}, or implied "
                "by a chain of significant pairs (A > B and B > C make A > C). "
                "Tiers: systems sorted by mean, each joining the tier of the leader it does not "
                f"differ from significantly (bracketed, T1 best); {labels}."
            ),
            class_="caption",
        )
    )
    figure = tier_figure(tiers, data.measures, rank_labels=compact)
    blocks.append(tag("figure", figure_to_svg(figure), class_="chart"))
    if compact:
        test_note = (
            f"Every pair of the {len(order)} systems, best first in rows and columns (columns "
            "numbered by rank). Green: the row system is significantly better, red: worse, "
            f"darker for a larger difference; grey: not significant at alpha = {data.alpha:g}. "
            "Hover a cell for the difference, the p-values and the per-query wins/ties/losses."
        )
    else:
        test_note = (
            f"Cell: mean of the row system minus the column system. Coloured when the test is "
            f"significant at alpha = {data.alpha:g} ({test}) "
            "(green: row better, red: row worse). Hover for p-values and per-query "
            "wins/ties/losses."
        )
    blocks.append(tag("p", esc(test_note), class_="caption"))
    matrices = []
    for measure in data.measures:
        pairs = data.comparisons[data.comparisons["measure"] == measure]
        if pairs.empty:
            continue
        lookup = {(r.a, r.b): r for r in pairs.itertuples(index=False)}
        if compact:
            ranked = tiers[tiers["measure"] == measure].sort_values("rank")
            shown = [str(s) for s in ranked["system"]]
            largest = float(pairs["diff"].abs().max())
            matrix = _difference_heatmap(measure, shown, lookup, largest)
            matrices.append(tag("div", tag("h3", esc(measure)), matrix, _verdict_count(pairs)))
            continue
        shown = list(order)
        rows = [
            tag(
                "tr",
                tag("th", esc(s), scope="row"),
                *(_matrix_cell(measure, s, c, lookup) for c in shown),
            )
            for s in shown
        ]
        matrix = table(["", *shown], rows, class_="matrix", data_measure=measure)
        matrices.append(tag("div", tag("h3", esc(measure)), matrix, _verdicts(pairs)))
    blocks.append(tag("div", *matrices, class_="heatmaps" if compact else "matrices"))
    return tag("section", *blocks, id="significance")


def _pair_entry(
    row: str, column: str, lookup: Mapping[tuple[str, str], Any]
) -> tuple[Any, float, int, int] | None:
    """The comparison of ``row`` against ``column``: the entry, diff, wins and losses of ``row``."""
    if (row, column) in lookup:
        entry = lookup[(row, column)]
        return entry, float(entry.diff), int(entry.wins), int(entry.losses)
    if (column, row) in lookup:
        entry = lookup[(column, row)]
        return entry, -float(entry.diff), int(entry.losses), int(entry.wins)
    return None


def _pair_title(measure: str, row: str, column: str, found: tuple[Any, float, int, int]) -> str:
    """The hover text of a pair's cell: difference, p-values, verdict, wins/ties/losses."""
    entry, diff, wins, losses = found
    significant = bool(entry.significant)
    verdict = (
        f"{row} {'better' if diff > 0 else 'worse'} (significant"
        + (", implied by transitivity" if bool(getattr(entry, "implied", False)) else "")
        + ")"
        if significant
        else "not significant"
    )
    text = (
        f"{row} vs {column} on {measure}: diff {fmt_number(diff, 4, signed=True)}, "
        f"p = {fmt_p(entry.p_value)}, adjusted p = {fmt_p(entry.p_adjusted)}, "
        f"wins/ties/losses {wins}/{entry.ties}/{losses}; {verdict}"
    )
    if bool(getattr(entry, "near_alpha", False)):
        text += (
            f"; within Monte Carlo error of alpha (± {fmt_number(entry.p_error, 4)}): "
            f"{int(entry.permutations_to_decide):,} permutations would decide it"
        )
    return text


def _difference_heatmap(
    measure: str, shown: Sequence[str], lookup: Mapping[tuple[str, str], Any], largest: float
) -> str:
    """Every pair of many systems as small coloured cells, the verdict and numbers on hover."""
    head = tag(
        "tr",
        tag("th", "", scope="col"),
        *(
            tag("th", str(k) if k == 1 or k % 5 == 0 else "", scope="col", title=f"{k}. {s}")
            for k, s in enumerate(shown, start=1)
        ),
    )
    rows = []
    for k, row in enumerate(shown, start=1):
        cells = [tag("th", esc(f"{k}. {row}"), scope="row")]
        for column in shown:
            if row == column:
                cells.append(tag("td", "", class_="diag"))
                continue
            found = _pair_entry(row, column, lookup)
            if found is None:
                cells.append(tag("td", "", class_="na"))
                continue
            entry, diff, _, _ = found
            background, _ = difference_colour(diff, largest, bool(entry.significant))
            cells.append(
                tag(
                    "td",
                    "",
                    style=f"background:{background}",
                    title=_pair_title(measure, row, column, found),
                )
            )
        rows.append(tag("tr", *cells))
    return tag(
        "table",
        tag("thead", head),
        tag("tbody", *rows),
        class_="diffmap",
        data_measure=measure,
    )


def _verdict_count(pairs: pd.DataFrame) -> str:
    """How many of a measure's pairs are significant (too many to list)."""
    count = int(pairs["significant"].astype(bool).sum())
    return tag("p", f"{count} of {len(pairs)} differences significant.", class_="verdict")


def _matrix_cell(measure: str, row: str, column: str, lookup: Mapping[tuple[str, str], Any]) -> str:
    if row == column:
        return tag("td", "·", class_="diag")
    found = _pair_entry(row, column, lookup)
    if found is None:
        return tag("td", "–", class_="na")
    entry, diff, _, _ = found
    significant = bool(entry.significant)
    kind = ("better" if diff > 0 else "worse") if significant else "ns"
    mark = " ▲" if kind == "better" else " ▼" if kind == "worse" else ""
    return tag(
        "td",
        fmt_number(diff, 3, signed=True) + mark,
        class_=f"num {kind}",
        title=_pair_title(measure, row, column, found),
    )


def _verdicts(pairs: pd.DataFrame) -> str:
    """The significant differences of one measure, in words."""
    significant = pairs[pairs["significant"].astype(bool)]
    if significant.empty:
        return tag("p", "No difference is significant.", class_="verdict")
    items = []
    for entry in significant.itertuples(index=False):
        better, worse = (entry.a, entry.b) if entry.diff > 0 else (entry.b, entry.a)
        detail = f" (+{fmt_number(abs(entry.diff), 3)}, adjusted p = {fmt_p(entry.p_adjusted)})"
        items.append(tag("li", tag("strong", esc(f"{better} > {worse}")), esc(detail)))
    return tag("ul", *items, class_="verdict")


def heatmap_section(data: ReportData, order: Sequence[str]) -> str:
    """Per-query scores as one coloured table: a row per query, a column group per measure."""
    sizes = {o.query: (sum(len(t) for t in o.tiers), len(o.tiers)) for o in data.orls}
    panels = {m: pd.DataFrame({s: data.per_query[s][m] for s in order}) for m in data.measures}
    for panel in panels.values():
        panel.index = panel.index.astype(str)
    every = sorted(next(iter(panels.values())).index, key=_natural_key)
    queries = every[: data.max_queries]
    values = {(m, s): panels[m].loc[queries, s].to_numpy(float) for m in panels for s in order}
    colours = {key: cell_colours(column) for key, column in values.items()}
    rows = []
    for i, query in enumerate(queries):
        cells = [tag("th", esc(query), scope="row", title=_query_hover(data, query))]
        if sizes:
            items, tiers = sizes.get(query, (None, None))
            cells.append(tag("td", "–" if items is None else f"{items}/{tiers}", class_="num size"))
        for m_index, measure in enumerate(data.measures):
            for s_index, system in enumerate(order):
                value = float(values[(measure, system)][i])
                background, text = colours[(measure, system)][i]
                cells.append(
                    tag(
                        "td",
                        fmt_number(value, 2),
                        class_="num heat" + (" first" if s_index == 0 and m_index > 0 else ""),
                        style=f"background:{background};color:{text}",
                        title=f"{query} · {system} · {measure} = {fmt_number(value, 4)}",
                    )
                )
        rows.append(tag("tr", *cells))
    lead = [tag("th", "query", rowspan=2, scope="col")]
    if sizes:
        lead.append(
            tag("th", "items/tiers", rowspan=2, scope="col", title="size of the query's ORL")
        )
    groups = [tag("th", esc(m), colspan=len(order), scope="colgroup") for m in data.measures]
    names = [tag("th", esc(s), scope="col") for _ in data.measures for s in order]
    head = tag("thead", tag("tr", *lead, *groups), tag("tr", *names))
    heatmap = tag("table", head, tag("tbody", *rows), class_="heatmap")
    caption = tag(
        "p",
        "Each cell is one system's score on one query; hover for the exact value. ",
        tag(
            "span",
            "Scale: 0",
            tag("span", "", class_="scale", style=f"background: {colour_scale()}"),
            "1",
            class_="scale-legend",
        ),
        class_="caption",
    )
    return tag(
        "section",
        tag("h2", "Per-query scores"),
        caption,
        tag("div", heatmap, class_="scroll"),
        _omitted(len(every), len(queries)),
        id="heatmap",
    )


def _omitted(total: int, shown: int) -> str:
    """A note when only the first ``shown`` of ``total`` queries are drawn."""
    if shown >= total:
        return ""
    return tag("p", f"Showing the first {shown} of {total} queries.", class_="caption omitted")


def orl_section(data: ReportData) -> str:
    """Every query's ORL drawn as tiers, with the audit's tie decisions on hover and inline."""
    if not data.orls:
        return ""
    legend = (
        "Each row is a tier (best first); ★ marks the tier's leader, against which every other "
        "item was compared. Hover an item for its score and the decision; open a query for its "
        "full audit trail."
    )
    ordered = sorted(data.orls, key=lambda o: _natural_key(o.query))
    shown = ordered[: data.max_queries]
    return tag(
        "section",
        tag("h2", "Ordered reference lists"),
        tag("p", esc(legend), class_="caption"),
        _reference_risk(data),
        tag("div", *(_orl_block(orl, data.texts) for orl in shown), class_="orls"),
        _omitted(len(ordered), len(shown)),
        id="orls",
    )


def _reference_risk(data: ReportData) -> str:
    """What the reference states and risks: its pooled posterior ``E / N`` and, when most
    queries are one tier, the line that says so (docs/tiers-and-audit.md, "The posterior
    computation")."""
    lines = []
    pooled = pooled_risk(getattr(o, "posterior", None) for o in data.orls)  # views have none
    if pooled is not None:
        expected, stated = pooled
        share = f"{expected / stated:.3f}" if stated else "0 (no order stated)"
        lines.append(
            f"Posterior expected share of wrong stated orders: E/N = {expected:.1f}/{stated} "
            f"= {share}."
        )
    counts = {o.query: (sum(len(t) for t in o.tiers), len(o.tiers)) for o in data.orls}
    note = one_tier_note(counts, str(data.build.get("name") or data.build.get("id") or "BUILD"))
    if note is not None:
        lines.append(note)
    return tag("p", esc(" ".join(lines)), class_="caption reference-risk") if lines else ""


#: Characters of a stored text shown on hover (the rest is cut, with an ellipsis).
HOVER_TEXT_CHARS = 500


def _hover_text(text: str | None) -> str | None:
    """A stored text for a ``title`` attribute: one line, at most :data:`HOVER_TEXT_CHARS`."""
    if not text:
        return None
    flat = " ".join(text.split())
    return flat if len(flat) <= HOVER_TEXT_CHARS else flat[: HOVER_TEXT_CHARS - 1] + "…"


def _query_hover(data: ReportData, query: str) -> str | None:
    """The query's stored text, for hovering its name (``None``: no title attribute)."""
    return None if data.texts is None else _hover_text(data.texts.queries.get(query))


def _orl_block(orl: QueryORL, texts: ReportTexts | None = None) -> str:
    by_item = {d.item: d for d in orl.decisions}
    n_items = sum(len(t) for t in orl.tiers)
    n_tests = sum(1 for d in orl.decisions if d.p_value is not None)
    tiers = len(orl.tiers)
    bar = tag(
        "span",
        *(
            tag("span", "", class_="seg", style=f"flex-grow:{len(t)};{_tier_style(i, tiers)}")
            for i, t in enumerate(orl.tiers)
        ),
        class_="tierbar",
        title=" | ".join(f"tier {i + 1}: {len(t)}" for i, t in enumerate(orl.tiers)),
    )
    meta = f"{_count(n_items, 'item')} · {_count(tiers, 'tier')} · {_count(n_tests, 'test')}"
    procedure = _procedure_text(orl.decisions)
    if procedure:
        meta += f" · {procedure}"
    under_judged = getattr(orl, "under_judged", None)  # older records and views have none
    if under_judged:
        meta += (
            f" · under-judged (placed by estimate, orders not backed): {', '.join(under_judged)}"
        )
    unbacked = sum(getattr(d, "unbacked_pairs", None) or 0 for d in orl.decisions)
    if unbacked:
        meta += f" · {_count(unbacked, 'crossing pair')} of its boundaries not backed by a test"
    summary = tag(
        "summary",
        tag(
            "span",
            esc(orl.query),
            class_="qid",
            title=None if texts is None else _hover_text(texts.queries.get(orl.query)),
        ),
        bar,
        tag("span", esc(meta), class_="meta"),
    )
    rows = []
    for index, tier in enumerate(orl.tiers):
        leader = tier[0] if tier else None
        if index > 0 and leader in by_item:
            rows.append(tag("div", esc(_separation_text(by_item[leader])), class_="gap"))
        chips = [
            _chip(
                orl,
                item,
                by_item.get(item),
                item == leader,
                None if texts is None else texts.items.get(item),
            )
            for item in tier
        ]
        rows.append(
            tag(
                "div",
                tag("span", f"{index + 1}", class_="tier-label", style=_tier_style(index, tiers)),
                tag("span", *chips, class_="chips"),
                class_="tier",
            )
        )
    audit = _audit_table(orl.decisions)
    return tag(
        "details",
        summary,
        tag("div", *rows, class_="tiers"),
        audit,
        class_="orl",
        id=f"orl-{orl.query}",
        data_query=orl.query,
    )


def _count(n: int, noun: str) -> str:
    """``1 item``, ``2 items``."""
    return f"{n} {noun}{'s' if n != 1 else ''}"


def _tier_style(index: int, tiers: int) -> str:
    """Tier 1 dark, later tiers lighter (the heatmap's colour scale), readable text."""
    value = 0.9 - 0.7 * (index / max(tiers - 1, 1))
    background, text = cell_colours(np.array([value]))[0]
    return f"background:{background};color:{text}"


def _chip(
    orl: QueryORL, item: str, decision: TieDecision | None, leader: bool, text: str | None = None
) -> str:
    parts = [item]
    shown = _hover_text(text)
    if shown:
        parts.append(shown)
    score = orl.scores.get(item)
    interval = orl.intervals.get(item)
    if score is not None:
        text = f"score {fmt_number(score, 3)}"
        if interval is not None:
            text += f" [{fmt_number(interval[0], 3)}, {fmt_number(interval[1], 3)}]"
        parts.append(text)
    if decision is not None:
        parts.append(_decision_text(decision))
    elif leader:
        parts.append("leader of the first tier")
    label = ("★ " if leader else "") + esc(item)
    kind = "chip leader" if leader else "chip"
    return tag("span", label, class_=kind, title="\n".join(parts))


def _decision_text(decision: TieDecision) -> str:
    text = f"{decision.decision} vs leader {decision.leader}: diff {fmt_number(decision.diff, 3)}"
    if decision.se is not None:
        text += f", se {fmt_number(decision.se, 3)}"
    if decision.p_value is not None:
        text += f", p = {fmt_p(decision.p_value)}"
    z, critical = getattr(decision, "z", None), getattr(decision, "critical", None)
    if z is not None and critical is not None:
        text += f", z = {fmt_number(z, 3)} vs c = {fmt_number(critical, 3)}"
    if getattr(decision, "bic_change", None) is not None:
        text += f", ΔBIC = {fmt_number(decision.bic_change, 3)}"
    return text + f" ({decision.rule}){_boundary_text(decision)}"


def _boundary_text(decision: TieDecision) -> str:
    """A boundary's weakest crossing pair and its unbacked pairs (docs/tiers-and-audit.md,
    "Audit"); empty for decisions that open no tier or records without that evidence."""
    crossing = getattr(decision, "crossing_pairs", None)  # older records and views have none
    if crossing is None:
        return ""
    text = ""
    above, below = decision.weakest_above, decision.weakest_below
    if above is not None and below is not None:
        z, c = decision.weakest_z, decision.weakest_critical
        text += f"; weakest crossing pair {above} > {below}"
        if z is not None and c is not None:
            text += f" (z = {fmt_number(z, 3)} vs c = {fmt_number(c, 3)})"
    unbacked = decision.unbacked_pairs or 0
    text += f"; {unbacked} of {crossing} crossing pairs not backed"
    return text


def _separation_text(decision: TieDecision) -> str:
    return f"↓ {_decision_text(decision)}"


def _audit_table(decisions: Sequence[TieDecision]) -> str:
    if not decisions:
        return ""
    rows = [
        tag(
            "tr",
            tag("td", esc(d.leader)),
            tag("td", esc(d.item)),
            tag("td", fmt_number(d.diff, 3), class_="num"),
            tag("td", fmt_number(d.se, 3), class_="num"),
            tag("td", fmt_number(getattr(d, "z", None), 3), class_="num"),
            tag("td", fmt_number(getattr(d, "critical", None), 3), class_="num"),
            tag("td", fmt_number(getattr(d, "bic_change", None), 3), class_="num"),
            tag("td", fmt_p(d.p_value), class_="num"),
            tag("td", esc(d.decision), class_=f"decision {d.decision}"),
            tag("td", esc(getattr(d, "state", None) or ""), class_="state"),
            tag("td", esc(d.rule + _boundary_text(d))),
        )
        for d in decisions
    ]
    header = ["leader", "item", "diff", "se", "z", "critical", "ΔBIC", "p", "decision", "state"]
    header += ["rule"]
    procedure = _procedure_text(decisions)
    return tag(
        "details",
        tag("summary", f"Audit trail ({_count(len(decisions), 'decision')})"),
        tag("p", esc(f"Tiering: {procedure}"), class_="caption procedure") if procedure else "",
        table(header, rows, class_="audit"),
        class_="audit-trail",
    )


def _procedure_text(decisions: Sequence[TieDecision]) -> str:
    """How the query's tiers were decided: the procedure, its family and critical value
    (or BIC penalty), read from the decisions' evidence (docs/tiers-and-audit.md, "How tiers are
    decided and audited"); empty for rule-based decisions and records without evidence."""
    for d in decisions:
        procedure = getattr(d, "procedure", None)
        if procedure is None:
            continue
        family = getattr(d, "family_size", None)
        critical = getattr(d, "critical", None)
        penalty = getattr(d, "bic_penalty", None)
        text = str(procedure)
        if procedure == "simultaneous":
            values = [c for c in (getattr(e, "critical", None) for e in decisions) if c is not None]
            low, high = (min(values), max(values)) if values else (critical, critical)
            text += f", max-t over {family} pairs, critical value c = {fmt_number(high, 3)}"
            if low is not None and high is not None and low < high:
                text += f" (step-down to {fmt_number(low, 3)})"
        elif procedure == "model":
            text += f", BIC over {family} boundaries, penalty per group {fmt_number(penalty, 3)}"
        elif procedure == "posterior":
            text += f", posterior over {family} candidate boundaries"
        elif critical is not None:
            text += f", {family} tests, critical value {fmt_number(critical, 3)} (per test)"
        else:
            text += f", {family} tests (per test)"
        return text
    return ""


def power_section(data: ReportData) -> str:
    """Power@n and stability curves with the summary figures, when computed."""
    if not data.power:
        return ""
    rows = [
        tag(
            "tr",
            tag("th", esc(measure), scope="row"),
            tag("td", f"{result.discriminative_power:.0%}", class_="num"),
            tag("td", "–" if result.n80 is None else str(result.n80), class_="num"),
            tag(
                "td", "–" if result.tau80_budget is None else str(result.tau80_budget), class_="num"
            ),
            tag("td", fmt_number(result.auc_tau, 3), class_="num"),
        )
        for measure, result in data.power.items()
    ]
    header = ["measure", "discriminative power", "N80", "tau ≥ 0.8 from", "AUC(tau)"]
    tests = sorted({result.test for result in data.power.values()})
    caption = (
        "Power@n: share of random query subsets of size n on which a pair of systems differs "
        f"significantly under the {', '.join(tests)} test (median and 90th percentile over "
        "pairs; max-t and tukey-hsd are family-wise over all the systems). Stability: mean "
        "Kendall tau between the system ordering on a subset and on all queries. '–': "
        "threshold not reached."
    )
    figure = figure_to_svg(plot_power_stability(dict(data.power)))
    summary = table(header, rows, id="power-table", class_="data")
    return _figure_section("power", "Power and stability", caption, summary, figure)


def _figure_section(section_id: str, heading: str, caption: str, summary: str, figure: str) -> str:
    """A section with a caption, a summary table and an inline SVG figure."""
    return tag(
        "section",
        tag("h2", esc(heading)),
        tag("p", esc(caption), class_="caption"),
        summary,
        tag("figure", figure, class_="chart"),
        id=section_id,
    )
