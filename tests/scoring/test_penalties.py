"""User penalties: registration, validation, use through rdq and measure names."""

from __future__ import annotations

import math
import re

import pytest

from scoring import ORL, ScoringError, evaluate_run, parse_measure, rdq, register_penalty
from scoring.penalties import PENALTIES


@pytest.fixture
def linear_penalty() -> str:
    name = "linear_test"
    register_penalty(name, lambda i, g_star, g, n_ref: max(0.0, 1.0 - abs(g - g_star) / 10))
    yield name
    PENALTIES.pop(name, None)


def test_user_penalty_through_rdq_and_names(linear_penalty: str) -> None:
    orl = ORL.from_ranked_list(["a", "b", "c"])
    value = rdq(orl, ["b", "a", "c"], 3, penalty=linear_penalty, weights="uniform")
    assert value == pytest.approx((0.9 + 0.9 + 1.0) / 3)
    measure = parse_measure(f"RDQ(penalty={linear_penalty},weights=uniform)@3")
    assert measure(orl, ["b", "a", "c"]) == pytest.approx(value)
    frame = evaluate_run({"q": orl}, {"q": ["b", "a", "c"]}, [str(measure)]).to_frame()
    assert frame.iloc[0, 0] == pytest.approx(value)


@pytest.mark.parametrize(
    ("fn", "fragment"),
    [
        (lambda i, gs, g, n: 1.5, "must return values in [0, 1]"),
        (lambda i, gs, g, n: -0.1, "must return values in [0, 1]"),
        (lambda i, gs, g, n: math.nan, "must return values in [0, 1]"),
        (lambda i, gs, g, n: 1 / 0, "failed on"),
        ("not callable", "must be callable"),
    ],
)
def test_invalid_penalties_are_refused(fn: object, fragment: str) -> None:
    with pytest.raises(ScoringError, match=re.escape(fragment)):
        register_penalty("bad_test", fn)  # type: ignore[arg-type]
    assert "bad_test" not in PENALTIES


def test_reserved_and_duplicate_names(linear_penalty: str) -> None:
    with pytest.raises(ScoringError, match="reserved"):
        register_penalty("m1", lambda *a: 1.0)
    with pytest.raises(ScoringError, match="already registered"):
        register_penalty(linear_penalty, lambda *a: 1.0)
    register_penalty(linear_penalty, lambda *a: 1.0, replace=True)


def test_runtime_check_catches_a_penalty_leaving_the_range() -> None:
    """A penalty that passes the probe grid but misbehaves later is still caught."""
    name = "sneaky_test"
    register_penalty(name, lambda i, gs, g, n: 2.0 if i == 33 else 1.0)
    try:
        orl = ORL.from_ranked_list([f"d{j}" for j in range(40)])
        with pytest.raises(ScoringError, match="outside"):
            rdq(orl, [f"d{j}" for j in range(40)][::-1], 40, penalty=name)
    finally:
        PENALTIES.pop(name, None)


def test_alpha_lam_must_be_positive() -> None:
    with pytest.raises(ScoringError, match="must be > 0"):
        rdq(ORL({"a": 1}), ["a"], 1, alpha=0)
