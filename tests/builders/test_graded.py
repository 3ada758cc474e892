"""Graded route: exact tiers from grades, every --grade-agg, several annotators."""

from __future__ import annotations

import pandas as pd
import pytest

from orlbuild.builders import BuildParameters, QueryBuildError, build_orls
from orlbuild.builders.graded import aggregate_grades


def graded(rows: list[tuple[str, str, str, int]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["query", "annotator", "item", "grade"])


def build(frame: pd.DataFrame, **options: object) -> dict[str, dict[str, int]]:
    _, outcome = build_orls(frame, BuildParameters(source="graded", **options))  # type: ignore[arg-type]
    return {q: orl.ranks for q, orl in outcome.orls.items()}


def test_spec_examples_give_consecutive_ranks_by_decreasing_grade() -> None:
    frame = graded(
        [
            ("q1", "a", "d3", 3),
            ("q1", "a", "d1", 1),
            ("q1", "a", "d2", 2),
            ("q1", "a", "d0", 0),
            ("q2", "a", "x", 3),
            ("q2", "a", "y", 1),
            ("q2", "a", "z", 3),
        ]
    )
    ranks = build(frame)
    assert ranks["q1"] == {"d3": 1, "d2": 2, "d1": 3}  # grade 0 item dropped
    assert ranks["q2"] == {"x": 1, "z": 1, "y": 2}


def test_native_grades_and_decisions_are_kept() -> None:
    frame = graded([("q", "a", "x", 3), ("q", "a", "y", 3), ("q", "a", "z", 1)])
    _, outcome = build_orls(frame, BuildParameters(source="graded"))
    orl = outcome.orls["q"]
    assert orl.native_grades == {"x": 3.0, "y": 3.0, "z": 1.0}
    assert [(d.leader, d.item, d.decision, d.rule) for d in orl.decisions] == [
        ("x", "y", "tied", "same grade"),
        ("x", "z", "separated", "lower grade"),
    ]


# Four annotators: d1 = {1,2,2,3}, d2 = {1,2,3,3}, d3 = {0,0,1,3}, d4 = {0,0,0,2}
SEVERAL = graded(
    [("q", a, "d1", g) for a, g in zip("abcd", [1, 2, 2, 3], strict=True)]
    + [("q", a, "d2", g) for a, g in zip("abcd", [1, 2, 3, 3], strict=True)]
    + [("q", a, "d3", g) for a, g in zip("abcd", [0, 0, 1, 3], strict=True)]
    + [("q", a, "d4", g) for a, g in zip("abcd", [0, 0, 0, 2], strict=True)]
)


@pytest.mark.parametrize(
    ("how", "grades", "ranks"),
    [
        # medians 2, 2.5 -> 2 (half-way rounded down), 0.5 -> 0, 0 -> dropped
        ("median", {"d1": 2.0, "d2": 2.0, "d3": 0.0, "d4": 0.0}, {"d1": 1, "d2": 1}),
        (
            "mean",
            {"d1": 2.0, "d2": 2.25, "d3": 1.0, "d4": 0.5},
            {"d2": 1, "d1": 2, "d3": 3, "d4": 4},
        ),
        ("max", {"d1": 3.0, "d2": 3.0, "d3": 3.0, "d4": 2.0}, {"d1": 1, "d2": 1, "d3": 1, "d4": 2}),
        # majority: d2 {3 twice} -> 3; d1 {2 twice} -> 2; d3 {0 twice}; d4 {0 thrice}
        ("majority", {"d1": 2.0, "d2": 3.0, "d3": 0.0, "d4": 0.0}, {"d2": 1, "d1": 2}),
    ],
)
def test_every_grade_aggregate_with_several_annotators(
    how: str, grades: dict[str, float], ranks: dict[str, int]
) -> None:
    agg = aggregate_grades(SEVERAL, how).set_index("item")["grade"].to_dict()
    assert agg == grades
    assert build(SEVERAL, grade_agg=how)["q"] == ranks


def test_majority_resolves_equal_counts_to_the_lowest_grade() -> None:
    frame = graded([("q", "a", "d", 3), ("q", "b", "d", 1), ("q", "c", "e", 2)])
    assert aggregate_grades(frame, "majority").set_index("item")["grade"].to_dict() == {
        "d": 1.0,
        "e": 2.0,
    }


def test_query_without_positive_grades_fails_or_is_skipped() -> None:
    frame = graded([("q1", "a", "d", 0), ("q1", "a", "e", 0), ("q2", "a", "d", 1)])
    with pytest.raises(QueryBuildError, match="'q1': no positive grades"):
        build_orls(frame, BuildParameters(source="graded"))
    _, outcome = build_orls(frame, BuildParameters(source="graded"), on_error="skip")
    assert list(outcome.orls) == ["q2"]
    assert [(f.query, "no positive grades" in f.cause) for f in outcome.failures] == [("q1", True)]


def test_graded_orls_of_all_queries_equal_graded_orl_per_query() -> None:
    """Issue 39: the all-queries route gives each query the ORL graded_orl gives it."""
    import numpy as np

    from orlbuild.builders.graded import aggregate_grades, graded_orl, graded_orls

    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "query": [f"q{q}" for q in rng.integers(0, 40, 600)],
            "item": [f"d{i}" for i in rng.integers(0, 15, 600)],
            "grade": rng.choice([0, 0, 1, 2, 3, np.nan], 600),
        }
    )
    grades = aggregate_grades(frame.dropna(subset=["grade"]), "mean")
    together = dict(graded_orls(grades))
    assert list(together) == sorted(grades["query"].unique())
    for query, part in grades.groupby("query"):
        one = part.set_index("item")["grade"]
        try:
            expected = graded_orl(str(query), one)
        except QueryBuildError as exc:
            assert type(together[query]) is type(exc) and str(together[query]) == str(exc)
            continue
        assert together[query] == expected
