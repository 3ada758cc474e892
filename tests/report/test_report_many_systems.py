"""The report of 63 systems (a TREC track) fits a 1280 px window: rank intervals instead of
letters, a heat map of the differences with the verdicts on hover (issue 36).

The browser checks need Chromium (``.ci/run`` installs it) and are skipped without it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from orlbuild.report import ReportData, render_report, write_report
from orlbuild.report.screenshot import find_chromium, load_page, screenshot
from scoring.settings import TestSettings
from scoring.statistics import system_comparison
from tests.report.html_page import Page

N_SYSTEMS = 63
N_QUERIES = 50
MEASURES = ("RDQm2-a1@10", "nDCG@10")
WIDTH = 1280
chromium = pytest.mark.skipif(
    find_chromium() is None, reason="Chromium is not installed (apt-get install chromium)"
)
#: Appended to a copy of the page: writes the document's scroll width into the DOM.
MEASURE_SCRIPT = (
    "<script>document.body.setAttribute('data-scroll-width', "
    "String(document.documentElement.scrollWidth));</script>"
)


@pytest.fixture(scope="module")
def many() -> ReportData:
    rng = np.random.default_rng(36)
    names = [f"trec-run-{k:02d}-{'x' * (k % 7)}" for k in range(N_SYSTEMS)]
    quality = np.linspace(0.75, 0.25, N_SYSTEMS)
    queries = pd.Index([f"q{i + 1}" for i in range(N_QUERIES)], name="query")
    base = rng.uniform(-0.15, 0.15, (N_QUERIES, 1))
    per_query = {
        name: pd.DataFrame(
            np.clip(q + base + rng.normal(0, 0.12, (N_QUERIES, len(MEASURES))), 0, 1),
            index=queries,
            columns=list(MEASURES),
        )
        for name, q in zip(names, quality, strict=True)
    }
    panels = {m: pd.DataFrame({s: f[m] for s, f in per_query.items()}) for m in MEASURES}
    comparison = system_comparison(panels, TestSettings(permutations=200, seed=4))
    return ReportData(
        title="63 runs",
        per_query=per_query,
        comparisons=comparison.pairs,
        alpha=0.05,
        test=next(iter(comparison.plans.values())).describe(),
        max_queries=20,
    )


@pytest.fixture(scope="module")
def page(many: ReportData) -> Page:
    return Page(render_report(many))


def test_many_systems_get_tiers_and_rank_intervals_instead_of_letters(
    page: Page, many: ReportData
) -> None:
    table = page.table(id="systems-table")
    assert table[0] == ["#", "system", MEASURES[0], "tier", "ranks", MEASURES[1], "tier", "ranks"]
    for row in table[1:]:
        low, high = (int(x) for x in row[4].split("–"))
        assert 1 <= low <= int(row[0]) <= high <= N_SYSTEMS or low <= high
    assert not page.with_class("td", "cld")  # no letter column left


def test_the_difference_matrix_is_a_heat_map_with_the_verdicts_on_hover(
    page: Page, many: ReportData
) -> None:
    maps = page.with_class("table", "diffmap")
    assert [m.get("data-measure") for m in maps] == list(MEASURES)
    grid = page.table(**{"class": "diffmap", "data-measure": MEASURES[0]})
    assert len(grid) == 1 + N_SYSTEMS and all(len(row) == 1 + N_SYSTEMS for row in grid)
    titles = [a["title"] or "" for a in page.find("td") if " vs " in (a.get("title") or "")]
    assert len(titles) == len(MEASURES) * N_SYSTEMS * (N_SYSTEMS - 1)
    significant = int(many.comparisons["significant"].sum())
    assert sum("(significant" in t for t in titles) == 2 * significant
    assert sum("not significant" in t for t in titles) == 2 * (len(many.comparisons) - significant)


@chromium
def test_the_63_system_report_fits_1280_px(many: ReportData, tmp_path: Path) -> None:
    report = write_report(many, tmp_path / "many.html")
    probe = tmp_path / "probe.html"
    probe.write_text(report.read_text().replace("</body>", MEASURE_SCRIPT + "</body>"))
    loaded = load_page(probe, width=WIDTH, timeout=120)
    body = next(a for t, a in Page(loaded.dom).elements if t == "body")
    width = int(body["data-scroll-width"] or 0)
    print(f"scrollWidth at {WIDTH} px: {width}")
    assert 0 < width <= WIDTH
    shot = screenshot(report, tmp_path / "many.png", width=WIDTH, height=2400, timeout=120)
    with Image.open(shot) as image:
        assert image.size == (WIDTH, 2400)
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
    assert colours is not None and len(colours) > 200
