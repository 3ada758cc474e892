"""Overrides (merge / split) and the quality report."""

from __future__ import annotations

import copy

import pandas as pd
import pytest

from orlbuild.builders import (
    BuildParameters,
    build_orls,
    build_quality,
    merge_adjacent_tiers,
    raw_preferences,
    split_tier_at,
)
from orlbuild.errors import ConfigError

PAIRS = pd.DataFrame(
    [("q", "good", w, lo, 0) for w, lo in [("a", "b"), ("b", "c"), ("a", "c")] * 8]
    + [("q", "careless", w, lo, 0) for w, lo in [("c", "a"), ("b", "a"), ("c", "b")] * 2]
    + [("q", "good", "c", "d", 0)] * 8
    + [("q", "good", "x", "y", 0), ("q", "good", "y", "z", 0), ("q", "good", "z", "x", 0)],
    columns=["query", "annotator", "winner", "loser", "tie"],
)


def built_orl() -> object:
    frame = PAIRS[~PAIRS["winner"].isin(["x", "y", "z"])]
    return build_orls(frame, BuildParameters(source="pairwise", sig=0.0))[1].orls["q"]


def test_merge_and_split_make_new_orls_and_leave_the_original_untouched() -> None:
    orl = built_orl()
    before = copy.deepcopy(orl)
    assert orl.tiers == [["a"], ["b"], ["c"], ["d"]]  # type: ignore[attr-defined]
    merged = merge_adjacent_tiers(orl, 2)  # type: ignore[arg-type]
    assert merged.tiers == [["a"], ["b", "c"], ["d"]]
    assert merged.decisions[-1].rule == "override: merge tiers 2 and 3"
    split = split_tier_at(merged, "c")
    assert split.tiers == [["a"], ["b"], ["c"], ["d"]]
    assert split.decisions[-1].decision == "separated"
    assert orl == before


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (lambda o: merge_adjacent_tiers(o, 4), "must be between 1 and 3"),
        (lambda o: split_tier_at(o, "a"), "first item of tier 1"),
        (lambda o: split_tier_at(o, "nope"), "no such item"),
    ],
)
def test_impossible_overrides_are_config_errors(action: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        action(built_orl())  # type: ignore[operator]


def test_quality_counts_agreement_per_annotator_and_cycles() -> None:
    report = build_quality(
        raw_preferences(PAIRS, "pairwise"),
        {"q": {"a": 1, "b": 2, "c": 3, "d": 4, "x": 5, "y": 5, "z": 5}},
        min_comparisons=5,
    )
    items = report.items.set_index("item")
    assert items.loc["a", "comparisons"] == 16 + 4
    assert bool(items.loc["x", "flagged"]) and not bool(items.loc["a", "flagged"])
    pairs = report.pairs.set_index(["item_a", "item_b"])["comparisons"]
    assert pairs[("a", "b")] == 8 + 2
    per = report.annotators.set_index("annotator")
    assert per.loc["careless", "agreement_all"] == 0.0
    assert per.loc["good", "contradicted"] == 0 and per.loc["good", "tied"] == 3
    assert per.loc["good", "agreement_all"] == 32 / 35
    assert per.loc["good", "agreement_ordered"] == 1.0  # x, y, z share a tier: not ordered
    assert per.loc["careless", "agreement_ordered"] == 0.0
    assert report.agreement == pytest.approx(32 / 41)
    counts = ["preferences", "consistent", "contradicted", "tied", "shared"]
    assert all(per[c].dtype.kind == "i" for c in counts)  # issue 40: counts are integers
    assert report.cycles.to_dict("records") == [{"query": "q", "length": 3, "cycle": "x > y > z"}]


def test_raw_preferences_of_lists_and_grades() -> None:
    lists = pd.DataFrame(
        {"query": "q", "annotator": "a", "item": ["x", "y", "z"], "rank": [1, 1, 2]}
    )
    prefs = raw_preferences(lists, "listwise")
    assert sorted(zip(prefs["winner"], prefs["loser"], strict=True)) == [("x", "z"), ("y", "z")]
    grades = lists.rename(columns={"rank": "grade"}).assign(grade=[0, 2, 1])
    prefs = raw_preferences(grades, "graded")
    assert sorted(zip(prefs["winner"], prefs["loser"], strict=True)) == [
        ("y", "x"),
        ("y", "z"),
        ("z", "x"),
    ]


def test_cycles_are_the_shortest_ones() -> None:
    from orlbuild.builders.comparison_graph import majority_preference_cycles
    from orlbuild.builders.pairwise_data import comparisons_from_pairwise

    # a > b > c > d > a is the only cycle; adding a > c leaves the 3-cycle a > c > d > a
    square = pd.DataFrame(
        [("q", "x", w, lo, 0) for w, lo in [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]],
        columns=PAIRS.columns,
    )
    assert majority_preference_cycles(comparisons_from_pairwise(square)) == [["a", "b", "c", "d"]]
    chord = pd.concat([square, pd.DataFrame([("q", "x", "a", "c", 0)], columns=PAIRS.columns)])
    assert majority_preference_cycles(comparisons_from_pairwise(chord)) == [["a", "c", "d"]]


def test_quality_ignores_preferences_on_items_outside_the_orl() -> None:
    grades = pd.DataFrame(
        {"query": "q", "annotator": ["a", "a", "a", "b", "b"], "item": ["x", "y", "z", "x", "y"],
         "grade": [2, 1, 0, 1, 2]}
    )  # fmt: skip
    report = build_quality(raw_preferences(grades, "graded"), {"q": {"x": 1, "y": 2}})
    per = report.annotators.set_index("annotator")
    assert per.loc["a", "preferences"] == 1 and per.loc["a", "consistent"] == 1  # z left out
    assert per.loc["b", "contradicted"] == 1
    assert report.agreement == 0.5
