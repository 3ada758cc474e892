"""scoring.integrations.ir_measures: RDQ, CMP, Kendall tau, Spearman rho inside ir_measures."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest

from scoring import ORL, ScoringError, evaluate_run
from scoring.integrations.ir_measures import (
    CMP,
    MEASURES,
    KendallTau,
    RDQ_m1,
    RDQ_m2_a1,
    RDQ_m2_a4,
    SpearmanRho,
    qrels_as_orls,
)

PAIRS = [
    (RDQ_m1 @ 5, "RDQm1@5"),
    (RDQ_m2_a1 @ 10, "RDQm2-a1@10"),
    (RDQ_m2_a4 @ 3, "RDQm2-a4@3"),
    (CMP @ 10, "CMP@10"),
    (KendallTau, "KendallTau"),
    (SpearmanRho @ 20, "SpearmanRho@20"),
]


def _random_data(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Graded qrels (a positive grade in every query) and a run with float32-only ties.

    Every third query's run holds exactly its ORL items, so that Kendall tau
    and Spearman rho are defined there (elsewhere they are NaN).
    """
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(25):
        docs = [f"d{j}" for j in rng.choice(60, size=30, replace=False)]
        grades = rng.integers(0, 4, size=12)
        grades[:2] = [2, 1]
        qrels += [(f"q{q}", d, int(g)) for d, g in zip(docs[:12], grades, strict=True)]
        if q % 7 == 3:
            continue  # a query missing from the run: scores 0 (Kendall/Spearman NaN)
        ranked = (
            [d for d, g in zip(docs[:12], grades, strict=True) if g > 0] if q % 3 == 0 else docs[5:]
        )
        scores = np.round(rng.random(len(ranked)) * 5, 1) + 100.0
        scores[::5] += 1e-9  # equal in float32 only
        run += [(f"q{q}", d, float(s)) for d, s in zip(ranked, scores, strict=True)]
    return (
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
        pd.DataFrame(run, columns=["query_id", "doc_id", "score"]),
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equal_to_scoring_evaluate_on_random_data(seed: int) -> None:
    qrels, run = _random_data(seed)
    orls = {
        q: ORL.from_grades(dict(zip(g["doc_id"], g["relevance"].astype(float), strict=True)))
        for q, g in qrels.groupby("query_id")
    }
    frame = run.rename(columns={"query_id": "query", "doc_id": "item"})
    expected = evaluate_run(orls, frame, [name for _, name in PAIRS]).to_frame()
    measures = [m for m, _ in PAIRS]
    per_query = {
        (m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, qrels, run)
    }
    aggregate = ir_measures.calc_aggregate(measures, qrels, run)
    for measure, name in PAIRS:
        for query in expected.index:
            want = expected.loc[query, name]
            got = per_query[(query, str(measure))]
            if np.isnan(want):
                assert np.isnan(got), (query, name)
            else:
                assert got == pytest.approx(want, abs=1e-12), (query, name)
        assert aggregate[measure] == pytest.approx(np.nanmean(expected[name]), abs=1e-12)
    assert expected["KendallTau"].isna().any()  # the NaN convention was exercised
    assert expected["KendallTau"].notna().sum() >= 3


def test_calc_aggregate_example_and_names() -> None:
    qrels = [ir_measures.Qrel("q1", "d1", 2), ir_measures.Qrel("q1", "d2", 1)]
    run = [ir_measures.ScoredDoc("q1", "d1", 2.0), ir_measures.ScoredDoc("q1", "d2", 1.0)]
    result = ir_measures.calc_aggregate([RDQ_m2_a1 @ 10, ir_measures.nDCG @ 10], qrels, run)
    assert result[RDQ_m2_a1 @ 10] == pytest.approx(1.0)
    assert str(RDQ_m2_a1 @ 10) == "RDQ_m2_a1@10"
    assert set(MEASURES) == {"RDQ_m1", "RDQ_m2_a1", "RDQ_m2_a4", "CMP", "KendallTau", "SpearmanRho"}


def test_rdq_without_cutoff_is_an_error() -> None:
    qrels = [ir_measures.Qrel("q1", "d1", 1)]
    run = [ir_measures.ScoredDoc("q1", "d1", 1.0)]
    with pytest.raises(ScoringError, match="needs a cutoff"):
        ir_measures.calc_aggregate([RDQ_m2_a1], qrels, run)


def test_qrels_read_by_the_graded_route() -> None:
    qrels = pd.DataFrame(
        {
            "query_id": ["q", "q", "q", "q", "z"],
            "doc_id": ["a", "b", "c", "d", "a"],
            "relevance": [3, 1, 0, -1, 0],
        }
    )
    orls = qrels_as_orls(qrels)
    # c (grade 0) is judged not relevant; d (-1, pooled but not judged) is no judgment.
    assert orls == {"q": ORL.from_grades({"a": 3, "b": 1, "c": 0})}
    assert orls["q"].nonrelevant == {"c"}
    with pytest.raises(ScoringError, match="twice"):
        qrels_as_orls(pd.concat([qrels, qrels.iloc[:1]]))


def test_scoring_does_not_import_ir_measures() -> None:
    code = "import sys, scoring, scoring.statistics; print('ir_measures' in sys.modules)"
    root = Path(__file__).parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert out.stdout.strip() == "False"


def test_readme_block_runs_and_is_five_lines() -> None:
    page = (Path(__file__).parents[2] / "docs" / "integrations.md").read_text()
    section = page.split("# RDQ in ir_measures and PyTerrier", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    lines = [line for line in code.splitlines() if line.strip()]
    assert len(lines) == 5
    namespace: dict[str, object] = {}
    last = lines[-1]
    exec(compile(code, "docs/integrations.md", "exec"), namespace)
    result = eval(last, namespace)
    assert result[RDQ_m2_a1 @ 10] < 1.0  # the run inverts the two tiers
    assert result[KendallTau] == pytest.approx(-1.0)


def test_measures_are_nameable_as_strings() -> None:
    """``parse_measure`` and the top-level functions take the names as ir_measures' own."""
    assert ir_measures.parse_measure("RDQ_m2_a1@10") == RDQ_m2_a1 @ 10
    assert ir_measures.parse_measure("RDQ_m1@5") == RDQ_m1 @ 5
    assert ir_measures.parse_measure("KendallTau") == KendallTau
    qrels, run = _random_data(3)
    by_name = ir_measures.calc_aggregate(["RDQ_m1@10", "nDCG@10", "CMP@5"], qrels, run)
    objects = [RDQ_m1 @ 10, ir_measures.nDCG @ 10, CMP @ 5]
    by_object = ir_measures.calc_aggregate(objects, qrels, run)
    assert {str(m): v for m, v in by_name.items()} == {str(m): v for m, v in by_object.items()}
    frame = run.rename(columns={"query_id": "query", "doc_id": "item"})
    ours = evaluate_run(qrels_as_orls(qrels), frame, ["RDQm1@10", "nDCG@10"]).per_query.mean()
    assert by_name[RDQ_m1 @ 10] == pytest.approx(ours["RDQm1@10"], abs=1e-12)
    assert by_name[ir_measures.nDCG @ 10] == pytest.approx(ours["nDCG@10"], abs=1e-12)
    assert len(list(ir_measures.iter_calc(["RDQ_m2_a1@10"], qrels, run))) == 25


def test_the_command_line_knows_rdq(tmp_path: Path) -> None:
    """``python -m scoring.integrations.ir_measures`` is ir_measures' CLI with RDQ known."""
    qrels, run = _random_data(4)
    qrels_file, run_file = tmp_path / "qrels", tmp_path / "run"
    qrels_columns = ["query_id", "it", "doc_id", "relevance"]
    qrels.assign(it=0)[qrels_columns].to_csv(qrels_file, sep=" ", header=False, index=False)
    run_columns = ["query_id", "q0", "doc_id", "rank", "score", "tag"]
    run.assign(q0="Q0", rank=0, tag="t")[run_columns].to_csv(
        run_file, sep=" ", header=False, index=False
    )
    command = [sys.executable, "-m", "scoring.integrations.ir_measures"]
    arguments = [str(qrels_file), str(run_file), "RDQ_m2_a1@10", "nDCG@10"]
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [*command, *arguments], capture_output=True, text=True, check=True, cwd=root
    )
    got = dict(line.split("\t") for line in done.stdout.splitlines())
    expected = ir_measures.calc_aggregate([RDQ_m2_a1 @ 10, ir_measures.nDCG @ 10], qrels, run)
    assert got == {str(m): f"{v:.4f}" for m, v in expected.items()}
