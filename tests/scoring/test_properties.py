"""Property tests over the whole measure registry (docs/measures.md, "RDQ": bounded, ideal = 1)."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from orl_strategies import ITEMS, OUTSIDE, graded_orls, judged_orls, orls, rankings

from scoring import ORL, evaluate_run, parse_measure, rdq
from scoring.measures import MEASURES
from scoring.weights import WEIGHT_PRESETS

# One or more configurations of every registered measure.
REGISTRY = [
    "RDQm1@5", "RDQm2-a1@5", "RDQm2-a4@10", "RDQ(weights=carousel3)@4",
    "RDQ(penalty=m1,weights=vertical-short)@12", "RDQ(weights=uniform,lam=1)@3",
    "nDCG@5", "nDCG(grade=ic)@10", "nDCG(grade=lc,gain=linear)@5", "nDCG",
    "AP@5", "AP", "RBP(p=0.5)@5", "RBP", "CMP@5", "CMP(p=0.7)@12",
    "RR@5", "RR", "P@5", "P@1", "KendallTau@10", "KendallTau", "SpearmanRho@12",
    "R@5", "R", "Rprec", "Success@1", "Success@5", "Bpref", "infAP", "IPrec@0",
    "IPrec@0.3", "IPrec@1", "NumRet", "NumRel", "NumRelRet", "ERR@5", "ERR(grade=tiers)",
    "Judged@5", "Judged", "Hits@5", "nDCG(grade=bi,gain=exp)@5", "AP(rel=2)", "RR(rel=2)@5",
    "P(rel=3)@5", "IPrec(rel=2)@0.5", "NumRelRet(rel=2)", "Bpref(rel=2)", "infAP(rel=2)",
]  # fmt: skip
CORRELATIONS = {"KendallTau", "SpearmanRho"}
RDQ_NAMES = [n for n in REGISTRY if n.startswith("RDQ")]


def test_registry_is_covered() -> None:
    covered = {type(parse_measure(n)).NAME for n in REGISTRY}
    assert covered == set(MEASURES)


def _tier_respecting(orl: ORL, rng: random.Random) -> list[str]:
    return [item for tier in orl.tiers for item in rng.sample(tier, len(tier))]


@pytest.mark.parametrize("name", REGISTRY)
@given(orl=orls(), ranking=rankings())
def test_values_are_bounded(name: str, orl: ORL, ranking: list[str]) -> None:
    measure = parse_measure(name)
    value = measure(orl, ranking)
    low, high = type(measure).RANGE
    if type(measure).NAME in CORRELATIONS:
        assert math.isnan(value) or low - 1e-12 <= value <= high + 1e-12
    else:
        assert low <= value <= high + 1e-12


@pytest.mark.parametrize("name", RDQ_NAMES)
@given(orl=orls(), seed=st.integers(0, 2**32 - 1))
def test_tier_respecting_ranking_scores_one(name: str, orl: ORL, seed: int) -> None:
    ranking = _tier_respecting(orl, random.Random(seed))
    assert parse_measure(name)(orl, ranking) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("weights", list(WEIGHT_PRESETS))
@given(orl=orls(), seed=st.integers(0, 2**32 - 1), k=st.integers(1, 15))
def test_tier_respecting_ranking_scores_one_at_any_k(
    weights: str, orl: ORL, seed: int, k: int
) -> None:
    ranking = _tier_respecting(orl, random.Random(seed))
    for penalty in ("m1", "m2"):
        assert rdq(orl, ranking, k, penalty=penalty, weights=weights) == pytest.approx(1.0)


@pytest.mark.parametrize("name", REGISTRY)
@given(orl=orls(), ranking=rankings(), seed=st.integers(0, 2**32 - 1))
def test_supply_order_of_the_orl_never_matters(
    name: str, orl: ORL, ranking: list[str], seed: int
) -> None:
    entries = list(orl.items())
    random.Random(seed).shuffle(entries)
    shuffled = ORL(dict(entries))
    a, b = parse_measure(name)(orl, ranking), parse_measure(name)(shuffled, ranking)
    assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-12)


@pytest.mark.parametrize("name", [n for n in REGISTRY if "@" in n])
@given(
    orl=orls(), ranking=rankings(), extra=st.lists(st.integers(0, 100), max_size=5), data=st.data()
)
def test_appending_duplicates_never_raises_a_score(
    name: str, orl: ORL, ranking: list[str], extra: list[int], data: st.DataObject
) -> None:
    measure = parse_measure(name)
    if type(measure).NAME in CORRELATIONS:  # defined only on a permutation of the ORL
        ranking = data.draw(st.permutations(list(orl)))
    assume(ranking)
    before = measure(orl, ranking)
    after = measure(orl, ranking + [ranking[j % len(ranking)] for j in extra])
    if math.isnan(before):
        assert math.isnan(after)
    else:
        assert after <= before + 1e-12


@given(
    orl=orls(),
    ranking=rankings(),
    k=st.integers(1, 12),
    a1=st.floats(0.1, 10),
    a2=st.floats(0.1, 10),
)
def test_larger_alpha_never_lowers_m2(
    orl: ORL, ranking: list[str], k: int, a1: float, a2: float
) -> None:
    low, high = sorted((a1, a2))
    assert rdq(orl, ranking, k, alpha=high) >= rdq(orl, ranking, k, alpha=low) - 1e-12


@pytest.mark.parametrize("penalty", ["m1", "m2"])
@given(orl=orls(), ranking=rankings(), k=st.integers(1, 12), data=st.data())
def test_missing_orl_item_at_its_ideal_position_never_lowers_rdq(
    penalty: str, orl: ORL, ranking: list[str], k: int, data: st.DataObject
) -> None:
    """Replace an outside item by a missing ORL item whose rank equals g* at that position."""
    ranking = ranking[:k]
    g_star = orl.ideal_ranks(k)
    seen: set[str] = set()
    candidates = []
    for i, item in enumerate(ranking):
        if item not in orl and item not in seen:
            missing = [d for d in orl if d not in ranking and orl[d] == g_star[i]]
            candidates.extend((i, d) for d in missing)
        seen.add(item)
    assume(candidates)
    i, replacement = data.draw(st.sampled_from(candidates))
    better = [*ranking[:i], replacement, *ranking[i + 1 :]]
    assert rdq(orl, better, k, penalty=penalty) >= rdq(orl, ranking, k, penalty=penalty) - 1e-12


@settings(max_examples=60, deadline=None)
@given(
    pairs=st.lists(st.tuples(orls(), rankings()), min_size=1, max_size=8),
    graded=st.lists(st.tuples(graded_orls(), rankings()), min_size=1, max_size=5),
    judged=st.lists(st.tuples(judged_orls(), rankings()), min_size=1, max_size=5),
)
def test_batch_path_agrees_with_the_per_query_reference(
    pairs: list[tuple[ORL, list[str]]],
    graded: list[tuple[ORL, list[str]]],
    judged: list[tuple[ORL, list[str]]],
) -> None:
    native = ["nDCG(grade=native)@5", "nDCG(grade=native,gain=linear)", "ERR(grade=native)@5"]
    for group, names in (
        (pairs, REGISTRY),
        (graded, [*REGISTRY, *native]),
        (judged, [*REGISTRY, *native]),
        (pairs + graded, REGISTRY),  # ERR(grade=auto) on a mix of graded and ungraded ORLs
    ):
        orl_map = {f"q{i}": orl for i, (orl, _) in enumerate(group)}
        run = {f"q{i}": ranking for i, (_, ranking) in enumerate(group)}
        frame = evaluate_run(orl_map, run, names).to_frame()
        # every cell read at once: frame.loc deep-copies frame.attrs on each read
        values = frame.to_dict(orient="index")
        for query, orl in orl_map.items():
            for name in names:
                expected = parse_measure(name)(orl, run[query])
                got = values[query][name]
                assert (math.isnan(expected) and math.isnan(got)) or got == pytest.approx(
                    expected, abs=1e-12
                ), (name, query)


def test_outside_items_are_never_in_an_orl() -> None:
    assert not set(OUTSIDE) & set(ITEMS)
