"""Same data, same seed, same verdict: ``compare``, ``eval --compare``, ``power`` and the report
give the same p-values whatever the order of the systems or files (issue 36), and the report
agrees with ``compare`` on every p-value (docs/comparing-systems.md, "One family of decisions")."""

from __future__ import annotations

import itertools
import json
import re
from html import unescape
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orlbuild.cli.main import app
from orlbuild.report.markup import fmt_p
from tests.sample_store import SAMPLE, SYSTEMS, graded_sample_store

MEASURES = ("nDCG@10", "RDQm2-a1@10")
SETTINGS = ("--permutations", "500", "--seed", "7")
runner = CliRunner()


def _ok(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, f"{args}\n{result.output}"
    return result.stdout


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path]:
    folder = tmp_path_factory.mktemp("order")
    db = ["--db", str(folder / "orlbuild.db"), "--quiet"]
    graded_sample_store(db, _ok)
    qrels = folder / "g.qrels"
    _ok([*db, "orl", "export", "g", "--format", "qrels", "-o", str(qrels)])
    return db, qrels


def _by_pair(pairs: list[dict]) -> dict[tuple[str, frozenset[str]], tuple[float, float, bool]]:
    return {
        (p["measure"], frozenset((p["a"], p["b"]))): (
            p["p_value"],
            p["p_adjusted"],
            p["significant"],
        )
        for p in pairs
    }


def _compare(db: list[str], systems: tuple[str, ...], *extra: str) -> dict:
    chosen = [w for s in systems for w in ("-s", s)]
    measures = [w for m in MEASURES for w in ("-m", m)]
    args = [*db, "compare", "-b", "g", *chosen, *measures, *SETTINGS, *extra]
    return json.loads(_ok([*args, "--format", "json"]))


def test_compare_gives_the_same_p_values_in_every_order(store: tuple[list[str], Path]) -> None:
    db, _ = store
    base = _by_pair(_compare(db, SYSTEMS[:3])["pairs"])
    assert len(base) == 2 * 3
    for order in itertools.permutations(SYSTEMS[:3]):
        doc = _compare(db, order)
        assert _by_pair(doc["pairs"]) == base, order
        ranks = {(s["measure"], s["system"]): (s["rank_lo"], s["rank_hi"]) for s in doc["systems"]}
        first = _compare(db, SYSTEMS[:3])["systems"]
        assert ranks == {(s["measure"], s["system"]): (s["rank_lo"], s["rank_hi"]) for s in first}


def test_eval_compare_gives_the_same_p_values_in_every_file_order(
    store: tuple[list[str], Path],
) -> None:
    _, qrels = store
    measures = [w for m in MEASURES for w in ("-m", m)]
    results = []
    for order in (SYSTEMS, SYSTEMS[::-1], ("hybrid", "bm25", "tfidf", "dense")):
        runs = [str(SAMPLE / "runs" / f"{s}.trec") for s in order]
        doc = json.loads(
            _ok(["eval", str(qrels), *runs, *measures, "--compare", *SETTINGS, "--format", "json"])
        )
        results.append(_by_pair(doc["pairs"]))
    assert len(results[0]) == 2 * 6
    assert results[0] == results[1] == results[2]


def test_power_gives_the_same_figures_in_every_order(store: tuple[list[str], Path]) -> None:
    db, _ = store
    docs = []
    for order in (SYSTEMS[:3], SYSTEMS[:3][::-1]):
        chosen = [w for s in order for w in ("-s", s)]
        args = [*db, "power", "-b", "g", *chosen, "-m", "nDCG@10", "--budgets", "5,10"]
        args += ["--subsamples", "20", "--permutations", "200", "--seed", "3", "--format", "json"]
        docs.append(json.loads(_ok(args))["measures"])
    assert docs[0] == docs[1]


def test_the_report_and_compare_agree_on_every_p_value(
    store: tuple[list[str], Path], tmp_path: Path
) -> None:
    db, _ = store
    compared = _compare(db, SYSTEMS[::-1])  # the report takes the systems in stored order
    target = tmp_path / "report.html"
    measures = [w for m in MEASURES for w in ("-m", m)]
    _ok([*db, "report", "-b", "g", *measures, *SETTINGS, "-o", str(target)])
    html = unescape(target.read_text())
    shown = {
        (measure, frozenset((row, column))): (p, adjusted)
        for row, column, measure, p, adjusted in re.findall(
            r'title="([^"]+) vs ([^"]+) on ([^:]+): diff [^,]+, p = ([^,]+), adjusted p = ([^,]+),',
            html,
        )
    }
    pairs = _by_pair(compared["pairs"])
    assert len(pairs) == 2 * 6 and set(shown) == set(pairs)
    agree = sum(
        shown[key] == (fmt_p(p), fmt_p(adjusted)) for key, (p, adjusted, _) in pairs.items()
    )
    assert agree == len(pairs)
    # the leaderboard's rank intervals are compare's
    for entry in compared["systems"]:
        cell = f"{entry['rank_lo']}–{entry['rank_hi']}"
        assert cell in html
