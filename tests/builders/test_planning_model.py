"""The planner for ``--tiering model`` builds (orlbuild.builders.planning.model_cuts).

It targets the cuts whose BIC decision may change and the items that may move across a boundary."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from orlbuild.builders import BuildParameters, build_orls
from orlbuild.builders.planning.evidence import model_cuts, pairwise_evidence
from orlbuild.builders.planning.model_cuts import ModelCuts, cut_chances, stack_model_cuts
from orlbuild.builders.planning.plan_records import QueryEvidence
from orlbuild.builders.planning.planner import plan_comparisons
from tests.builders.simulation import simulate_pairwise, tiered_strengths


def _built(frame: pd.DataFrame, tiering: str) -> tuple[BuildParameters, dict, dict]:
    params, outcome = build_orls(
        frame, BuildParameters(source="pairwise", tiering=tiering), on_error="skip"
    )
    tiers = {q: o.tiers for q, o in outcome.orls.items()}
    return params, tiers, {q: o.decisions for q, o in outcome.orls.items()}


@pytest.fixture(scope="module")
def two_tiers() -> pd.DataFrame:
    """Six queries of 8 items, two true tiers of 4 (gap 1.0), 50 random comparisons each."""
    rng = np.random.default_rng(5)
    strengths, _ = tiered_strengths([4, 4], 1.0)
    return pd.concat(
        [simulate_pairwise(rng, strengths, 50, query=f"q{k}") for k in range(6)],
        ignore_index=True,
    )


@pytest.fixture(scope="module")
def model_evidence(two_tiers: pd.DataFrame) -> list[QueryEvidence]:
    params, tiers, decisions = _built(two_tiers, "model")
    return pairwise_evidence(two_tiers, params, tiers, decisions)[0]


def test_cuts_are_read_from_the_build_or_recomputed_alike(
    two_tiers: pd.DataFrame, model_evidence: list[QueryEvidence]
) -> None:
    params, tiers, _ = _built(two_tiers, "model")
    recomputed, _ = pairwise_evidence(two_tiers, params, tiers)
    for given, again in zip(model_evidence, recomputed, strict=True):
        assert given.model is not None and again.model is not None
        np.testing.assert_array_equal(given.model.order, again.model.order)
        np.testing.assert_allclose(given.model.gain2, again.model.gain2, equal_nan=True)
        np.testing.assert_array_equal(given.model.kept, again.model.kept)
        # the kept cuts are the build's tiers
        names = given.items[given.model.order]
        cuts = np.cumsum(np.concatenate([[0], given.model.kept]))
        built = [list(names[cuts == k]) for k in range(cuts.max() + 1)]
        assert [sorted(t) for t in built] == [sorted(t) for t in tiers[given.query]]
        # a kept boundary's 2 * gain exceeds the penalty, a rejected one's does not
        gain2 = given.model.gain2[np.isfinite(given.model.gain2)]
        kept = given.model.kept[np.isfinite(given.model.gain2)]
        assert np.all((gain2 > given.model.penalty) == kept)
        assert given.model.future_penalty >= given.model.penalty


def test_a_default_build_has_no_cuts(two_tiers: pd.DataFrame) -> None:
    params, tiers, decisions = _built(two_tiers, "simultaneous")
    evidence, _ = pairwise_evidence(two_tiers, params, tiers, decisions)
    assert all(ev.model is None for ev in evidence)
    # decisions of another procedure are not read as cuts
    ev = evidence[0]
    assert model_cuts([str(i) for i in ev.items], decisions[ev.query], 50, 0.05) is None


def test_the_chance_of_a_change_peaks_at_the_threshold() -> None:
    """A cut just past the penalty may change when the judgments double; one far from it not."""
    n = 3
    cov = np.eye(n)[None] * 0.05
    scores = np.array([[1.0, 0.0, -1.0]])
    penalty = 9.0

    def chance(gain2: float, kept: bool) -> float:
        cut = ModelCuts(
            order=np.arange(n),
            gain2=np.array([gain2, 0.5]),
            kept=np.array([kept, False]),
            penalty=penalty,
            future_penalty=penalty,
        )
        p, _ = cut_chances(stack_model_cuts([cut], cov, scores), cov)
        return float(p[0, 0])  # chance the first cut is kept once the judgments double

    near, far = 1.0 - chance(9.5, True), 1.0 - chance(60.0, True)
    assert 0.05 < near < 0.5 and far < 1e-4
    assert chance(0.25, False) < 0.05  # a cut with nothing behind it stays rejected
    assert 0.2 < chance(7.0, False) < 0.8  # one just below the penalty may be kept


def test_pairs_go_to_the_uncertain_cuts_and_placements(
    model_evidence: list[QueryEvidence],
) -> None:
    plan = plan_comparisons(model_evidence, 120, seed=0)
    assert len(plan.pairs) == 120
    kinds = {p.serves for p in plan.pairs}
    assert kinds <= {"boundary", "tie", "item"}
    by_query = {ev.query: ev for ev in model_evidence}
    for pair in plan.pairs:
        ev = by_query[pair.query]
        assert ev.model is not None
        if pair.serves in ("boundary", "tie"):  # a cut: the two items either side of it
            above, below = pair.decision.split(" | ")
            order = [str(i) for i in ev.items[ev.model.order]]
            assert order.index(below) == order.index(above) + 1
    for status in plan.queries.values():
        assert status.status == "open"  # 50 judgments of 8 items settle nothing here
        for decision in status.open_decisions:
            if decision["kind"] == "boundary":
                assert decision["chance_changed_if_doubled"] >= 0.05
            if decision["kind"] == "tie":
                assert decision["chance_decided_if_doubled"] >= 0.05
                assert decision["z"] ** 2 <= decision["threshold"] ** 2 + 1e-9
    # the pairs serve the query's listed open cuts: the cut each pair serves most is open
    for pair in plan.pairs:
        if pair.serves != "item":
            open_cuts = {
                " | ".join(d.get("pair", d.get("weakest_pair", [])))
                for d in plan.queries[pair.query].open_decisions
                if d["kind"] in ("boundary", "tie")
            }
            assert pair.decision in open_cuts  # 8 items: 7 cuts, all listed when open


def test_planned_pairs_shrink_the_uncertain_cuts_more_than_the_default_plan(
    two_tiers: pd.DataFrame, model_evidence: list[QueryEvidence]
) -> None:
    """The model plan shrinks the variance of the cuts that may change (weighted by that chance)
    more than the default's plan of the same budget does: they target different decisions."""
    params, tiers, _ = _built(two_tiers, "simultaneous")
    default_evidence, _ = pairwise_evidence(two_tiers, params, tiers)
    model_plan = plan_comparisons(model_evidence, 120, seed=0)
    default_plan = plan_comparisons(default_evidence, 120, seed=0)
    assert {p.decision for p in model_plan.pairs} != {p.decision for p in default_plan.pairs}
    shrunk = {}
    for name, plan in (("model", model_plan), ("default", default_plan)):
        cov = []
        for ev in model_evidence:
            c = ev.cov.copy()
            index = {str(i): k for k, i in enumerate(ev.items)}
            p = 1.0 / (1.0 + np.exp(-(ev.scores[:, None] - ev.scores[None, :])))
            for pair in plan.pairs:
                if pair.query != ev.query:
                    continue
                i, j = index[pair.item_a], index[pair.item_b]
                u = np.zeros(len(ev.items))
                u[i], u[j] = 1.0, -1.0
                w = p[i, j] * (1 - p[i, j])
                cu = c @ u
                c = c - w * np.outer(cu, cu) / (1 + w * u @ cu)
            cov.append(c)
        stacked = np.stack(cov)
        stack = stack_model_cuts(
            [ev.model for ev in model_evidence],
            np.stack([ev.cov for ev in model_evidence]),
            np.stack([ev.scores for ev in model_evidence]),
        )
        before, var_before = cut_chances(stack, np.stack([e.cov for e in model_evidence]))
        _, var_after = cut_chances(stack, stacked)
        unsure = np.minimum(before, 1 - before) * stack.valid
        shrunk[name] = float((unsure * (1.0 - var_after / var_before)).sum())
    assert shrunk["model"] > 1.2 * shrunk["default"], shrunk


def test_settled_model_query_gets_nothing() -> None:
    """Three items 2.5 apart compared 400 times: nothing can change, nothing is proposed."""
    rng = np.random.default_rng(2)
    strengths = np.array([2.5, 0.0, -2.5])
    done = simulate_pairwise(rng, strengths, 400, query="done")
    unsure = simulate_pairwise(rng, np.array([0.0, 0.3, 0.6, 0.9, 1.2]), 30, query="open")
    frame = pd.concat([done, unsure], ignore_index=True)
    params, tiers, decisions = _built(frame, "model")
    evidence, _ = pairwise_evidence(frame, params, tiers, decisions)
    plan = plan_comparisons(evidence, 40, seed=1)
    assert plan.queries["done"].status == "settled"
    assert plan.queries["done"].planned == 0 and plan.queries["done"].open_decisions == []
    assert plan.queries["open"].status == "open" and plan.queries["open"].planned == 40
    assert plan.queries["open"].expected_judgments is not None
