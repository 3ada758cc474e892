"""Hypothesis strategies for ORLs and candidate lists (shared by the scoring tests)."""

from __future__ import annotations

from hypothesis import assume
from hypothesis import strategies as st

from scoring import ORL

ITEMS = [f"d{i}" for i in range(12)]
OUTSIDE = ["x1", "x2", "x3"]


@st.composite
def orls(draw: st.DrawFn, max_items: int = 12) -> ORL:
    """A random ORL with ties, items drawn from ``ITEMS``."""
    items = draw(st.lists(st.sampled_from(ITEMS[:max_items]), min_size=1, unique=True))
    n_tiers = draw(st.integers(1, len(items)))
    ranks = list(range(1, n_tiers + 1)) + draw(
        st.lists(
            st.integers(1, n_tiers), min_size=len(items) - n_tiers, max_size=len(items) - n_tiers
        )
    )
    ranks = draw(st.permutations(ranks))
    return ORL(dict(zip(items, ranks, strict=True)))


@st.composite
def graded_orls(draw: st.DrawFn) -> ORL:
    """A random ORL built from graded labels (keeps native grades)."""
    items = draw(st.lists(st.sampled_from(ITEMS), min_size=1, unique=True))
    grades = draw(st.lists(st.integers(1, 4), min_size=len(items), max_size=len(items)))
    return ORL.from_grades(dict(zip(items, grades, strict=True)))


@st.composite
def judged_orls(draw: st.DrawFn) -> ORL:
    """A graded ORL with items judged not relevant (grade 0), some of them in ``OUTSIDE``."""
    items = draw(st.lists(st.sampled_from(ITEMS + OUTSIDE), min_size=2, unique=True))
    grades = draw(st.lists(st.integers(0, 4), min_size=len(items), max_size=len(items)))
    assume(any(grades))
    return ORL.from_grades(dict(zip(items, grades, strict=True)))


def rankings(max_size: int = 15) -> st.SearchStrategy[list[str]]:
    """Candidate lists that may repeat items and include items outside every ORL."""
    return st.lists(st.sampled_from(ITEMS + OUTSIDE), max_size=max_size)
