"""Same name, same number on TREC DL 2021 (issue 36): ``orlbuild eval`` on the official
passage qrels gives trec_eval's ``ndcg_cut.10`` and, at ``-l 2`` (TREC DL's official
passage MAP and MRR), its ``map`` and ``recip_rank``, and ir_measures' ``nDCG@10`` and
``RR(rel=2)@10``, for every query of 63 seeded runs (tests/data/dl21/SOURCE.md)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from orlbuild.cli.main import app

pytrec_eval = pytest.importorskip("pytrec_eval")
ir_measures = pytest.importorskip("ir_measures")

QRELS = Path(__file__).parents[1] / "data" / "dl21" / "qrels.dl21-passage.txt.gz"
RUNS = 63
DEPTH = 100
#: trec_eval prints 4 decimals; float32 rounding of the scores is the same on both sides.
PLACES = 1e-9


def _qrels() -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with gzip.open(QRELS, "rt") as lines:
        for line in lines:
            query, _, doc, grade = line.split()
            qrels.setdefault(query, {})[doc] = int(grade)
    return qrels


def _runs(qrels: dict[str, dict[str, int]], folder: Path) -> dict[str, dict[str, dict[str, float]]]:
    """63 runs of depth 100: judged passages ranked by grade x skill + noise, with unjudged
    ones mixed in; scores are float32, and a third of the runs round them to 1 decimal so
    that many documents tie on score (trec_eval breaks ties by docno, descending)."""
    rng = np.random.default_rng(2021)
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for r in range(RUNS):
        skill, rounded = rng.uniform(0.0, 2.0), r % 3 == 0
        name = f"run{r:02d}"
        run: dict[str, dict[str, float]] = {}
        lines = []
        for query, judged in qrels.items():
            docs = [*judged, *(f"msmarco_passage_99_{query}_{k}" for k in range(30))]
            grades = np.array([judged.get(d, 0) for d in docs], dtype=float)
            scores = (skill * grades + rng.normal(0.0, 1.5, len(docs))).astype(np.float32)
            if rounded:
                scores = np.round(scores, 1).astype(np.float32)
            top = np.lexsort((np.array(docs), -scores))[:DEPTH]  # by score, then docno
            run[query] = {docs[i]: float(scores[i]) for i in top}
            lines += [
                f"{query} Q0 {docs[i]} {rank} {np.format_float_positional(scores[i])} {name}\n"
                for rank, i in enumerate(top, start=1)
            ]
        rng.shuffle(lines)  # file order is not rank order: both sides order by score
        (folder / f"{name}.trec").write_text("".join(lines))
        runs[name] = run
    return runs


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict, dict]:
    folder = tmp_path_factory.mktemp("dl21")
    qrels = _qrels()
    runs = _runs(qrels, folder)
    files = [str(folder / f"{name}.trec") for name in runs]
    args = ["eval", str(QRELS), *files, "--per-query", "--format", "json", "--sort", "name"]
    measures = ["-m", "nDCG@10", "-m", "AP", "-m", "RR", "-m", "RR@10"]
    result = CliRunner().invoke(app, [*args, *measures, "--rel-level", "2"])
    assert result.exit_code == 0, result.stdout + result.stderr
    at_two = json.loads(result.stdout)["systems"]
    result = CliRunner().invoke(app, [*args, "-m", "nDCG@10"])
    assert result.exit_code == 0, result.stdout + result.stderr
    plain = json.loads(result.stdout)["systems"]
    return qrels, runs, {"at_two": at_two, "plain": plain}


def test_63_runs_are_scored(scored: tuple[dict, dict, dict]) -> None:
    qrels, runs, ours = scored
    assert len(qrels) == 53 and sum(len(j) for j in qrels.values()) == 10_828
    assert set(ours["plain"]) == set(runs) and len(runs) == RUNS


def test_ndcg_at_10_is_trec_evals_ndcg_cut_10(scored: tuple[dict, dict, dict]) -> None:
    qrels, runs, ours = scored
    worst = 0.0
    for name, run in runs.items():
        theirs = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
        for query, values in theirs.items():
            mine = ours["plain"][name]["per_query"][query]["nDCG@10"]
            worst = max(worst, abs(mine - values["ndcg_cut_10"]))
    assert worst <= PLACES


def test_map_and_mrr_at_level_2_are_trec_evals(scored: tuple[dict, dict, dict]) -> None:
    qrels, runs, ours = scored
    for name, run in runs.items():
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "recip_rank"}, relevance_level=2)
        theirs = evaluator.evaluate(run)
        mine = ours["at_two"][name]["per_query"]
        top10 = {q: dict(_trec_eval_order(docs)[:10]) for q, docs in run.items()}
        at_10 = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=2)
        theirs_10 = at_10.evaluate(top10)
        for query, values in theirs.items():
            assert mine[query]["AP(rel=2)"] == pytest.approx(values["map"], abs=PLACES)
            assert mine[query]["RR(rel=2)"] == pytest.approx(values["recip_rank"], abs=PLACES)
            rr_10 = theirs_10[query]["recip_rank"]
            assert mine[query]["RR(rel=2)@10"] == pytest.approx(rr_10, abs=PLACES)
        # the nDCG of a graded measure is the same at any level
        assert ours["at_two"][name]["mean"]["nDCG@10"] == ours["plain"][name]["mean"]["nDCG@10"]


def _trec_eval_order(docs: dict[str, float]) -> list[tuple[str, float]]:
    """trec_eval's ranking: by float32 score, descending, then by docno, descending."""
    by_docno = sorted(docs.items(), reverse=True)
    return sorted(by_docno, key=lambda item: -np.float32(item[1]))


def test_ir_measures_gives_the_same_means(scored: tuple[dict, dict, dict]) -> None:
    """nDCG@10 and AP(rel=2) on all 63 runs. RR(rel=2)@10 on the runs without tied scores:
    ir_measures computes RR@k with the MS MARCO script, which orders tied documents by
    docno ascending, trec_eval's order descending (docs/evaluating-files.md)."""
    qrels, runs, ours = scored
    rr_10 = ir_measures.RR(rel=2) @ 10
    measures = [ir_measures.nDCG @ 10, rr_10, ir_measures.AP(rel=2)]
    for name, run in runs.items():
        theirs = ir_measures.calc_aggregate(measures, qrels, run)
        mean = ours["at_two"][name]["mean"]
        assert round(mean["nDCG@10"], 4) == round(theirs[ir_measures.nDCG @ 10], 4)
        assert mean["nDCG@10"] == pytest.approx(theirs[ir_measures.nDCG @ 10], abs=PLACES)
        assert mean["AP(rel=2)"] == pytest.approx(theirs[ir_measures.AP(rel=2)], abs=PLACES)
        tied = any(len(set(d.values())) < len(d) for d in run.values())
        if not tied:
            assert mean["RR(rel=2)@10"] == pytest.approx(theirs[rr_10], abs=PLACES)
    assert (
        sum(not any(len(set(d.values())) < len(d) for d in r.values()) for r in runs.values()) == 42
    )
