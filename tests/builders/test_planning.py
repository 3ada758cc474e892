"""The planner (orlbuild.builders.planning.planner) and the three-state pair decisions."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from orlbuild.builders import BuildParameters, build_orls
from orlbuild.builders.planning.evidence import pairwise_evidence
from orlbuild.builders.planning.plan_records import QueryEvidence
from orlbuild.builders.planning.planner import plan_comparisons
from orlbuild.builders.tiering.equivalence import pair_state_codes, pair_states
from orlbuild.errors import ConfigError
from orlbuild.vocabulary import PairState, PlanObjective
from tests.builders.simulation import simulate_pairwise, simulate_round_robin, tiered_strengths


def _evidence(frame: pd.DataFrame) -> list[QueryEvidence]:
    params, outcome = build_orls(frame, BuildParameters(source="pairwise"), on_error="skip")
    return pairwise_evidence(frame, params, {q: o.tiers for q, o in outcome.orls.items()})[0]


@pytest.fixture(scope="module")
def mixed_evidence() -> list[QueryEvidence]:
    """Six open queries of 12 items in 3 true tiers, 50 random comparisons each."""
    rng = np.random.default_rng(7)
    strengths, _ = tiered_strengths([4, 4, 4], 1.0)
    frame = pd.concat([simulate_pairwise(rng, strengths, 50, query=f"q{k}") for k in range(6)])
    return _evidence(frame)


@pytest.fixture(scope="module")
def settled_and_open() -> list[QueryEvidence]:
    """``done``: two items 4 apart compared 200 times (backed, nothing to tie); ``open``: 6
    equal-looking items compared 4 times per pair."""
    rng = np.random.default_rng(3)
    done = simulate_round_robin(rng, np.array([2.0, -2.0]), 200, query="done")
    unsure = simulate_pairwise(rng, np.array([0.0, 0.0, 0.6, 0.6, 1.2, 1.2]), 40, query="open")
    return _evidence(pd.concat([done, unsure], ignore_index=True))


def test_three_states_including_a_hand_built_equivalence() -> None:
    # separated: 2.0 / 0.5 = 4 > 3; equivalent: 0.05 + 3 * 0.05 = 0.2 < 0.25; undecided otherwise
    diff = np.array([2.0, 0.05, 0.4, 0.05])
    se = np.array([0.5, 0.05, 0.5, 0.1])
    assert pair_states(diff, se, 3.0, 3.0, 0.25) == [
        PairState.separated,
        PairState.equivalent,
        PairState.undecided,
        PairState.undecided,  # 0.05 + 0.3 >= 0.25: the interval leaves the margin
    ]
    # without a margin nothing is equivalent; the same tie is only "not shown to differ"
    assert pair_states(diff, se, 3.0, 3.0, None)[1] is PairState.undecided
    # a negative difference is judged by its size; se = 0 with a difference is separated
    assert pair_state_codes([-2.0, 0.3], [0.5, 0.0], 3.0, 3.0, 0.25).tolist() == [1, 1]


def test_an_equivalent_tie_is_shown_on_a_real_fit_with_a_margin() -> None:
    # two equal items compared 4000 times: the simultaneous interval is about +-0.1
    rng = np.random.default_rng(0)
    evidence = _evidence(simulate_round_robin(rng, np.zeros(2), 4000, query="eq"))
    wide = plan_comparisons(evidence, 0, margin=0.5).queries["eq"]
    assert wide.status == "settled" and wide.open_counts["tie"] == 0
    narrow = plan_comparisons(evidence, 0, margin=0.01).queries["eq"]
    assert narrow.status == "open" and narrow.open_counts["tie"] == 1


def test_budget_cap_and_seed(mixed_evidence: list[QueryEvidence]) -> None:
    plan = plan_comparisons(mixed_evidence, 40, max_per_query=9, seed=1)
    assert len(plan.pairs) == 40
    per_query = pd.Series([p.query for p in plan.pairs]).value_counts()
    assert per_query.max() <= 9
    assert all(p.item_a != p.item_b for p in plan.pairs)
    again = plan_comparisons(mixed_evidence, 40, max_per_query=9, seed=1)
    assert again.pairs == plan.pairs
    other = plan_comparisons(mixed_evidence, 40, max_per_query=9, seed=2)
    assert [(p.item_a, p.item_b) for p in other.pairs] != [(p.item_a, p.item_b) for p in plan.pairs]


def test_repeat_limit_and_budget_larger_than_what_is_allowed(
    mixed_evidence: list[QueryEvidence],
) -> None:
    one = mixed_evidence[:1]
    plan = plan_comparisons(one, 1000, max_per_query=80, repeat_limit=1)
    pairs = [frozenset((p.item_a, p.item_b)) for p in plan.pairs]
    assert len(pairs) == len(set(pairs)) <= 66  # 12 items: 66 pairs, each asked once at most
    assert len(plan.pairs) <= 80


def test_item_order_is_randomised_and_queries_are_mixed(
    mixed_evidence: list[QueryEvidence],
) -> None:
    plan = plan_comparisons(mixed_evidence, 60, seed=0)
    first_is_smaller = [p.item_a < p.item_b for p in plan.pairs]
    assert 0.2 < np.mean(first_is_smaller) < 0.8
    queries = [p.query for p in plan.pairs]
    runs = sum(a != b for a, b in itertools.pairwise(queries))
    assert runs > len(queries) / 3  # not one block per query


def test_no_pair_for_a_settled_query(settled_and_open: list[QueryEvidence]) -> None:
    plan = plan_comparisons(settled_and_open, 30)
    assert plan.queries["done"].status == "settled"
    assert plan.queries["open"].status == "open"
    assert {p.query for p in plan.pairs} == {"open"} and len(plan.pairs) == 30
    assert plan.queries["done"].planned == 0 and plan.queries["open"].planned == 30
    assert plan.queries["done"].expected_judgments is None


def test_budget_zero_gives_only_the_status(settled_and_open: list[QueryEvidence]) -> None:
    plan = plan_comparisons(settled_and_open, 0)
    assert plan.pairs == [] and set(plan.queries) == {"done", "open"}
    kinds = {d["kind"] for d in plan.queries["open"].open_decisions}
    assert kinds and kinds <= {"boundary", "tie", "item"}


def test_pairs_name_the_decision_they_serve(mixed_evidence: list[QueryEvidence]) -> None:
    plan = plan_comparisons(mixed_evidence, 20)
    assert {p.serves for p in plan.pairs} <= {"boundary", "tie", "item"}
    assert all(" vs " in p.decision and p.value > 0 for p in plan.pairs)


def test_planned_pairs_reduce_the_variance_of_open_decisions_more_than_random_ones(
    mixed_evidence: list[QueryEvidence],
) -> None:
    """The rank-one update the planner optimises: its 20 pairs shrink the open pairs' variance
    (weighted as the planner weighs them) more than 20 random pairs of the same queries."""
    from orlbuild.builders.planning import pair_values as planning

    def open_variance(pairs: list[tuple[str, int, int]]) -> float:
        total = 0.0
        for ev in mixed_evidence:
            group = planning.stack_group([ev], PlanObjective.tiers)
            mine = [(i, j) for q, i, j in pairs if q == ev.query]
            for i, j in mine:
                k = int(np.flatnonzero((group.first == min(i, j)) & (group.second == max(i, j)))[0])
                planning.add_comparisons(group, np.array([0]), np.array([k]))
            view = planning.pair_view(group, np.arange(1), None)
            base = planning.pair_view(
                planning.stack_group([ev], PlanObjective.tiers), np.arange(1), None
            )
            total += float((base.weight * view.var / base.var).sum())
        return total

    plan = plan_comparisons(mixed_evidence, 20, seed=0)
    index = {ev.query: {str(x): k for k, x in enumerate(ev.items)} for ev in mixed_evidence}
    planned = [(p.query, index[p.query][p.item_a], index[p.query][p.item_b]) for p in plan.pairs]
    rng = np.random.default_rng(0)
    randoms = []
    for _ in range(20):
        ev = mixed_evidence[int(rng.integers(len(mixed_evidence)))]
        i, j = rng.choice(len(ev.items), 2, replace=False)
        randoms.append((ev.query, int(i), int(j)))
    assert open_variance(planned) < open_variance(randoms)


def test_bad_options_are_config_errors(mixed_evidence: list[QueryEvidence]) -> None:
    with pytest.raises(ConfigError, match="--budget"):
        plan_comparisons(mixed_evidence, -1)
    with pytest.raises(ConfigError, match="--max-per-query"):
        plan_comparisons(mixed_evidence, 5, max_per_query=0)
    with pytest.raises(ConfigError, match="--repeat-limit"):
        plan_comparisons(mixed_evidence, 5, repeat_limit=0)
    with pytest.raises(ValueError):
        plan_comparisons(mixed_evidence, 5, objective="best")


def test_top_objective_only_serves_the_top_tier(mixed_evidence: list[QueryEvidence]) -> None:
    plan = plan_comparisons(mixed_evidence, 30, objective="top")
    for p in plan.pairs:
        ev = next(e for e in mixed_evidence if e.query == p.query)
        tier = dict(zip(map(str, ev.items), ev.tiers.tolist(), strict=True))
        a, b = p.decision.split(" vs ")
        se = np.sqrt(np.diag(ev.cov))
        reach = {
            str(x): ev.scores[k] + ev.single * se[k] >= min(ev.scores[ev.tiers == 1])
            for k, x in enumerate(ev.items)
        }
        assert tier[a] == 1 or tier[b] == 1 or reach[a] or reach[b]


def _hand_built(scores: list[float], se: float, tiers: list[int]) -> QueryEvidence:
    n = len(scores)
    return QueryEvidence(
        query="gap",
        items=np.array([f"d{i}" for i in range(n)], dtype=object),
        scores=np.array(scores),
        cov=np.eye(n) * se**2,
        critical=np.where(np.eye(n, dtype=bool), np.inf, 3.0),
        single=3.0,
        tiers=np.array(tiers),
        item_comparisons=np.full(n, 20),
        judgments=40,
    )


def test_boundary_weights_go_to_the_pairs_that_block_a_plausible_cut() -> None:
    """Scores 3, 2.9 | 0.6, 0.5 | 0 (pair standard errors 0.85, critical value 3): no pair
    is separated yet, and the cut after the second item is the plausible one (its crossing pairs
    are 2.3-3 apart); its closest crossing pairs weigh most."""
    from orlbuild.builders.planning import pair_values as planning

    ev = _hand_built([3.0, 2.9, 0.6, 0.5, 0.0], 0.6, [1] * 5)
    group = planning.stack_group([ev], PlanObjective.tiers)
    view = planning.pair_view(group, np.arange(1), None)
    weights = planning.cut_weights(group, np.arange(1), view)[0]
    pairs = list(zip(group.first.tolist(), group.second.tolist(), strict=True))
    ranked = [pairs[k] for k in np.argsort(-weights)]
    assert ranked[0] == (1, 2)  # 2.9 vs 0.6: the weakest pair across the gap
    assert set(ranked[:3]) == {(0, 2), (1, 2), (1, 3)}
    # pairs inside a side block only implausible cuts
    assert max(weights[pairs.index((0, 1))], weights[pairs.index((2, 3))]) < weights.max() / 100


def test_objective_top_values_the_cuts_that_shrink_the_top_tier_most() -> None:
    # two about equally plausible cuts: after item 1 (top tier 1) and after item 4 (top tier 4)
    from orlbuild.builders.planning import pair_values as planning

    ev = _hand_built([5.0, 3.0, 2.95, 2.9, 1.0], 0.6, [1] * 5)
    pairs = list(zip(*np.triu_indices(5, 1), strict=True))
    ratio = {}
    for goal in (PlanObjective.top, PlanObjective.tiers):
        group = planning.stack_group([ev], goal)
        view = planning.pair_view(group, np.arange(1), None)
        weights = planning.cut_weights(group, np.arange(1), view)[0]
        ratio[goal] = weights[pairs.index((0, 1))] / weights[pairs.index((3, 4))]
    assert 0.5 < ratio[PlanObjective.tiers] < 2.0
    assert ratio[PlanObjective.top] > 3 * ratio[PlanObjective.tiers]


def test_the_default_repeat_limit_lets_the_planner_insist(
    mixed_evidence: list[QueryEvidence],
) -> None:
    from orlbuild.builders.planning.planner import REPEAT_LIMIT

    plan = plan_comparisons(mixed_evidence[:2], 200, seed=0)
    asks = pd.Series([(p.query, frozenset((p.item_a, p.item_b))) for p in plan.pairs])
    counts = asks.value_counts()
    assert len(plan.pairs) == 200 and counts.max() <= REPEAT_LIMIT
    assert counts.max() > 2  # the pairs across a plausible boundary are asked again and again
