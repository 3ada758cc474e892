"""Names are text: every special character of mathtext, TeX and HTML, through the figures.

System and query names with ``$...$`` (mathtext), TeX commands and HTML
markup go through ``orlbuild report`` and ``orlbuild power --plot``: the
report draws them as typed (inside its SVG figures, HTML-escaped once) and
nothing is parsed, so no name can spoof text or crash the report.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from tests.store_cli import cli

#: mathtext ($ ^ _ \ { }), TeX (# % & ~ ^ \ { }) and HTML (< > & " ') in system names.
SYSTEMS = (
    "$x^2$ and $\\alpha_{1}$",
    "<b>bold</b> & \"quoted\" 'it'",
    "100% #1 ~{tex} \\textbf{x} $\\nope{$",  # $\\nope{$ crashes mathtext
)
#: The same characters in query ids (no whitespace: TREC run columns).
QUERIES = ("q$a^b$", "q<i>&amp;", "q\\_%#{}~^", "q$", "q'\"", "q5")


@pytest.fixture
def store(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'names.db'}"
    assert cli(url, "db", "upgrade")[0] == 0
    judgments = tmp_path / "j.tsv"
    judgments.write_text(
        "query\titem\trank\n" + "".join(f"{q}\td{i}\t{i}\n" for q in QUERIES for i in range(1, 6))
    )
    assert cli(url, "ingest", "listwise", str(judgments))[0] == 0
    for index, system in enumerate(SYSTEMS):
        run = tmp_path / f"run{index}.trec"
        order = [(i + index) % 5 + 1 for i in range(5)]
        lines = [f"{q} Q0 d{d} {r} {10 - r} x\n" for q in QUERIES for r, d in enumerate(order, 1)]
        run.write_text("".join(lines))
        code, _, err = cli(url, "ingest", "run", str(run), "--system", system)
        assert code == 0, err
    code, _, err = cli(url, "build", "--source", "listwise", "--name", "b")
    assert code == 0, err
    return url


def test_the_report_draws_every_name_as_typed(store: str, tmp_path: Path) -> None:
    output = tmp_path / "report.html"
    code, _, err = cli(
        store, "report", "--build", "b", "-o", str(output), "--permutations", "50",
        "--budgets", "3", "--subsamples", "5",
    )  # fmt: skip
    assert code == 0, err
    assert "Traceback" not in err
    page = output.read_text(encoding="utf-8")
    figures = "".join(re.findall(r"<svg.*?</svg>", page, flags=re.DOTALL))
    texts = set(re.findall(r"<text[^>]*>([^<]*)</text>", figures))
    assert texts
    for system in SYSTEMS:
        # an SVG <text> holding the whole name, escaped once: drawn as typed, not parsed
        assert html.escape(system, quote=False) in texts, system
    assert "<b>bold</b>" not in page  # never raw markup


def test_power_plot_with_special_names(store: str, tmp_path: Path) -> None:
    plot = tmp_path / "power.png"
    code, _, err = cli(
        store, "power", "--build", "b", "-s", SYSTEMS[0], "-s", SYSTEMS[1], "-s", SYSTEMS[2],
        "-m", "nDCG@5", "--budgets", "3", "--subsamples", "5", "--permutations", "50",
        "--plot", str(plot),
    )  # fmt: skip
    assert code == 0, err
    assert plot.read_bytes().startswith(b"\x89PNG")
