"""``pyterrier.Experiment`` scores systems with the RDQ family of scoring.integrations.ir_measures.

PyTerrier evaluates through ir_measures, so the measures defined there are
accepted as they are. Systems given as result DataFrames or as transformers
that return them need no Terrier index, hence no Java and no Terrier jars.
"""

from __future__ import annotations

import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest

from scoring import ORL, evaluate_run
from scoring.integrations.ir_measures import CMP, RDQ_m2_a1, SpearmanRho

MEASURES = [(RDQ_m2_a1 @ 10, "RDQm2-a1@10"), (CMP @ 5, "CMP@5"), (SpearmanRho, "SpearmanRho")]


def _data(seed: int) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, pd.DataFrame]]:
    """Topics, graded qrels and two systems' results, in PyTerrier's column names."""
    rng = np.random.default_rng(seed)
    qrels, results = [], {"A": [], "B": []}
    for q in range(12):
        docs = [f"d{j}" for j in rng.choice(40, size=20, replace=False)]
        grades = rng.integers(0, 4, size=10)
        grades[0] = 3
        qrels += [(f"q{q}", d, int(g)) for d, g in zip(docs[:10], grades, strict=True)]
        for system, rows in results.items():
            if system == "B":
                ranked = list(rng.permutation(docs)[:15])
            elif q % 3 == 0:  # exactly the ORL's items: Spearman's rho is defined
                ranked = [d for d, g in zip(docs, grades, strict=False) if g > 0]
            else:
                ranked = docs[: 6 + q % 5]
            scores = np.sort(rng.random(len(ranked)))[::-1] * 10
            rows += [(f"q{q}", d, float(s)) for d, s in zip(ranked, scores, strict=True)]
    topics = pd.DataFrame({"qid": [f"q{q}" for q in range(12)], "query": "text"})
    qrels_frame = pd.DataFrame(qrels, columns=["qid", "docno", "label"])
    frames = {
        name: pd.DataFrame(rows, columns=["qid", "docno", "score"]).assign(
            rank=lambda f: f.groupby("qid").cumcount()
        )
        for name, rows in results.items()
    }
    return topics, qrels_frame, frames


def _expected(qrels: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    orls = {
        q: ORL.from_grades(dict(zip(g["docno"], g["label"].astype(float), strict=True)))
        for q, g in qrels.groupby("qid")
    }
    run = frame.rename(columns={"qid": "query", "docno": "item"})[["query", "item", "score"]]
    return evaluate_run(orls, run, [label for _, label in MEASURES]).to_frame()


@pytest.mark.parametrize("seed", [0, 1])
def test_experiment_accepts_rdq_and_equals_scoring_evaluate(seed: int) -> None:
    topics, qrels, frames = _data(seed)
    systems = [frames["A"], pt.Transformer.from_df(frames["B"])]  # a DataFrame, a transformer
    measures = [m for m, _ in MEASURES] + [ir_measures.nDCG @ 10]
    means = pt.Experiment(systems, topics, qrels, measures, names=["A", "B"]).set_index("name")
    per_query = pt.Experiment(systems, topics, qrels, measures, names=["A", "B"], perquery=True)
    for name, frame in frames.items():
        expected = _expected(qrels, frame)
        rows = per_query[per_query["name"] == name]
        got = dict(zip(zip(rows["qid"], rows["measure"], strict=True), rows["value"], strict=True))
        for measure, label in MEASURES:
            want = expected[label]
            values = [got[(query, str(measure))] for query in want.index]
            assert np.allclose(values, want, atol=1e-12, equal_nan=True), (name, label)
            if want.notna().all():
                assert means.loc[name, str(measure)] == pytest.approx(want.mean(), abs=1e-12)
            else:
                # Experiment averages the per-query values itself (a plain mean, not the
                # measure's NaN-skipping aggregator): one undefined query makes the mean NaN.
                assert np.isnan(means.loc[name, str(measure)])
    assert means.loc["A", "RDQ_m2_a1@10"] != means.loc["B", "RDQ_m2_a1@10"]
    assert per_query.loc[per_query["measure"] == "SpearmanRho", "value"].notna().any()
    assert not pt.java.started()  # no Terrier index, so no Java and no Terrier jars
