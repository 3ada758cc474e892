"""The report shows a query's or an item's stored text on hover, always escaped: a
``<script>`` in a text stays text in headless Chromium (issue 33)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from orlbuild.report import write_report
from orlbuild.report.data import ReportTexts
from orlbuild.report.screenshot import find_chromium, load_page
from orlbuild.services.builds import built_orls
from orlbuild.services.texts import report_texts
from tests.builders.simulation import simulate_pairwise, tiered_strengths
from tests.builders.store_data import store_judgments
from tests.report.html_page import Page
from tests.report.synthetic import synthetic_report
from tests.store_cli import cli
from tests.stores import store_engine

ITEM_TEXT = (
    'Title: <script>console.error("INJECTED-ITEM")</script>'
    '"><img src=x onerror="console.error(\'INJECTED-IMG\')"> & more'
)
QUERY_TEXT = '</span><script>console.error("INJECTED-QUERY")</script> what is it?'
TEXTS = ReportTexts(queries={"q1": QUERY_TEXT}, items={"d1": ITEM_TEXT, "d3": "plain"})


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The synthetic report without and with texts."""
    folder = tmp_path_factory.mktemp("texts")
    data = synthetic_report(with_power=False)
    plain = write_report(data, folder / "plain.html")
    texts = write_report(replace(data, texts=TEXTS), folder / "texts.html")
    return plain, texts


def _chip_titles(dom: Page) -> dict[str, str]:
    chips = dom.with_class("span", "chip")
    return {str(c["title"]).split("\n")[0]: str(c["title"]) for c in chips}


def test_hover_texts_are_escaped_attributes(pages: tuple[Path, Path]) -> None:
    plain, texts = pages
    html = texts.read_text(encoding="utf-8")
    assert "<script>console.error" not in html and "<img src=x" not in html
    dom = Page(html)
    titles = _chip_titles(dom)
    assert titles["d1"].split("\n")[1] == ITEM_TEXT  # the text, as stored, on hover
    assert titles["d3"].split("\n")[1] == "plain"
    assert "\n" not in titles["d2"] or "INJECTED" not in titles["d2"]
    qids = [a for a in dom.with_class("span", "qid") if a.get("title")]
    assert [a["title"] for a in qids] == [QUERY_TEXT]
    heat = [a for a in dom.find("th", scope="row") if a.get("title")]
    assert [a["title"] for a in heat] == [QUERY_TEXT]
    assert len(Page(plain.read_text(encoding="utf-8")).find("script")) == len(dom.find("script"))


@pytest.mark.skipif(find_chromium() is None, reason="Chromium is not installed")
def test_a_script_in_a_text_stays_text_in_chromium(pages: tuple[Path, Path]) -> None:
    plain, texts = pages
    loaded = load_page(texts)
    assert not any("INJECTED" in message for message in loaded.console), loaded.console
    assert loaded.console == load_page(plain).console == ()
    dom = Page(loaded.dom)
    assert _chip_titles(dom)["d1"].split("\n")[1] == ITEM_TEXT
    assert len(dom.find("script")) == len(Page(load_page(plain).dom).find("script"))
    assert len(dom.find("img")) == 0


def test_report_texts_come_from_the_store(migrated_db_url: str, tmp_path: Path) -> None:
    strengths, _ = tiered_strengths([2, 2], 1.0)
    frame = simulate_pairwise(np.random.default_rng(1), strengths, 4, query="q1")
    store_judgments(migrated_db_url, "pairwise", pd.DataFrame(frame))
    assert cli(migrated_db_url, "build", "--source", "pairwise", "--name", "b")[0] == 0
    item = sorted(set(frame["winner"]))[0]
    path = tmp_path / "t.tsv"
    path.write_text(f"{item}\t<b>bold</b> text\n")
    assert cli(migrated_db_url, "ingest", "text", str(path), "--of", "items")[0] == 0
    with store_engine(migrated_db_url) as engine:
        orls, _ = built_orls(engine, 1)
        texts = report_texts(engine, "default", orls.values())
        assert report_texts(engine, "other", orls.values()) is None
    assert texts is not None
    assert texts.items == {item: "<b>bold</b> text"} and texts.queries == {}
