"""Every output states the grades and gain of each nDCG it shows (issue 36; docs/measures.md,
"Baselines"): the table under its title, CSV on standard error (the file holds only the
data), JSON in its ``conventions``, and the Markdown/LaTeX leaderboard in its footnote."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from orlbuild.cli.main import app
from tests.sample_store import SAMPLE, graded_sample_store

runner = CliRunner()
#: What a graded build's bare nDCG@10 is: trec_eval's, on the native grades.
FULL = "nDCG@10 = nDCG(grade=native,gain=linear)@10"


def _ok(args: list[str]) -> tuple[str, str]:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, f"{args}\n{result.stdout}{result.stderr}"
    return result.stdout, result.stderr


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    db = ["--db", str(tmp_path_factory.mktemp("notes") / "orlbuild.db"), "--quiet"]
    graded_sample_store(db, lambda args: _ok(args)[0])
    return db


def _compare(db: list[str], fmt: str) -> tuple[str, str]:
    return _ok([*db, "compare", "-b", "g", "-m", "nDCG@10", "--all-systems", "--format", fmt])


def test_the_compare_table_states_the_grades_and_gain(db: list[str]) -> None:
    out, _ = _compare(db, "table")
    assert FULL in " ".join(out.split())


def test_compare_csv_keeps_the_note_off_the_data(db: list[str]) -> None:
    out, err = _compare(db, "csv")
    assert "Note:" not in out and "grade=" not in out
    assert FULL in err


def test_compare_json_has_the_conventions(db: list[str]) -> None:
    out, _ = _compare(db, "json")
    assert json.loads(out)["conventions"]["ndcg"].startswith(FULL)


@pytest.mark.parametrize("fmt", ["markdown", "latex"])
def test_the_leaderboard_footnote_states_them(db: list[str], fmt: str) -> None:
    out, _ = _compare(db, fmt)
    assert FULL in " ".join(out.split())


def test_a_comparison_without_ndcg_has_no_note(db: list[str]) -> None:
    out, err = _ok(
        [*db, "compare", "-b", "g", "-m", "RDQm2-a1@10", "--all-systems", "--format", "json"]
    )
    assert json.loads(out)["conventions"] == {}
    out, err = _ok([*db, "compare", "-b", "g", "-m", "RDQm2-a1@10", "--all-systems"])
    assert "grade=" not in out + err


def test_power_states_them(db: list[str]) -> None:
    args = [*db, "power", "-b", "g", "-m", "nDCG@10", "--all-systems", "--subsamples", "20"]
    out, _ = _ok([*args, "--format", "json"])
    assert json.loads(out)["conventions"]["ndcg"].startswith(FULL)
    out, _ = _ok(args)
    assert FULL in " ".join(out.split())


def test_eval_csv_states_them_on_standard_error() -> None:
    qrels = str(SAMPLE / "graded.qrels")
    run = str(SAMPLE / "runs" / "bm25.trec")
    out, err = _ok(["eval", qrels, run, "-m", "nDCG@10", "--format", "csv"])
    assert "grade=" not in out
    assert "nDCG@10 = nDCG(grade=native,gain=linear)@10" in err
