"""ORL validation and constructors (docs/measures.md, "The ORL")."""

from __future__ import annotations

import numpy as np
import pytest

from scoring import ORL, ScoringError


def test_mapping_with_ties() -> None:
    orl = ORL({"d1": 1, "d3": 1, "d2": 2})
    assert orl.tiers == [["d1", "d3"], ["d2"]]
    assert (orl.n_items, orl.n_tiers) == (3, 2)
    assert orl["d2"] == 2 and "d3" in orl and "x" not in orl
    assert orl.grades is None


@pytest.mark.parametrize(
    ("mapping", "fragment"),
    [
        ({}, "at least one item"),
        ({"d1": 1, "d2": 3}, "'d2' has rank 3"),
        ({"d1": 0}, "'d1' has rank 0"),
        ({"d1": 2}, "'d1' has rank 2"),
        ({"d1": -1, "d2": 1}, "'d1' has rank -1"),
        ({"d1": 1.0}, "'d1' must be an integer"),
        ({"d1": "1"}, "'d1' must be an integer"),
        ({"d1": True}, "'d1' must be an integer"),
    ],
)
def test_invalid_orls_name_item_and_rank(mapping: dict, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        ORL(mapping)


def test_numpy_integer_ranks_are_accepted() -> None:
    assert ORL({"a": np.int64(1), "b": np.int32(2)}).to_dict() == {"a": 1, "b": 2}


def test_normalize_compresses_gaps() -> None:
    assert ORL({"a": 2, "b": 7, "c": 2}, normalize=True).to_dict() == {"a": 1, "b": 2, "c": 1}


def test_ranked_list_and_repeats() -> None:
    assert ORL.from_ranked_list(["d1", "d2", "d3"]).to_dict() == {"d1": 1, "d2": 2, "d3": 3}
    with pytest.raises(ScoringError, match="'d1' appears twice"):
        ORL.from_ranked_list(["d1", "d2", "d1"])


def test_from_tiers() -> None:
    assert ORL.from_tiers([["a", "b"], ["c"]]).to_dict() == {"a": 1, "b": 1, "c": 2}
    with pytest.raises(ScoringError, match="tier 2 of the ORL is empty"):
        ORL.from_tiers([["a"], []])
    with pytest.raises(ScoringError, match="'a' appears in tier 1 and tier 2"):
        ORL.from_tiers([["a"], ["a"]])


def test_from_grades_follows_the_graded_route() -> None:
    orl = ORL.from_grades({"a": 3, "b": 1, "c": 2, "z": 0})
    assert orl.to_dict() == {"a": 1, "b": 3, "c": 2}
    assert dict(orl.grades or {}) == {"a": 3.0, "b": 1.0, "c": 2.0}
    assert ORL.from_grades({"a": 3, "b": 1}).to_dict() == {"a": 1, "b": 2}
    with pytest.raises(ScoringError, match="no item has a positive grade"):
        ORL.from_grades({"a": 0})
    with pytest.raises(ScoringError, match="'a' must be >= 0"):
        ORL.from_grades({"a": -1})


def test_from_scores_dense_ranks() -> None:
    assert ORL.from_scores({"a": 0.9, "b": 0.1, "c": 0.9}).to_dict() == {"a": 1, "b": 2, "c": 1}


def test_ideal_ranks_continue_past_the_orl() -> None:
    assert ORL({"a": 1, "b": 2, "c": 2}).ideal_ranks(5).tolist() == [1, 2, 2, 3, 4]
    assert ORL({"a": 1, "b": 2, "c": 2}).ideal_ranks(2).tolist() == [1, 2]


def test_equality_ignores_supply_order() -> None:
    assert ORL({"a": 1, "b": 2}) == ORL({"b": 2, "a": 1})
    assert ORL({"a": 1}) == {"a": 1}
    assert ORL({"a": 1}) != ORL({"a": 1, "b": 1})


def test_an_orl_is_unhashable_like_the_dict_it_equals() -> None:
    with pytest.raises(TypeError, match="unhashable"):
        hash(ORL({"a": 1}))
