"""Tiers, letters, pairwise verdicts and rank intervals never contradict each other
(docs/comparing-systems.md, "One family of decisions"): a seeded property test over
random panels and random verdicts."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.settings import TestSettings
from scoring.statistics import system_comparison, system_tiers
from scoring.statistics.comparison import overlap_notes
from scoring.statistics.tiers import verdict_relation
from scoring.vocabulary import SignificanceTest

SEEDED = settings(derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_one_family(pairs: pd.DataFrame) -> None:
    """Every consistency the docs promise, on one measure's pairs."""
    tiers = system_tiers(pairs).set_index("system")
    info = {str(r["system"]): r for r in system_tiers(pairs).to_dict(orient="records")}
    verdict: dict[tuple[str, str], bool] = {}
    for row in pairs.itertuples(index=False):
        better, worse = (row.a, row.b) if row.diff > 0 else (row.b, row.a)
        verdict[(better, worse)] = bool(row.significant)
        verdict[(worse, better)] = False
        if row.significant:
            assert row.diff != 0
    systems = list(tiers.index)
    m = len(systems)

    def above(x: str, y: str) -> bool:
        return verdict.get((x, y), False)

    notes = " ".join(overlap_notes(pairs))
    for x in systems:
        lo, hi = int(info[x]["rank_lo"]), int(info[x]["rank_hi"])
        rank = int(info[x]["rank"])
        # the interval is the count of systems found above and below
        assert lo == 1 + sum(above(y, x) for y in systems if y != x)
        assert hi == m - sum(above(x, y) for y in systems if y != x)
        assert 1 <= lo <= rank <= hi <= m
        others_significant = all(above(x, y) or above(y, x) for y in systems if y != x)
        assert (lo == hi) == others_significant  # placed for sure iff it differs from all
        for y in systems:
            if y == x:
                continue
            shares_letter = bool(set(info[x]["letters"]) & set(info[y]["letters"]))
            if "," in info[x]["letters"] + info[y]["letters"]:  # numbered letters
                shares_letter = bool(
                    set(info[x]["letters"].split(",")) & set(info[y]["letters"].split(","))
                )
            y_lo, y_hi = int(info[y]["rank_lo"]), int(info[y]["rank_hi"])
            significant = above(x, y) or above(y, x)
            assert shares_letter == (not significant)
            if above(x, y):
                for z in systems:  # the verdicts are closed under transitivity
                    if above(y, z):
                        assert above(x, z)
                assert lo < y_lo and hi < y_hi
                assert int(info[x]["tier"]) <= int(info[y]["tier"])
                if hi >= y_lo:  # sharing a rank: the report says why, naming the measure
                    assert str(pairs["measure"].iloc[0]) in notes
            elif not significant:
                assert hi >= y_lo and y_hi >= lo  # not significant: the intervals overlap
    # tiers: each member not significant from its tier's leader, consecutive leaders significant
    ordered = tiers.sort_values("rank")
    leaders = ordered.groupby("tier", sort=True).head(1)
    for system, row in ordered.iterrows():
        leader = leaders.index[leaders["tier"] == row["tier"]][0]
        assert system == leader or not above(leader, system)
    for upper, lower in zip(leaders.index[:-1], leaders.index[1:], strict=True):
        assert above(upper, lower)


@st.composite
def verdicts(draw: st.DrawFn) -> pd.DataFrame:
    """A measure's pairs: random means, and any set of pairs declared significant."""
    m = draw(st.integers(2, 9))
    means = draw(
        st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=m, max_size=m, unique=True)
    )
    names = [f"s{k}" for k in range(m)]
    rows = []
    for i in range(m):
        for j in range(i + 1, m):
            rows.append(
                {
                    "measure": "M",
                    "a": names[i],
                    "b": names[j],
                    "mean_a": means[i],
                    "mean_b": means[j],
                    "diff": means[i] - means[j],
                    "significant": draw(st.booleans()),
                }
            )
    return pd.DataFrame(rows)


@SEEDED
@given(verdicts())
def test_any_verdicts_give_one_consistent_family(pairs: pd.DataFrame) -> None:
    # system_comparison closes the verdicts (as _closed does); system_tiers closes them itself
    assert_one_family(_closed(pairs))
    closed_tiers = system_tiers(_closed(pairs)).reset_index(drop=True)
    pd.testing.assert_frame_equal(system_tiers(pairs).reset_index(drop=True), closed_tiers)


def _closed(pairs: pd.DataFrame) -> pd.DataFrame:
    """The pairs with ``significant`` replaced by the closed relation, as the comparison sets it."""
    closed = pairs.copy()
    systems = sorted(set(pairs["a"]) | set(pairs["b"]))
    relation = verdict_relation(pairs, systems)
    index = {s: k for k, s in enumerate(systems)}
    closed["significant"] = [
        bool(relation[index[a], index[b]] or relation[index[b], index[a]])
        for a, b in zip(pairs["a"], pairs["b"], strict=True)
    ]
    return closed


@st.composite
def panels(draw: st.DrawFn) -> tuple[pd.DataFrame, SignificanceTest, int]:
    """Random per-query panels: systems with random effects and spreads on shared queries."""
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    m = draw(st.integers(3, 8))
    n = draw(st.integers(8, 30))
    effects = rng.normal(0.0, draw(st.sampled_from([0.02, 0.08, 0.2])), m)
    spread = rng.uniform(0.05, 0.3, m)
    scores = rng.uniform(0.2, 0.8, (n, 1)) + effects + rng.normal(0.0, 1.0, (n, m)) * spread
    frame = pd.DataFrame(
        scores, columns=[f"sys{k}" for k in range(m)], index=[f"q{k}" for k in range(n)]
    )
    test = draw(st.sampled_from(list(SignificanceTest)))
    return frame, test, draw(st.integers(0, 1000))


@settings(SEEDED, max_examples=40)
@given(panels())
def test_compared_panels_give_one_consistent_family(
    drawn: tuple[pd.DataFrame, SignificanceTest, int],
) -> None:
    frame, test, seed = drawn
    result = system_comparison(frame, TestSettings(test=test, permutations=200, seed=seed))
    pairs = result.pairs
    assert_one_family(pairs)
    # implied verdicts are exactly the significant pairs the test alone did not reject
    direct = pairs["p_adjusted"] < 0.05
    assert (pairs["significant"] == (direct | pairs["implied"])).all()
    assert not (pairs["implied"] & direct).any()
    # the comparison's own rank intervals are the family's
    ranks = result.ranks.set_index("system")[["rank_lo", "rank_hi"]].sort_index()
    family = result.tiers().set_index("system")[["rank_lo", "rank_hi"]].sort_index()
    pd.testing.assert_frame_equal(ranks, family, check_dtype=False)


def test_the_issue_examples_cannot_happen() -> None:
    """Every pair significant gives three sure ranks; a pair not significant, no sure rank."""
    base = {"measure": "M", "mean_a": 0.0, "mean_b": 0.0}
    rows = [
        {**base, "a": "A", "b": "B", "diff": 0.2, "significant": True},
        {**base, "a": "A", "b": "C", "diff": 0.4, "significant": True},
        {**base, "a": "B", "b": "C", "diff": 0.2, "significant": True},
    ]
    means = {"A": 0.6, "B": 0.4, "C": 0.2}
    frame = pd.DataFrame(rows)
    frame["mean_a"] = frame["a"].map(means)
    frame["mean_b"] = frame["b"].map(means)
    tiers = system_tiers(frame).set_index("system")
    assert [(r.rank_lo, r.rank_hi) for r in tiers.itertuples()] == [(1, 1), (2, 2), (3, 3)]
    assert list(tiers["tier"]) == [1, 2, 3] and list(tiers["letters"]) == ["a", "b", "c"]
    frame.loc[2, "significant"] = False  # B ~ C: C is no longer last for sure
    info = {str(r["system"]): r for r in system_tiers(frame).to_dict(orient="records")}
    assert (info["C"]["rank_lo"], info["C"]["rank_hi"]) == (2, 3)
    assert overlap_notes(frame) == []
