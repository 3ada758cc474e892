"""The HTML report from synthetic inputs: self-contained, complete, escaped, deterministic."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from orlbuild.errors import OrlbuildError
from orlbuild.report import ReportData, mean_interval, mean_intervals, render_report, write_report
from scoring.statistics import system_tiers
from tests.report.html_page import Page


@pytest.fixture(scope="module")
def html(report_data: ReportData) -> str:
    return render_report(report_data)


@pytest.fixture(scope="module")
def page(html: str) -> Page:
    return Page(html)


def test_page_is_self_contained(html: str, page: Page) -> None:
    assert html.startswith("<!DOCTYPE html>")
    assert not page.find("script") and not page.find("link") and not page.find("iframe")
    for _, attrs in page.elements:
        for key in ("src", "href"):
            value = attrs.get(key)
            assert value is None or value.startswith(("data:", "#")), (key, value)
    assert "http://" not in html.replace("http://www.w3.org/", "")  # SVG namespaces only
    assert "https://" not in html
    # the interval plot, the rank-interval leaderboard, the system tiers, the power curves
    assert len(page.find("svg")) == 4


def test_data_is_escaped(html: str, page: Page) -> None:
    assert "<script>" not in html
    assert "x&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert page.find("title") and "Synthetic &lt;evaluation&gt; &amp; co" in html


def test_systems_table_orders_by_the_first_measure_with_intervals(
    page: Page, report_data: ReportData
) -> None:
    rows = page.table(id="systems-table")
    header = ["#", "system", "RDQm2-a1@10", "tier", "letters", "nDCG@10", "tier", "letters"]
    assert rows[0] == header
    assert [r[1] for r in rows[1:]] == ["alpha", "beta", "gamma", "delta"]
    for row in rows[1:]:
        for system_cell, measure in zip(row[2::3], ["RDQm2-a1@10", "nDCG@10"], strict=True):
            mean, low, high = (float(v) for v in re.findall(r"-?\d+\.\d+", system_cell))
            expected = report_data.per_query[row[1]][measure].mean()
            assert mean == pytest.approx(expected, abs=5e-4)
            assert low < mean < high


def test_systems_table_gives_tier_and_letters_their_own_columns_per_measure(
    page: Page, report_data: ReportData
) -> None:
    """Issue 15: the tiers and letters are columns next to each compared measure's mean."""
    rows = page.table(id="systems-table")
    tiers = system_tiers(report_data.comparisons).set_index(["measure", "system"])
    pairs = report_data.comparisons.set_index(["measure", "a", "b"])["significant"]
    for offset, measure in ((3, "RDQm2-a1@10"), (6, "nDCG@10")):
        assert rows[0][offset - 1 : offset + 2] == [measure, "tier", "letters"]
        shown = {r[1]: (int(r[offset]), r[offset + 1]) for r in rows[1:]}
        for system, (tier, letters) in shown.items():
            assert (tier, letters) == tuple(tiers.loc[(measure, system), ["tier", "letters"]])
        for (a, b), significant in pairs.loc[measure].items():
            shared = set(shown[a][1]) & set(shown[b][1])
            assert bool(shared) == (not significant), (measure, a, b)
    assert [int(r[3]) for r in rows[1:]] == [1, 1, 2, 3]  # not all in one tier: a real check
    # one measure compared: only it gets the columns; none compared: no tier columns at all
    one = report_data.comparisons[report_data.comparisons["measure"] == "nDCG@10"]
    narrow = Page(render_report(replace(report_data, comparisons=one, power=None)))
    header = narrow.table(id="systems-table")[0]
    assert header == ["#", "system", "RDQm2-a1@10", "nDCG@10", "tier", "letters"]
    bare = Page(render_report(replace(report_data, comparisons=pd.DataFrame(), power=None)))
    assert bare.table(id="systems-table")[0] == ["#", "system", "RDQm2-a1@10", "nDCG@10"]


def test_significance_matrix_matches_the_comparisons(page: Page, report_data: ReportData) -> None:
    cells = page.with_class("td", "better") + page.with_class("td", "worse")
    assert len(cells) == 2 * int(report_data.comparisons["significant"].sum())
    rows = page.table(**{"class": "matrix", "data-measure": "nDCG@10"})
    assert rows[0] == ["", "alpha", "beta", "gamma", "delta"]
    frame = report_data.comparisons.set_index(["measure", "a", "b"])
    alpha_beta = frame.loc[("nDCG@10", "alpha", "beta"), "diff"]
    assert rows[1][2].split()[0] == f"{alpha_beta:+.3f}"
    assert rows[2][1].split()[0] == f"{-alpha_beta:+.3f}"  # antisymmetric
    titles = [
        c.get("title") or ""
        for c in page.find("td")
        if "wins/ties/losses" in (c.get("title") or "")
    ]
    assert len(titles) == 2 * len(report_data.comparisons)


def test_heatmap_has_every_query_system_and_measure(page: Page, report_data: ReportData) -> None:
    rows = page.table(**{"class": "heatmap"})
    body = rows[2:]
    assert len(body) == 30
    assert [r[0] for r in body[:3]] == ["q1", "q2", "q3"]  # natural order
    assert all(len(r) == 2 + 2 * 4 for r in body)
    assert body[0][1] == "4/3" and body[2][1] == "–"  # ORL size when known
    assert body[4][2 + 4 + 3] == "–"  # delta's undefined nDCG on q5
    heat = page.with_class("td", "heat")
    assert len(heat) == 30 * 8
    assert all((c.get("style") or "").startswith("background:#") for c in heat)


def test_orls_are_drawn_as_tiers_with_their_audit(page: Page, report_data: ReportData) -> None:
    blocks = page.with_class("details", "orl")
    assert [b.get("data-query") for b in blocks] == ["q1", "q2", "q10"]
    chips = page.with_class("span", "chip")
    assert len(chips) == 4 + 1 + 10
    by_item = {c.get("title", "").split("\n")[0]: c.get("title") or "" for c in chips}
    assert "tied vs leader d2" in by_item["d3"] and "p = 0.600" in by_item["d3"]
    assert "separated vs leader d1" in by_item["d2"]
    assert "score 3.000 [2.600, 3.400]" in by_item["d1"]
    assert len(page.with_class("span", "leader")) == 3 + 1 + 4
    audits = page.with_class("table", "audit")
    assert len(audits) == 2  # q2 has a single item, hence no decision
    audit_rows = [t for t in page.tables if "audit" in str(t["attrs"])]
    assert sum(len(t["rows"]) - 1 for t in audit_rows) == 3 + 9  # type: ignore[arg-type]


def test_power_section_only_when_computed(page: Page, report_data: ReportData) -> None:
    rows = page.table(id="power-table")
    assert [r[0] for r in rows[1:]] == ["RDQm2-a1@10", "nDCG@10"]
    assert rows[1][2] == str(report_data.power["RDQm2-a1@10"].n80)  # type: ignore[index]
    without = Page(render_report(replace(report_data, power=None)))
    # the figures left: interval chart, rank-interval leaderboard, tiers
    assert not without.find("section", id="power") and len(without.find("svg")) == 3


def test_rendering_is_deterministic(report_data: ReportData, html: str, tmp_path: Path) -> None:
    assert render_report(report_data) == html
    path = write_report(report_data, tmp_path / "sub" / "report.html")
    assert path.read_text(encoding="utf-8") == html


def test_no_comparisons_and_no_orls(report_data: ReportData) -> None:
    empty = replace(report_data, comparisons=pd.DataFrame(), orls=(), power=None)
    page = Page(render_report(empty))
    assert not page.with_class("details", "orl")
    assert not page.find("table", **{"class": "matrix"})
    assert page.table(**{"class": "heatmap"})[0] == ["query", "RDQm2-a1@10", "nDCG@10"]


def test_report_data_is_validated(report_data: ReportData) -> None:
    with pytest.raises(OrlbuildError, match="at least one system"):
        replace(report_data, per_query={})
    frames = dict(report_data.per_query)
    frames["beta"] = frames["beta"][["nDCG@10"]]
    with pytest.raises(OrlbuildError, match="same measures"):
        replace(report_data, per_query=frames)
    with pytest.raises(OrlbuildError, match="interval_method"):
        replace(report_data, interval_method="normal")


def test_t_interval_matches_the_textbook_formula() -> None:
    values = np.array([0.2, 0.5, 0.9, 0.4, 0.6, np.nan])
    mean, low, high = mean_interval(values, level=0.95)
    finite = values[:-1]
    half = stats.t.ppf(0.975, 4) * finite.std(ddof=1) / np.sqrt(5)
    assert (mean, low, high) == pytest.approx(
        (finite.mean(), finite.mean() - half, finite.mean() + half)
    )


def test_bootstrap_interval_is_seeded_and_covers_the_mean() -> None:
    values = np.random.default_rng(0).uniform(size=40)
    first = mean_interval(values, method="bootstrap", seed=5)
    assert first == mean_interval(values, method="bootstrap", seed=5)
    assert first[1] < first[0] < first[2]
    t_low, t_high = mean_interval(values)[1:]
    assert first[1] == pytest.approx(t_low, abs=0.03) and first[2] == pytest.approx(
        t_high, abs=0.03
    )


def test_degenerate_intervals() -> None:
    assert mean_interval(np.array([0.5, 0.5, 0.5])) == (0.5, 0.5, 0.5)
    assert mean_interval(np.array([0.7])) == (0.7, 0.7, 0.7)
    assert all(np.isnan(mean_interval(np.array([np.nan, np.nan]))))


def test_mean_intervals_frame(report_data: ReportData) -> None:
    frame = mean_intervals(report_data.per_query)
    assert list(frame.columns) == ["system", "measure", "n", "mean", "low", "high"]
    assert len(frame) == 4 * 2
    delta = frame[(frame["system"] == "delta") & (frame["measure"] == "nDCG@10")].iloc[0]
    assert delta["n"] == 29  # the NaN is left out


def test_a_measure_undefined_everywhere(report_data: ReportData) -> None:
    frames = {}
    for system, frame in report_data.per_query.items():
        copy = frame.copy()
        copy.insert(0, "KendallTau@10", np.nan)
        frames[system] = copy
    page = Page(render_report(replace(report_data, per_query=frames, power=None)))
    rows = page.table(id="systems-table")
    assert rows[0][2] == "KendallTau@10"
    assert [r[1] for r in rows[1:]] == ["alpha", "beta", "gamma", "delta"]  # by the next measure
    assert all(r[2] == "–" for r in rows[1:])


def test_large_reports_draw_the_first_queries_only(report_data: ReportData) -> None:
    page = Page(render_report(replace(report_data, max_queries=2, power=None)))
    assert len(page.table(**{"class": "heatmap"})) == 2 + 2
    assert [b.get("data-query") for b in page.with_class("details", "orl")] == ["q1", "q2"]
    notes = page.with_class("p", "omitted")
    assert len(notes) == 2
    rows = page.table(id="systems-table")  # means still over every query
    expected = report_data.per_query["alpha"]["nDCG@10"].mean()
    assert float(rows[1][5].split()[0]) == pytest.approx(expected, abs=5e-4)
    with pytest.raises(OrlbuildError, match="max_queries"):
        replace(report_data, max_queries=0)


def test_leaderboard_draws_rank_intervals(page: Page, report_data: ReportData) -> None:
    """One row per system, each cell ``lo–hi`` holding the system's rank by mean."""
    assert page.find("section", id="leaderboard")
    rows = page.table(**{"class": "ranks"})
    assert rows[0] == ["system", *report_data.measures]
    assert sorted(r[0] for r in rows[1:]) == sorted(report_data.per_query)
    n = len(report_data.per_query)
    for column, measure in enumerate(report_data.measures, start=1):
        means = {s: f[measure].mean() for s, f in report_data.per_query.items()}
        for row in rows[1:]:
            lo, hi = (int(v) for v in row[column].split("–"))
            rank = 1 + sum(m > means[row[0]] for m in means.values())
            assert 1 <= lo <= rank <= hi <= n


def test_reference_section_marks_fragile_verdicts(report_data: ReportData) -> None:
    pairs = report_data.comparisons.copy()
    holds = np.linspace(0.5, 1.0, len(pairs))
    reference = pairs.assign(holds=holds, fragile=holds < 0.95)
    page = Page(render_report(replace(report_data, reference=reference, reference_resamples=40)))
    rows = page.table(**{"class": "reference"})
    assert len(rows) == 1 + len(pairs)
    marked = [r for r in rows[1:] if "⚠" in r[1]]
    assert len(marked) == int((holds < 0.95).sum())
    assert not Page(render_report(report_data)).find("section", id="reference")
