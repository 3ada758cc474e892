"""Assemble the report into one self-contained HTML file (inline CSS and SVG, no scripts)."""

from __future__ import annotations

from pathlib import Path

from orlbuild import __version__
from orlbuild.output_files import ProtectedPaths, write_output
from orlbuild.report.data import ReportData
from orlbuild.report.intervals import mean_intervals
from orlbuild.report.markup import esc, tag

__all__ = ["STYLE", "render_report", "write_report"]

STYLE = """
:root { --ink: #1b1b1b; --muted: #5f6b76; --line: #d8dee4; --panel: #f6f8fa;
        --better: #d6f0dc; --better-ink: #0f5132; --worse: #f8d7da; --worse-ink: #842029;
        --accent: #1f4e79; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
       font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
             sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 1.7rem; margin: 0 0 12px; color: var(--accent); }
h2 { font-size: 1.25rem; margin: 36px 0 8px; padding-bottom: 4px;
     border-bottom: 2px solid var(--line); }
h3 { font-size: 1rem; margin: 18px 0 6px; }
.caption { color: var(--muted); margin: 4px 0 12px; max-width: 80ch; }
ul.glance { display: flex; flex-wrap: wrap; gap: 8px 10px; margin: 0 0 12px; padding: 0;
            list-style: none; }
ul.glance li { background: var(--panel); border: 1px solid var(--line); border-radius: 6px;
               padding: 4px 12px; color: var(--muted); }
ul.glance strong { color: var(--ink); font-size: 1.05rem; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0; }
dl.meta dt { color: var(--muted); }
dl.meta dd { margin: 0; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
             font-size: 0.85rem; overflow-wrap: anywhere; }
ul.notes { color: var(--muted); margin: 6px 0; padding-left: 20px; }
details > summary { cursor: pointer; }
details.build > summary { color: var(--muted); }
table { border-collapse: collapse; margin: 6px 0 12px; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: left; }
thead th { background: var(--panel); font-weight: 600; position: sticky; top: 0; }
td.num { text-align: right; white-space: nowrap; }
table.data tbody tr:nth-child(even) { background: #fbfcfd; }
.mean { font-weight: 600; }
.ci { color: var(--muted); font-size: 0.85rem; }
.cld { color: var(--accent); font-size: 0.8rem; font-family: ui-monospace, monospace; }
#systems-table .measure { border-left: 1px solid var(--line); }
figure.chart { margin: 8px 0 0; }
figure.chart svg { max-width: 100%; height: auto; }
table.matrix td, table.matrix th { text-align: center; min-width: 84px; }
table.matrix td.better { background: var(--better); color: var(--better-ink); font-weight: 600; }
table.matrix td.worse { background: var(--worse); color: var(--worse-ink); font-weight: 600; }
table.matrix td.ns { color: var(--muted); }
table.matrix td.diag { color: #bbb; }
.matrices { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr));
            gap: 4px 32px; }
.heatmaps { display: grid; grid-template-columns: 1fr; gap: 4px; }
table.diffmap { border-collapse: separate; border-spacing: 1px; margin: 4px 0 8px; }
table.diffmap td { width: 9px; min-width: 9px; height: 9px; padding: 0; border: 0; }
table.diffmap thead th { padding: 0; border: 0; font: 400 0.55rem ui-monospace, monospace;
                         color: var(--muted); background: none; position: static; }
table.diffmap tbody th { padding: 0 6px 0 0; border: 0; font-size: 0.7rem; font-weight: 400;
                         white-space: nowrap; text-align: right; }
table.diffmap td.diag { background: #fff; }
ul.verdict { margin: 4px 0 8px; padding-left: 20px; font-size: 0.9rem; }
ul.verdict strong { font-weight: 600; }
p.verdict { color: var(--muted); }
.scroll { overflow-x: auto; }
table.heatmap { font-size: 0.82rem; }
table.heatmap thead th { text-align: center; }
table.heatmap td.heat { min-width: 58px; text-align: center; border: 1px solid #fff; }
table.heatmap td.heat.first { border-left: 3px solid #fff; }
table.heatmap th[scope=colgroup] { border-left: 3px solid #fff; }
table.heatmap td.size { color: var(--muted); }
table.heatmap th, table.heatmap td { padding: 2px 8px; }
.scale { display: inline-block; width: 140px; height: 10px; border-radius: 3px;
         vertical-align: middle; margin: 0 6px; border: 1px solid var(--line); }
.scale-legend { white-space: nowrap; font-size: 0.85rem; }
.orls { display: grid; grid-template-columns: 1fr; gap: 6px; }
details.orl { border: 1px solid var(--line); border-radius: 6px; padding: 4px 10px;
               background: #fff; }
details.orl[open] { background: var(--panel); }
details.orl > summary { display: flex; align-items: center; gap: 12px; list-style: none; }
details.orl > summary::-webkit-details-marker { display: none; }
details.orl > summary::before { content: "▸"; color: var(--muted); }
details.orl[open] > summary::before { content: "▾"; }
.qid { font-weight: 600; min-width: 3.5em; }
.tierbar { display: flex; flex: 0 0 260px; height: 12px; border-radius: 3px; overflow: hidden;
           gap: 2px; background: #fff; }
.tierbar .seg { display: block; min-width: 4px; }
summary .meta { color: var(--muted); font-size: 0.85rem; }
.tiers { margin: 8px 0 4px; }
.tier { display: flex; align-items: flex-start; gap: 10px; margin: 4px 0; }
.tier-label { flex: 0 0 auto; font-weight: 600; font-size: 0.8rem; border-radius: 4px;
              min-width: 26px; text-align: center; padding: 2px 6px; }
.chips { display: flex; flex-wrap: wrap; gap: 4px; }
.chip { font: 0.8rem ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #fff;
        border: 1px solid var(--line); border-radius: 10px; padding: 1px 8px; cursor: help; }
.chip.leader { border-color: var(--accent); font-weight: 700; }
.gap { color: var(--muted); font-size: 0.78rem; margin: 2px 0 2px 36px; }
details.audit-trail { margin: 6px 0; }
details.audit-trail > summary { color: var(--muted); font-size: 0.85rem; }
table.audit { font-size: 0.8rem; background: #fff; }
table.audit td.tied { color: var(--accent); }
table.audit td.separated { color: var(--worse-ink); }
footer { margin-top: 40px; color: var(--muted); font-size: 0.8rem; }
@media print { details { display: block; } thead th { position: static; } }
"""


def render_report(data: ReportData) -> str:
    """Render ``data`` as one self-contained HTML document.

    The page needs no network: CSS is inline, figures are inline SVG drawn by
    matplotlib, there are no scripts; hover text uses ``title`` attributes and
    the ORLs fold with ``<details>``. The same input gives the same bytes.

    Parameters
    ----------
    data
        What to show (see :class:`~orlbuild.report.data.ReportData`).

    Returns
    -------
    str
        The HTML document.
    """
    # matplotlib is imported only when a report is drawn: it slows every CLI start-up
    from orlbuild.report.leaderboard import leaderboard_ranks, leaderboard_section
    from orlbuild.report.next_round import next_round_section
    from orlbuild.report.reference_resampling import reference_section
    from orlbuild.report.sections import (
        header_section,
        heatmap_section,
        orl_section,
        power_section,
        significance_section,
        system_order,
        systems_section,
    )

    intervals = mean_intervals(
        data.per_query, level=data.level, method=data.interval_method, seed=data.seed
    )
    order = system_order(intervals, data.measures)
    body = [
        header_section(data),
        systems_section(data, intervals, order),
        leaderboard_section(data, leaderboard_ranks(data)),
        significance_section(data, order),
        reference_section(data),
        heatmap_section(data, order),
        orl_section(data),
        power_section(data),
        next_round_section(data),
        tag(
            "footer",
            esc(f"Generated by orlbuild {__version__}. Self-contained: no network needed."),
        ),
    ]
    head = (
        '<meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="generator" content="orlbuild">'
        + tag("title", esc(data.title))
        + tag("style", STYLE)
    )
    return (
        "<!DOCTYPE html>\n" + tag("html", tag("head", head), tag("body", tag("main", *body))) + "\n"
    )


def write_report(data: ReportData, path: str | Path, *, protected: ProtectedPaths = ()) -> Path:
    """Render ``data`` and write it to ``path`` (UTF-8); returns the path.

    The file is written by :func:`orlbuild.output_files.write_output`: never
    over a ``protected`` file, and replaced only once complete.
    """
    return write_output(path, render_report(data), protected=protected)
