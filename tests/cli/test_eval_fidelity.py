"""``orlbuild eval`` as trec_eval users expect it (issue 36): the bare nDCG@k is ndcg_cut,
``-l N`` is trec_eval's ``-l N``, counts are summed, systems sorted by their mean."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orlbuild.cli.main import app

pytrec_eval = pytest.importorskip("pytrec_eval")

runner = CliRunner()
SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
QRELS, RUN = SAMPLE / "graded.qrels", SAMPLE / "run.trec"
RUNS = [SAMPLE / "runs" / f"{name}.trec" for name in ("bm25", "dense", "hybrid")]


def _json(*args: str) -> dict:
    result = runner.invoke(app, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _trec_eval(measures: set[str], level: int) -> dict[str, dict[str, float]]:
    qrels: dict[str, dict[str, int]] = collections.defaultdict(dict)
    run: dict[str, dict[str, float]] = collections.defaultdict(dict)
    for line in QRELS.read_text().splitlines():
        q, _, d, g = line.split()
        qrels[q][d] = int(g)
    for line in RUN.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        if q in qrels:
            run[q][d] = float(s)
    return pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level).evaluate(run)


@pytest.mark.parametrize("level", [1, 2, 3])
def test_rel_level_is_trec_evals_l(level: int) -> None:
    doc = _json("eval", str(QRELS), str(RUN), "-l", str(level), "-m", "AP", "-m", "RR",
                "-m", "P@5", "-m", "NumRelRet", "-m", "nDCG@10")  # fmt: skip
    theirs = _trec_eval({"map", "recip_rank", "P.5", "num_rel_ret", "ndcg_cut.10"}, level)
    mean = doc["mean"]
    assert set(mean) == {f"AP(rel={level})", f"RR(rel={level})", f"P(rel={level})@5",
                         f"NumRelRet(rel={level})", "nDCG@10"}  # fmt: skip
    n = len(theirs)
    assert mean[f"AP(rel={level})"] == pytest.approx(sum(v["map"] for v in theirs.values()) / n)
    assert mean[f"RR(rel={level})"] == pytest.approx(
        sum(v["recip_rank"] for v in theirs.values()) / n
    )
    assert mean[f"P(rel={level})@5"] == pytest.approx(sum(v["P_5"] for v in theirs.values()) / n)
    # a count: summed in the all row, as trec_eval prints it
    assert mean[f"NumRelRet(rel={level})"] == sum(v["num_rel_ret"] for v in theirs.values())
    # -l leaves graded measures alone: nDCG@10 is ndcg_cut.10 on the native grades
    native = _trec_eval({"ndcg_cut.10"}, 1)
    assert mean["nDCG@10"] == pytest.approx(sum(v["ndcg_cut_10"] for v in native.values()) / n)


def test_every_output_states_the_grades_and_gain_of_nDCG() -> None:
    doc = _json("eval", str(QRELS), str(RUN), "-m", "nDCG@10", "-m", "nDCG(grade=bi,gain=exp)@10")
    note = doc["conventions"]["ndcg"]
    assert "nDCG@10 = nDCG(grade=native,gain=linear)@10" in note
    assert "nDCG(grade=bi,gain=exp)@10 = nDCG(grade=bi,gain=exp)@10" in note
    table = runner.invoke(app, ["eval", str(QRELS), str(RUN), "-m", "nDCG@10"])
    assert "nDCG@10 = nDCG(grade=native,gain=linear)@10" in table.stdout


def test_eval_sorts_systems_by_the_first_measure_unless_sort_name() -> None:
    args = ["eval", str(SAMPLE / "orl.qrels"), *map(str, RUNS), "-m", "AP", "-m", "nDCG@10"]
    by_mean = _json(*args)["systems"]
    means = [entry["mean"]["AP"] for entry in by_mean.values()]
    assert means == sorted(means, reverse=True)
    assert list(by_mean) != ["bm25", "dense", "hybrid"]  # the data would not test the sort
    assert list(_json(*args, "--sort", "name")["systems"]) == ["bm25", "dense", "hybrid"]


def test_a_bad_level_is_a_one_line_error() -> None:
    result = runner.invoke(app, ["eval", str(QRELS), str(RUN), "-m", "AP", "-l", "0"])
    assert result.exit_code == 2
    assert "--rel-level" in result.output and "Traceback" not in result.output
