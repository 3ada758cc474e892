"""The report in a real browser: headless Chromium loads it cleanly and shows the tables.

Needs the Debian packages ``chromium`` and ``chromium-driver`` (``.ci/run``
installs them); without a Chromium binary these tests are skipped with the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from orlbuild.errors import OrlbuildError
from orlbuild.report import ReportData, write_report
from orlbuild.report.screenshot import (
    MAX_HEIGHT,
    find_chromium,
    load_page,
    main,
    page_height,
    screenshot,
)
from tests.report.html_page import Page

pytestmark = pytest.mark.skipif(
    find_chromium() is None,
    reason="Chromium is not installed (Debian: apt-get install chromium chromium-driver)",
)


@pytest.fixture(scope="module")
def report_file(report_data: ReportData, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_report(report_data, tmp_path_factory.mktemp("report") / "report.html")


def test_page_loads_without_errors_and_shows_the_tables(report_file: Path) -> None:
    loaded = load_page(report_file)
    assert loaded.console == ()  # no script errors, no blocked resources reported
    dom = Page(loaded.dom)
    assert [a.get("id") for a in dom.find("section")] == [
        "systems",
        "leaderboard",
        "significance",
        "heatmap",
        "orls",
        "power",
    ]
    systems = dom.table(id="systems-table")
    assert [row[1] for row in systems[1:]] == ["alpha", "beta", "gamma", "delta"]
    assert len(dom.with_class("table", "matrix")) == 2
    assert len(dom.table(**{"class": "heatmap"})) == 2 + 30
    assert len(dom.with_class("details", "orl")) == 3
    assert len(dom.find("svg")) == 4  # rank-interval leaderboard, intervals, system tiers, power
    assert dom.find("title")


def test_console_errors_are_caught(tmp_path: Path) -> None:
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    assert any("undefinedFunction" in message for message in load_page(broken).console)


def test_screenshot_command_line_takes_a_real_picture(
    report_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "shot.png"
    main([str(report_file), "-o", str(target), "--width", "1000", "--height", "1400"])
    assert capsys.readouterr().out.strip() == str(target.resolve())
    with Image.open(target) as image:
        assert image.size == (1000, 1400)
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
    assert colours is not None and len(colours) > 200  # text, tables and charts, not a blank page


def test_screenshot_without_chromium_says_what_to_install(
    report_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(OrlbuildError, match="apt-get install chromium"):
        screenshot(report_file, tmp_path / "never.png")


def test_screenshot_takes_the_whole_page_by_default(tmp_path: Path) -> None:
    """Issue 40, item 10: a 5,400 px page is shot whole, not cut at a fixed height."""
    page = tmp_path / "tall.html"
    page.write_text(
        "<html><body style='margin:0'><div style='height:5400px;background:"
        "linear-gradient(red,blue)'></div></body></html>"
    )
    target = tmp_path / "tall.png"
    main([str(page), "-o", str(target), "--width", "800"])
    with Image.open(target) as image:
        assert image.size == (800, 5400)
        bottom = image.convert("RGB").getpixel((400, 5390))
    assert bottom[2] > 200 and bottom[0] < 60  # the blue end of the gradient was drawn
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tall.html", "tall.png"]


def test_screenshot_of_the_report_is_as_tall_as_the_report(
    report_file: Path, tmp_path: Path
) -> None:
    height = page_height(report_file, width=1000)
    assert height > 1400
    with Image.open(screenshot(report_file, tmp_path / "full.png", width=1000)) as image:
        assert image.size == (1000, min(height, MAX_HEIGHT))
