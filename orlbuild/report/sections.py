"""The sections of the report, each a small function from :class:`ReportData` to HTML."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from orlbuild.records import QueryORL, TieDecision
from orlbuild.report.data import ReportData
from orlbuild.report.figures import (
    cell_colours,
    colour_scale,
    figure_to_svg,
    interval_figure,
    plot_power_stability,
    tier_figure,
)
from orlbuild.report.markup import esc, fmt_number, fmt_p, table, tag
from scoring.statistics import system_tiers

#: With more systems than this, the difference matrices show the top systems only.
MATRIX_LIMIT = 12
#: Systems in the top-k view of a large comparison.
TOP_K = 10

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
    level = f"{data.level:.0%}"
    method = "t-interval" if data.interval_method == "t" else "BCa bootstrap"
    rows = []
    for rank, system in enumerate(order, start=1):
        cells = [tag("td", str(rank), class_="num"), tag("th", esc(system), scope="row")]
        for measure in data.measures:
            cells.append(_mean_cell(indexed.loc[(system, measure)], system, measure, level))
            if measure in tiered:
                cells.extend(_tier_cells(tiers.get((measure, system)), system, measure))
        rows.append(tag("tr", *cells))
    figure = figure_to_svg(interval_figure(intervals, order, data.measures))
    caption = (
        f"Mean over queries with its {level} confidence interval ({method} over per-query scores)."
    )
    if tiers:
        caption += (
            " tier: the system's tier on the measure to its left (leader walk over the systems "
            "sorted by mean: a system joins the tier of the leader it does not differ from "
            "significantly); letters: systems sharing a letter do not differ significantly."
        )
    summary = tag(
        "table",
        tag("thead", _systems_header(data.measures, tiered)),
        tag("tbody", *rows),
        id="systems-table",
        class_="data",
    )
    return _figure_section("systems", "Systems", caption, summary, figure)


def _systems_header(measures: Sequence[str], tiered: set[str]) -> str:
    """``#``, ``system``, then per measure its name and, when compared, ``tier`` and ``letters``."""
    cells = [tag("th", "#", scope="col"), tag("th", "system", scope="col")]
    for measure in measures:
        cells.append(tag("th", esc(measure), scope="col", class_="measure"))
        if measure in tiered:
            cells.append(tag("th", "tier", scope="col", title=f"{measure}: tier (1 = best)"))
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


def _tier_cells(entry: tuple[int, str] | None, system: str, measure: str) -> list[str]:
    """The ``tier`` and ``letters`` cells of one system on one measure (``–`` when untested)."""
    if entry is None:
        return [tag("td", "–", class_="num na"), tag("td", "–", class_="na")]
    tier, letters = entry
    return [
        tag("td", str(tier), class_="num tier", title=f"{system}: tier {tier} on {measure}"),
        tag("td", esc(letters), class_="cld", title=f"{system}: letters {letters} on {measure}"),
    ]


def _tier_lookup(data: ReportData) -> dict[tuple[str, str], tuple[int, str]]:
    """(measure, system) -> (tier, letters), empty without comparisons."""
    if data.comparisons.empty:
        return {}
    tiers = system_tiers(data.comparisons)
    return {
        (str(m), str(s)): (int(t), str(letters))
        for m, s, t, letters in zip(
            tiers["measure"], tiers["system"], tiers["tier"], tiers["letters"], strict=True
        )
    }


def significance_section(data: ReportData, order: Sequence[str]) -> str:
    """System tiers as a figure, and per measure the matrix of differences.

    Row mean minus column mean, coloured when significant. With more than
    :data:`MATRIX_LIMIT` systems the matrix holds the :data:`TOP_K` best systems
    of the measure, and the tiers carry the rest.
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
    blocks.append(
        tag(
            "p",
            esc(
                f"Test: {test}; significant means adjusted p < alpha = {data.alpha:g}. "
                "Tiers: systems sorted by mean, each joining the tier of the leader it does not "
                "differ from significantly (bracketed, T1 best); letters: systems sharing a "
                "letter do not differ significantly."
            ),
            class_="caption",
        )
    )
    blocks.append(tag("figure", figure_to_svg(tier_figure(tiers, data.measures)), class_="chart"))
    large = len(order) > MATRIX_LIMIT
    test_note = (
        f"Cell: mean of the row system minus the column system. Coloured when the test is "
        f"significant at alpha = {data.alpha:g} ({test}) "
        f"(green: row better, red: row worse). Hover for p-values and per-query wins/ties/losses."
    )
    if large:
        test_note = f"The {TOP_K} best of {len(order)} systems on each measure. " + test_note
    blocks.append(tag("p", esc(test_note), class_="caption"))
    matrices = []
    for measure in data.measures:
        pairs = data.comparisons[data.comparisons["measure"] == measure]
        if pairs.empty:
            continue
        lookup = {(r.a, r.b): r for r in pairs.itertuples(index=False)}
        shown = list(order)
        if large:
            ranked = tiers[tiers["measure"] == measure].sort_values("rank")
            shown = [str(s) for s in ranked["system"].head(TOP_K)]
        rows = [
            tag(
                "tr",
                tag("th", esc(s), scope="row"),
                *(_matrix_cell(measure, s, c, lookup) for c in shown),
            )
            for s in shown
        ]
        matrix = table(["", *shown], rows, class_="matrix", data_measure=measure)
        verdicts = _verdict_count(pairs) if large else _verdicts(pairs)
        matrices.append(tag("div", tag("h3", esc(measure)), matrix, verdicts))
    blocks.append(tag("div", *matrices, class_="matrices"))
    return tag("section", *blocks, id="significance")


def _verdict_count(pairs: pd.DataFrame) -> str:
    """How many of a measure's pairs are significant (too many to list)."""
    count = int(pairs["significant"].astype(bool).sum())
    return tag("p", f"{count} of {len(pairs)} differences significant.", class_="verdict")


def _matrix_cell(measure: str, row: str, column: str, lookup: Mapping[tuple[str, str], Any]) -> str:
    if row == column:
        return tag("td", "·", class_="diag")
    if (row, column) in lookup:
        entry = lookup[(row, column)]
        diff, wins, losses = entry.diff, entry.wins, entry.losses
    elif (column, row) in lookup:
        entry = lookup[(column, row)]
        diff, wins, losses = -entry.diff, entry.losses, entry.wins
    else:
        return tag("td", "–", class_="na")
    significant = bool(entry.significant)
    kind = ("better" if diff > 0 else "worse") if significant else "ns"
    title = (
        f"{row} vs {column} on {measure}: diff {fmt_number(diff, 4, signed=True)}, "
        f"p = {fmt_p(entry.p_value)}, adjusted p = {fmt_p(entry.p_adjusted)}, "
        f"wins/ties/losses {wins}/{entry.ties}/{losses}"
    )
    mark = " ▲" if kind == "better" else " ▼" if kind == "worse" else ""
    return tag("td", fmt_number(diff, 3, signed=True) + mark, class_=f"num {kind}", title=title)


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
        cells = [tag("th", esc(query), scope="row")]
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
        tag("div", *(_orl_block(orl) for orl in shown), class_="orls"),
        _omitted(len(ordered), len(shown)),
        id="orls",
    )


def _orl_block(orl: QueryORL) -> str:
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
        tag("span", esc(orl.query), class_="qid"),
        bar,
        tag("span", esc(meta), class_="meta"),
    )
    rows = []
    for index, tier in enumerate(orl.tiers):
        leader = tier[0] if tier else None
        if index > 0 and leader in by_item:
            rows.append(tag("div", esc(_separation_text(by_item[leader])), class_="gap"))
        chips = [_chip(orl, item, by_item.get(item), item == leader) for item in tier]
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


def _chip(orl: QueryORL, item: str, decision: TieDecision | None, leader: bool) -> str:
    parts = [item]
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
