"""trec_eval parity of R@k, Rprec, Bpref, Success@k, infAP, IPrec@r and the counts
(through pytrec_eval), and of ERR@k (gdeval) and Judged@k (through ir_measures).

Per query and for the aggregate, on generated data (graded qrels with judged
non-relevant items, runs with many tied scores and float32-only ties) and on
the repository's own TREC collection in ``sample_data/``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scoring import ORL, evaluate_run
from tests.trec_parity import assert_per_query_parity, generated_qrels_and_run

pytrec_eval = pytest.importorskip("pytrec_eval")
ir_measures = pytest.importorskip("ir_measures")

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
CUTOFFS = (1, 3, 5, 10, 20)
RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
#: Sums in trec_eval's "all" line; orlbuild reports their mean over queries.
COUNTS = {"NumRet", "NumRel", "NumRelRet"}

#: orlbuild name -> trec_eval name.
TREC_NAMES: dict[str, str] = {
    "Rprec": "Rprec",
    "Bpref": "bpref",
    "infAP": "infAP",
    "NumRet": "num_ret",
    "NumRel": "num_rel",
    "NumRelRet": "num_rel_ret",
}
for _k in CUTOFFS:
    TREC_NAMES[f"R@{_k}"] = f"recall_{_k}"
    TREC_NAMES[f"Success@{_k}"] = f"success_{_k}"
for _r in RECALL_LEVELS:
    TREC_NAMES[f"IPrec@{_r:g}"] = f"iprec_at_recall_{_r:.2f}"
TREC_MEASURES = {
    "Rprec",
    "bpref",
    "infAP",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "iprec_at_recall",
    "recall." + ",".join(map(str, CUTOFFS)),
    "success." + ",".join(map(str, CUTOFFS)),
}


def _generate(seed: int, n_queries: int = 60, float32_ties: bool = True) -> tuple[dict, dict]:
    """Graded qrels (0-4, zeros = judged non-relevant) and runs with tied scores.

    Runs hold judged, judged non-relevant and unjudged items; scores take few
    values (exact ties, broken by id descending) and, with ``float32_ties``,
    a jitter below float32 resolution (ties only in float32).
    """

    def scores(rng: np.random.Generator, n: int) -> np.ndarray:
        values = 1000.0 + rng.integers(0, 6, size=n).astype(float) / 2.0
        return values + rng.integers(0, 3, size=n) * 1e-9 if float32_ties else values

    qrels, run = generated_qrels_and_run(
        np.random.default_rng(seed),
        [str(q) for q in range(1, n_queries + 1)],  # numeric ids: gdeval needs them
        documents=400,
        largest_pool=80,
        grades=5,
        scores=scores,
    )
    run.pop("1")  # a query missing from the run
    return qrels, run


def _check_trec_parity(qrels: dict, run: dict) -> None:
    expected = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)
    orls = {q: ORL.from_grades(g) for q, g in qrels.items()}
    got = evaluate_run(orls, run, list(TREC_NAMES), missing="skip").to_frame()
    assert_per_query_parity(got, expected, TREC_NAMES, 1e-9)
    for ours, theirs in TREC_NAMES.items():
        aggregate = pytrec_eval.compute_aggregated_measure(
            theirs, [values[theirs] for values in expected.values()]
        )
        ours_aggregate = got[ours].sum() if ours in COUNTS else got[ours].mean()
        assert round(ours_aggregate, 4) == round(aggregate, 4), ours
        assert ours_aggregate == pytest.approx(aggregate, abs=1e-9), ours


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generated_data_matches_trec_eval(seed: int) -> None:
    _check_trec_parity(*_generate(seed))


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    frame = pd.read_csv(path, sep=r"\s+", header=None, names=["q", "it", "doc", "rel"], dtype=str)
    out: dict[str, dict[str, int]] = {}
    for q, doc, rel in zip(frame["q"], frame["doc"], frame["rel"], strict=True):
        out.setdefault(q, {})[doc] = int(rel)
    return out


def _run(path: Path) -> dict[str, dict[str, float]]:
    frame = pd.read_csv(
        path, sep=r"\s+", header=None, names=["q", "q0", "doc", "rank", "score", "tag"], dtype=str
    )
    out: dict[str, dict[str, float]] = {}
    for q, doc, score in zip(frame["q"], frame["doc"], frame["score"], strict=True):
        out.setdefault(q, {})[doc] = float(score)
    return out


@pytest.mark.parametrize("qrels_file", ["graded.qrels", "orl.qrels"])
@pytest.mark.parametrize("system", ["bm25", "dense", "hybrid", "tfidf"])
def test_sample_collection_matches_trec_eval(qrels_file: str, system: str) -> None:
    qrels = _qrels(SAMPLE / qrels_file)
    run = {q: docs for q, docs in _run(SAMPLE / "runs" / f"{system}.trec").items() if q in qrels}
    _check_trec_parity(qrels, run)


def _ir_measures_values(qrels: dict, run: dict, measures: list) -> dict[tuple[str, str], float]:
    return {
        (m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, qrels, run)
    }


@pytest.mark.parametrize("seed", [3, 4])
def test_err_matches_gdeval_through_ir_measures(seed: int) -> None:
    # gdeval compares scores in float64: no float32-only ties here.
    qrels, run = _generate(seed, float32_ties=False)
    names = [f"ERR@{k}" for k in CUTOFFS]
    expected = _ir_measures_values(qrels, run, [ir_measures.parse_measure(n) for n in names])
    orls = {q: ORL.from_grades(g) for q, g in qrels.items()}
    # ir_measures scores a missing query 0, as missing="zero"
    got = evaluate_run(orls, run, names).to_frame()
    assert {q for q, _ in expected} == set(got.index)
    for (query, name), value in expected.items():
        assert got.loc[query, name] == pytest.approx(value, abs=5e-6 + 1e-12), (query, name)
    for name in names:  # gdeval prints 5 decimals
        theirs = np.mean([v for (_, n), v in expected.items() if n == name])
        assert got[name].mean() == pytest.approx(theirs, abs=5e-6)


@pytest.mark.parametrize("seed", [5, 6])
def test_judged_matches_ir_measures(seed: int) -> None:
    qrels, run = _generate(seed, float32_ties=False)
    # ir_measures' Judged breaks score ties by id ascending (trec_eval: descending):
    # distinct scores keep the two orders equal.
    rng = np.random.default_rng(seed)
    run = {q: {d: float(rng.random()) for d in docs} for q, docs in run.items()}
    names = [*(f"Judged@{k}" for k in CUTOFFS), "Judged"]
    expected = _ir_measures_values(qrels, run, [ir_measures.parse_measure(n) for n in names])
    orls = {q: ORL.from_grades(g) for q, g in qrels.items()}
    got = evaluate_run(orls, run, names).to_frame()
    assert {q for q, _ in expected} == set(got.index)
    for (query, name), value in expected.items():
        assert got.loc[query, name] == pytest.approx(value, abs=1e-12), (query, name)
    aggregate = ir_measures.calc_aggregate(
        [ir_measures.parse_measure(n) for n in names], qrels, run
    )
    for measure, value in aggregate.items():
        assert got[str(measure)].mean() == pytest.approx(value, abs=1e-12)


def test_float32_ties_matter_for_the_new_measures() -> None:
    """The generated data exercises the float32 rule: float64 ordering changes values."""
    qrels, run = _generate(0)
    orls = {q: ORL.from_grades(g) for q, g in qrels.items()}
    names = ["Bpref", "infAP", "R@5", "IPrec@0.5"]
    f32 = evaluate_run(orls, run, names, missing="skip").to_frame()
    f64 = evaluate_run(orls, run, names, missing="skip", score_precision="float64").to_frame()
    assert not np.allclose(f32.to_numpy(), f64.to_numpy())
