"""evaluate_run(): input shapes, run ordering, missing queries, duplicates, conventions."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from scoring import ORL, ScoringError, UnknownMeasureError, evaluate_run, rankings_from_frame

ORLS = {"q1": ORL({"a": 1, "b": 2, "c": 2}), "q2": ORL({"x": 1}), "q3": ORL({"m": 1, "n": 1})}
RUN = {"q1": ["a", "c", "b"], "q2": ["y", "x"], "qX": ["zzz"]}


def test_one_row_per_orl_query_and_columns_named_as_passed() -> None:
    frame = evaluate_run(ORLS, RUN, ["P@2", "RDQ(penalty=m1)@3"]).to_frame()
    assert list(frame.index) == ["q1", "q2", "q3"]
    assert frame.index.name == "query"
    assert list(frame.columns) == ["P@2", "RDQ(penalty=m1)@3"]
    assert frame.loc["q1", "RDQ(penalty=m1)@3"] == 1.0
    assert frame.loc["q2", "P@2"] == 0.5
    assert frame.attrs["queries_without_orl"] == 1
    assert frame.attrs["missing_queries"] == ["q3"]
    assert frame.attrs["conventions"]["missing"].startswith("zero")


def test_missing_queries_score_zero_or_are_skipped() -> None:
    zero = evaluate_run(ORLS, RUN, ["nDCG@3", "AP", "KendallTau@3"]).to_frame()
    assert zero.loc["q3", "nDCG@3"] == 0.0 and zero.loc["q3", "AP"] == 0.0
    assert math.isnan(zero.loc["q3", "KendallTau@3"])
    skip = evaluate_run(ORLS, RUN, ["nDCG@3"], missing="skip").to_frame()
    assert list(skip.index) == ["q1", "q2"]
    assert skip.attrs["conventions"]["missing"].startswith("skip")
    with pytest.raises(ScoringError, match="missing must be"):
        evaluate_run(ORLS, RUN, ["nDCG@3"], missing="drop").to_frame()  # type: ignore[arg-type]


def test_empty_candidate_present_in_run_is_not_missing() -> None:
    frame = evaluate_run({"q": ORL({"a": 1})}, {"q": []}, ["RR"], missing="skip").to_frame()
    assert frame.loc["q", "RR"] == 0.0


def test_plain_mappings_are_accepted_as_orls() -> None:
    frame = evaluate_run({"q": {"a": 1, "b": 2}}, {"q": ["b", "a"]}, ["RDQm1@2"]).to_frame()
    assert frame.loc["q", "RDQm1@2"] == pytest.approx(ORL_M1_SWAP)
    with pytest.raises(ScoringError, match="query 'q'"):
        evaluate_run({"q": {"a": 2}}, {"q": ["a"]}, ["RR"]).to_frame()


ORL_M1_SWAP = (0.5 * 1.0 + 1.0 * 0.9) / 1.9


def test_dataframe_run_orders_by_score_then_item_descending() -> None:
    frame = pd.DataFrame(
        {"query": ["q"] * 4, "item": ["a", "b", "c", "d"], "score": [1.0, 2.0, 2.0, 0.5]}
    )
    assert rankings_from_frame(frame) == {"q": ["c", "b", "a", "d"]}
    by_rank = pd.DataFrame({"query": ["q"] * 3, "item": ["a", "b", "c"], "rank": [3, 1, 2]})
    assert rankings_from_frame(by_rank) == {"q": ["b", "c", "a"]}


def test_dataframe_run_duplicates() -> None:
    frame = pd.DataFrame({"query": ["q"] * 3, "item": ["a", "a", "b"], "score": [1.0, 3.0, 2.0]})
    with pytest.raises(ScoringError, match="'a' appears twice for query 'q'"):
        evaluate_run({"q": ORL({"a": 1})}, frame, ["RR"]).to_frame()
    result = evaluate_run({"q": ORL({"b": 1})}, frame, ["RR"], duplicates="keep-first").to_frame()
    assert result.loc["q", "RR"] == 0.5  # a (3.0) first, then b


def test_dataframe_run_rejects_bad_scores_and_columns() -> None:
    with pytest.raises(ScoringError, match="non-finite"):
        evaluate_run(
            ORLS, pd.DataFrame({"query": ["q1"], "item": ["a"], "score": [float("nan")]}), ["RR"]
        ).to_frame()
    with pytest.raises(ScoringError, match="missing"):
        evaluate_run(ORLS, pd.DataFrame({"query": ["q1"], "score": [1.0]}), ["RR"]).to_frame()


def test_dataframe_and_mapping_runs_agree() -> None:
    rows = [(q, item, float(-i)) for q, items in RUN.items() for i, item in enumerate(items)]
    frame = pd.DataFrame(rows, columns=["query", "item", "score"])
    names = ["RDQm2-a1@3", "nDCG@3", "CMP@3", "RBP@3"]
    pd.testing.assert_frame_equal(
        evaluate_run(ORLS, frame, names).to_frame(), evaluate_run(ORLS, RUN, names).to_frame()
    )


def test_bad_measures_are_reported_before_any_work() -> None:
    with pytest.raises(UnknownMeasureError):
        evaluate_run(ORLS, RUN, ["RR", "nope@3", "P"]).to_frame()
    with pytest.raises(ScoringError, match="listed twice"):
        evaluate_run(ORLS, RUN, ["RR", "RR"]).to_frame()


def test_native_grades_required_for_native_ndcg() -> None:
    with pytest.raises(ScoringError, match="graded labels"):
        evaluate_run(ORLS, RUN, ["nDCG(grade=native)@3"]).to_frame()
    graded = {"q": ORL.from_grades({"a": 3, "b": 1})}
    frame = evaluate_run(graded, {"q": ["b", "a"]}, ["nDCG(grade=native,gain=linear)@2"]).to_frame()
    ideal = 3 + 1 / math.log2(3)
    assert frame.iloc[0, 0] == pytest.approx((1 + 3 / math.log2(3)) / ideal)


def test_empty_orl_set_gives_an_empty_frame() -> None:
    frame = evaluate_run({}, RUN, ["RR", "P@3"]).to_frame()
    assert frame.empty and list(frame.columns) == ["RR", "P@3"]


def test_scored_mapping_runs_are_ordered_like_trec_eval() -> None:
    """{query: {item: score}} (pytrec_eval's shape) is ordered by score, ties by id descending."""
    orls = {"q": ORL({"a": 1, "b": 2})}
    frame = evaluate_run(orls, {"q": {"b": 2.0, "a": 3.0, "x": 3.0}}, ["RR", "RDQm1@3"]).to_frame()
    lists = evaluate_run(orls, {"q": ["x", "a", "b"]}, ["RR", "RDQm1@3"]).to_frame()
    pd.testing.assert_frame_equal(frame, lists)
    assert frame.loc["q", "RR"] == 0.5
