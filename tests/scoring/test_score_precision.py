"""Score precision: float32 ordering by default (trec_eval <= 9.0.8), float64 on request."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

from scoring import ORL, ScoringError, evaluate_run
from scoring.run import comparable_scores, flat_run_from_frame

# Equal in float32, not in float64 (TREC DL 2021, run Fast_ForwardP_2, query 1006728).
HIGH, LOW = 67.62227973937988, 67.62227935791016
QRELS = {"q1": {"a1": 1}}
# In float64 the relevant a1 is first; in float32 a1 and b1 tie and the id
# descending rule puts b1 first, so AP and RR halve.
RUN = {"q1": {"a1": HIGH, "b1": LOW, "c1": 1.0}}
MEASURES = {"AP": "map", "RR": "recip_rank", "nDCG(gain=linear)@10": "ndcg_cut_10"}


def test_the_pair_is_a_float32_tie_only() -> None:
    assert HIGH != LOW
    assert np.float32(HIGH) == np.float32(LOW)
    same = comparable_scores(np.array([HIGH, LOW]), "float32")
    assert same[0] == same[1]
    kept = comparable_scores(np.array([HIGH, LOW]), "float64")
    assert kept[0] > kept[1]


def test_float32_default_matches_pytrec_eval() -> None:
    expected = pytrec_eval.RelevanceEvaluator(QRELS, set(MEASURES.values())).evaluate(RUN)["q1"]
    orls = {"q1": ORL.from_grades(QRELS["q1"])}
    for run in (RUN, _frame(RUN)):
        got = evaluate_run(orls, run, list(MEASURES)).to_frame()
        for ours, theirs in MEASURES.items():
            assert got.loc["q1", ours] == pytest.approx(expected[theirs], abs=1e-12)
    assert expected["map"] == pytest.approx(0.5)  # the float32 tie changed the value


def test_float64_keeps_the_full_order() -> None:
    orls = {"q1": ORL.from_grades(QRELS["q1"])}
    for run in (RUN, _frame(RUN)):
        got = evaluate_run(orls, run, ["AP", "RR"], score_precision="float64").to_frame()
        assert got.loc["q1", "AP"] == 1.0
        assert got.loc["q1", "RR"] == 1.0
        assert got.attrs["conventions"]["score_precision"].startswith("float64")
    default = evaluate_run(orls, RUN, ["AP"]).to_frame()
    assert default.attrs["conventions"]["score_precision"].startswith("float32")


def test_order_cases() -> None:
    """Ties by id descending in float32; distinct float32 values keep their order."""
    frame = pd.DataFrame(
        {
            "query": ["q"] * 4,
            "item": ["a", "b", "c", "d"],
            # a/b tie in float32 only; c is above them in both; d is below by a float32 ulp.
            "score": [HIGH, LOW, 100.0, float(np.nextafter(np.float32(LOW), np.float32(0)))],
        }
    )
    f32 = flat_run_from_frame(frame).to_dict()["q"]
    f64 = flat_run_from_frame(frame, score_precision="float64").to_dict()["q"]
    assert f32 == ["c", "b", "a", "d"]
    assert f64 == ["c", "a", "b", "d"]


def test_random_runs_match_pytrec_eval_in_float32() -> None:
    """Scores drawn so that many pairs collide in float32 but not in float64."""
    rng = np.random.default_rng(7)
    qrels, run = {}, {}
    for q in range(30):
        docs = [f"d{j}" for j in range(40)]
        base = rng.integers(0, 5, size=40).astype(float) + 1000.0
        scores = base + rng.integers(0, 4, size=40) * 1e-9  # below float32 resolution at 1000
        run[f"q{q}"] = dict(zip(docs, scores.tolist(), strict=True))
        judged = rng.choice(40, size=8, replace=False)
        qrels[f"q{q}"] = {docs[j]: int(rng.integers(1, 4)) for j in judged}
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut_10"}).evaluate(run)
    orls = {q: ORL.from_grades(g) for q, g in qrels.items()}
    got = evaluate_run(orls, run, ["AP", "nDCG(grade=native,gain=linear)@10"]).to_frame()
    f64 = evaluate_run(orls, run, ["AP"], score_precision="float64").to_frame()
    for q in qrels:
        assert got.loc[q, "AP"] == pytest.approx(expected[q]["map"], abs=1e-12)
        assert got.loc[q, "nDCG(grade=native,gain=linear)@10"] == pytest.approx(
            expected[q]["ndcg_cut_10"], abs=1e-12
        )
    assert not np.allclose(f64["AP"], got["AP"])  # the precision mattered on this data


def test_bad_precision_is_an_error() -> None:
    with pytest.raises(ScoringError, match="float32"):
        evaluate_run({"q1": {"a1": 1}}, RUN, ["AP"], score_precision="float16").to_frame()  # type: ignore[arg-type]


def _frame(run: dict[str, dict[str, float]]) -> pd.DataFrame:
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    return pd.DataFrame(rows, columns=["query", "item", "score"])
