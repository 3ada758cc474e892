"""``orlbuild compare`` for many systems and for papers (issue 36): ``--all-systems``,
``--sort``, the leaderboard as CSV (``--table``, two files with ``-o``), Markdown and LaTeX;
the pipeline summary counts the pairs of more than 8 systems."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from orlbuild.cli.main import app
from orlbuild.services.build_evaluation import BuildEvaluation
from scoring.settings import TestSettings
from scoring.statistics import system_comparison
from tests.sample_store import SYSTEMS, graded_sample_store

MEASURES = ["-m", "nDCG@10", "-m", "RDQm2-a1@10"]
runner = CliRunner()


def _run(args: list[str]) -> tuple[int, str, str]:
    result = runner.invoke(app, args)
    return result.exit_code, result.stdout, result.stderr


def _ok(args: list[str]) -> str:
    code, out, err = _run(args)
    assert code == 0, f"{args}\n{out}{err}"
    return out


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    folder = tmp_path_factory.mktemp("boards")
    db = ["--db", str(folder / "orlbuild.db"), "--quiet"]
    graded_sample_store(db, _ok)
    return db


def _json(db: list[str], *args: str) -> dict:
    return json.loads(_ok([*db, "compare", "-b", "g", *MEASURES, *args, "--format", "json"]))


def test_all_systems_and_the_sort_orders(db: list[str]) -> None:
    every = _json(db, "--all-systems")
    named = _json(db, *[w for s in SYSTEMS for w in ("-s", s)])
    assert every["pairs"] == named["pairs"] and len(every["pairs"]) == 2 * 6
    first = [s for s in every["systems"] if s["measure"] == "nDCG@10"]
    means = [s["mean"] for s in first]
    assert means == sorted(means, reverse=True)
    for pair in every["pairs"]:  # sorted by the first measure's mean: a before b
        if pair["measure"] == "nDCG@10":
            assert pair["mean_a"] >= pair["mean_b"]
    given = ("tfidf", "bm25", "hybrid", "dense")
    kept = _json(db, *[w for s in given for w in ("-s", s)], "--sort", "name")
    assert [s["system"] for s in kept["systems"] if s["measure"] == "nDCG@10"] == list(given)
    assert [(p["a"], p["b"]) for p in kept["pairs"][:3]] == [
        ("tfidf", "bm25"),
        ("tfidf", "hybrid"),
        ("tfidf", "dense"),
    ]
    # the verdicts do not depend on the order
    key = {(p["measure"], frozenset((p["a"], p["b"]))): p["p_adjusted"] for p in kept["pairs"]}
    assert key == {
        (p["measure"], frozenset((p["a"], p["b"]))): p["p_adjusted"] for p in every["pairs"]
    }
    code, out, err = _run([*db, "compare", "-b", "g", "-s", "bm25", "--all-systems", *MEASURES])
    assert code == 1 and out == "" and "not both" in err and "Traceback" not in err


def test_csv_writes_the_leaderboard_as_well_as_the_pairs(db: list[str], tmp_path: Path) -> None:
    base = [*db, "compare", "-b", "g", "--all-systems", *MEASURES, "--format", "csv"]
    board = list(csv.DictReader(io.StringIO(_ok([*base, "--table", "leaderboard"]))))
    assert list(board[0]) == [
        "measure", "rank", "system", "mean", "low", "high", "queries", "tier", "letters",
        "rank_lo", "rank_hi",
    ]  # fmt: skip
    assert len(board) == 2 * 4
    for row in board:
        assert float(row["low"]) <= float(row["mean"]) <= float(row["high"])
        assert int(row["rank_lo"]) <= int(row["rank"]) <= int(row["rank_hi"])
    pairs = list(csv.DictReader(io.StringIO(_ok(base))))
    assert len(pairs) == 2 * 6 and "p_adjusted" in pairs[0] and "near_alpha" in pairs[0]
    target = tmp_path / "results.csv"
    code, out, err = _run([*base, "-o", str(target)])
    assert code == 0 and out == ""
    written = pd.read_csv(tmp_path / "results.leaderboard.csv")
    assert len(written) == 8 and len(pd.read_csv(tmp_path / "results.pairs.csv")) == 12
    assert "results.pairs.csv" in err and "results.leaderboard.csv" in err


def test_markdown_and_latex_leaderboards_carry_a_footnote_on_the_test(
    db: list[str], tmp_path: Path
) -> None:
    base = [*db, "compare", "-b", "g", "--all-systems", *MEASURES]
    markdown = _ok([*base, "--format", "markdown"])
    lines = markdown.splitlines()
    assert lines[0].startswith("| # | system | nDCG@10 mean [95% CI] | tier | ranks |")
    table = [line for line in lines if line.startswith("|")]
    assert len(table) == 2 + 4
    assert "max-T" in markdown and "alpha = 0.05" in markdown and "rank interval" in markdown
    target = tmp_path / "board.tex"
    _ok([*base, "--format", "latex", "-o", str(target)])
    latex = target.read_text()
    assert latex.startswith("\\begin{table}") and "\\toprule" in latex and "\\bottomrule" in latex
    assert "\\multicolumn{3}{c}{RDQm2-a1@10}" in latex and "95\\% CI" in latex
    assert latex.count(" \\\\\n") >= 2 + 4 and "--" in latex
    code, _, err = _run([*base, "-o", str(tmp_path / "x.txt")])
    assert code == 1 and "--output needs --format" in err


def test_the_pipeline_summary_counts_the_pairs_of_many_systems() -> None:
    rng = np.random.default_rng(8)
    names = [f"run{k}" for k in range(9)]
    frame = pd.DataFrame(rng.normal(0.5, 0.1, (20, 9)) + np.linspace(0, 0.4, 9), columns=names)
    pairs = system_comparison(frame, TestSettings(permutations=200), measure="M").pairs
    per_query = {name: frame[[name]].rename(columns={name: "M"}) for name in names}
    evaluation = BuildEvaluation(
        build={"id": 3}, orls={}, per_query=per_query, comparisons=pairs, compare=TestSettings()
    )
    table = evaluation.verdicts()
    count = int(pairs["significant"].sum())
    assert table.to_dict(orient="records") == [
        {
            "measure": "M",
            "significant": f"{count} of 36 pairs",
            "not significant": f"{36 - count} pairs",
            "details": "orlbuild compare --build 3 --all-systems -m 'M'; the report's tiers "
            "and rank intervals",
        }
    ]
    assert max(len(str(v)) for v in table.iloc[0]) < 120
    few = BuildEvaluation(
        build={"id": 3},
        orls={},
        per_query={n: per_query[n] for n in names[:3]},
        comparisons=system_comparison(frame[names[:3]], TestSettings(), measure="M").pairs,
        compare=TestSettings(),
    )
    assert list(few.verdicts().columns) == ["measure", "significant", "not significant"]
