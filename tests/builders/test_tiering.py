"""Leader rule, sig=0, exact ties, estimator parity with choix, uncertainty, determinism."""

from __future__ import annotations

import itertools

import choix
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orlbuild.builders import BuildParameters, build_orls, tiers_from_scores
from orlbuild.builders.estimation.bradley_terry import bradley_terry_pairwise, pairs_from_counts
from orlbuild.builders.estimation.rank_centrality import rank_centrality_pairwise
from orlbuild.builders.estimation.strength_models import BradleyTerryModel
from orlbuild.builders.estimation.uncertainty import ScoreUncertainty
from orlbuild.builders.pairwise_data import comparisons_from_pairwise
from orlbuild.builders.parameters import resolve_parameters
from orlbuild.builders.tiering.query_orl import score_uncertainty
from orlbuild.errors import ConfigError
from tests.builders.simulation import simulate_pairwise, tiered_strengths

ITEMS = np.array(["a", "b", "c", "d"], dtype=object)


def chain_uncertainty(scores: list[float], p_adjacent: float) -> ScoreUncertainty:
    """Items 0.1 apart; neighbours are never significant, items 2+ apart always are."""
    s = np.array(scores)
    gap = np.abs(np.subtract.outer(np.arange(4), np.arange(4)))
    p = np.where(gap <= 1, p_adjacent, 0.001)
    return ScoreUncertainty(s, s - 1, s + 1, np.full((4, 4), 0.1), p, "test")


def test_leader_rule_prevents_chains_of_small_gaps_from_merging() -> None:
    tiers, decisions = tiers_from_scores(
        "q", ITEMS, chain_uncertainty([0.3, 0.2, 0.1, 0.0], 0.5), sig=0.05
    )
    # b ties with a; c is tested against a (not b) and separated; d ties with its leader c
    assert tiers == [["a", "b"], ["c", "d"]]
    assert [(d.leader, d.item, d.decision) for d in decisions] == [
        ("a", "b", "tied"),
        ("a", "c", "separated"),
        ("c", "d", "tied"),
    ]


def test_sig_zero_is_strict_order_but_exact_ties_still_tie() -> None:
    tiers, decisions = tiers_from_scores(
        "q", ITEMS, chain_uncertainty([0.3, 0.3, 0.1, 0.0], 0.9), sig=0.0
    )
    assert tiers == [["a", "b"], ["c"], ["d"]]
    assert [d.rule for d in decisions] == [
        "exact score tie",
        "strict order (sig=0)",
        "strict order (sig=0)",
    ]


def test_ilsr_on_counts_equals_choix_ilsr_pairwise() -> None:
    rng = np.random.default_rng(1)
    frame = simulate_pairwise(rng, rng.normal(size=10), 150)
    counts = comparisons_from_pairwise(frame).count_matrix()
    ours = bradley_terry_pairwise(counts, alpha=0.05)
    reference = choix.ilsr_pairwise(10, pairs_from_counts(counts), alpha=0.05)
    np.testing.assert_allclose(ours, reference - reference.mean(), atol=1e-6)
    for solver in ("opt", "mm"):
        other = bradley_terry_pairwise(counts, alpha=0.05, solver=solver)
        assert np.corrcoef(ours, other)[0, 1] > 0.99


def test_rank_centrality_equals_choix_without_regularisation() -> None:
    rng = np.random.default_rng(2)
    strengths = rng.normal(0, 0.3, size=6)
    frame = simulate_pairwise(rng, strengths, 400)
    counts = comparisons_from_pairwise(frame).count_matrix()
    assert np.all(counts + np.eye(6) > 0)  # every item wins and loses against every other one
    reference = choix.rank_centrality(6, pairs_from_counts(counts), alpha=0.0)
    np.testing.assert_allclose(rank_centrality_pairwise(counts, alpha=0.0), reference, atol=1e-9)


def test_fisher_covariance_matches_choix_ep_pairwise_roughly() -> None:
    rng = np.random.default_rng(3)
    frame = simulate_pairwise(rng, rng.normal(size=6), 600)
    params = resolve_parameters(BuildParameters(source="pairwise", reg=0.01))
    model = BradleyTerryModel(comparisons_from_pairwise(frame), 0.01)
    ours = score_uncertainty(model, params, rng)
    counts = model.comparisons.count_matrix()
    _, cov = choix.ep_pairwise(6, pairs_from_counts(counts), alpha=0.01, model="logit")
    diag = np.diag(cov)
    ep_se = np.sqrt(np.maximum(diag[:, None] + diag[None, :] - 2 * cov, 0))
    upper = np.triu_indices(6, 1)
    np.testing.assert_allclose(ours.se[upper], ep_se[upper], rtol=0.15)


def test_sandwich_by_annotator_is_wider_when_annotators_disagree_systematically() -> None:
    rng = np.random.default_rng(4)
    strengths, _ = tiered_strengths([2, 2, 2], 0.7)
    # each annotator has their own idiosyncratic strengths: strongly clustered data
    frames = [
        simulate_pairwise(rng, strengths + rng.normal(0, 1.0, 6), 150).assign(annotator=f"a{k}")
        for k in range(6)
    ]
    frame = pd.concat(frames)
    fisher = build_orls(frame, BuildParameters(source="pairwise"))[1].orls["q"]
    sandwich = build_orls(frame, BuildParameters(source="pairwise", cluster="annotators"))[1]
    clustered = sandwich.orls["q"]
    assert {d.variance for d in clustered.decisions} == {"sandwich(annotators)"}
    se_f = np.mean([d.se for d in fisher.decisions if d.se is not None])
    se_s = np.mean([d.se for d in clustered.decisions if d.se is not None])
    assert se_s > 1.3 * se_f


@pytest.mark.parametrize(
    "options",
    [
        {"method": "bt", "uncertainty": "bootstrap"},
        {"method": "rank-centrality", "resample": "annotators"},
        {"method": "bt"},
    ],
)
def test_builds_are_identical_with_the_same_seed(options: dict[str, str]) -> None:
    rng = np.random.default_rng(5)
    strengths, _ = tiered_strengths([3, 3], 1.0)
    frame = pd.concat([simulate_pairwise(rng, strengths, 80, query=f"q{k}") for k in range(3)])
    params = BuildParameters(source="pairwise", seed=11, bootstrap=30, **options)  # type: ignore[arg-type]
    first = build_orls(frame, params)[1]
    again = build_orls(frame.sample(frac=1.0, random_state=3), params)[1]  # row order too
    assert first.orls == again.orls
    if options.get("method") == "rank-centrality":
        other = build_orls(
            frame, BuildParameters(source="pairwise", seed=12, bootstrap=30, **options)
        )[1]  # type: ignore[arg-type]
        assert [o.intervals for o in other.orls.values()] != [
            o.intervals for o in first.orls.values()
        ]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"source": "pairwise", "method": "borda"}, "--method 'borda' is not valid"),
        (
            {"source": "pairwise", "method": "rank-centrality", "uncertainty": "fisher"},
            "choose one of bootstrap",
        ),
        (
            {"source": "pairwise", "cluster": "annotators", "uncertainty": "bootstrap"},
            "--cluster annotators applies",
        ),
        ({"source": "pairwise", "sig": 1.0}, "--sig must be in"),
        ({"source": "pairwise", "reg": -1.0}, "--reg must be"),
        ({"source": "graded", "method": "bt"}, "not valid for --source graded"),
        ({"source": "pairwise", "grade_agg": "mean"}, "--grade-agg applies"),
        ({"source": "listwise", "ties": "davidson"}, "--ties applies to --source pairwise"),
        (
            {"source": "pairwise", "method": "rank-centrality", "ties": "davidson"},
            "--ties davidson applies to --method bt",
        ),
        (
            {"source": "pairwise", "method": "rank-centrality", "annotators": "reliability"},
            "--annotators reliability applies",
        ),
        ({"source": "pairwise", "ties": "full"}, "--ties 'full' is not valid"),
    ],
)
def test_invalid_options_are_config_errors(options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        resolve_parameters(BuildParameters(**options))  # type: ignore[arg-type]


def test_resolved_parameters_name_every_default() -> None:
    resolved = resolve_parameters(BuildParameters(source="pairwise", method="rank-centrality"))
    assert resolved.to_json() == {
        "source": "pairwise",
        "method": "rank-centrality",
        "grade_agg": "none",
        "sig": 0.05,
        "uncertainty": "bootstrap",
        "cluster": "none",
        "resample": "comparisons",
        "bootstrap": 200,
        "reg": 0.5,
        "solver": "none",
        "seed": 0,
        "disconnected": "fail",
        "tiering": "simultaneous",  # issue 10: the default procedure, recorded
        "fdr": None,  # issue 32: posterior only
        "mc_draws": 2000,
        "step_down": True,
        "backed": True,
        "ties": "half",
        "annotators": "equal",
        "margin": None,
    }


@given(
    scores=st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=12),
    se=st.floats(0.01, 3.0),
    sig=st.sampled_from([0.0, 0.01, 0.05, 0.5]),
)
@settings(max_examples=150, deadline=None)
def test_tiers_partition_items_in_score_order(scores: list[float], se: float, sig: float) -> None:
    s = np.array(scores)
    n = len(s)
    items = np.array([f"i{k:02d}" for k in range(n)], dtype=object)
    cov = np.eye(n) * se**2
    from orlbuild.builders.estimation.uncertainty import fisher_uncertainty

    unc = fisher_uncertainty(s, np.linalg.pinv(cov))
    tiers, decisions = tiers_from_scores("q", items, unc, sig=sig)
    flat = [i for tier in tiers for i in tier]
    assert sorted(flat) == sorted(items.tolist())  # a partition
    assert len(decisions) == n - 1
    by_item = dict(zip(items.tolist(), s.tolist(), strict=True))
    for upper, lower in itertools.pairwise(tiers):
        assert min(by_item[i] for i in upper) >= max(by_item[i] for i in lower) - 1e-12
    for d in decisions:
        exact = d.rule == "exact score tie"
        tested = sig > 0 and d.p_value is not None and d.p_value >= sig
        assert (d.decision == "tied") == (exact or tested)


def test_ep_uncertainty_is_an_option_for_bt_and_agrees_with_fisher() -> None:
    rng = np.random.default_rng(8)
    frame = simulate_pairwise(rng, rng.normal(size=6), 500)
    fisher = build_orls(frame, BuildParameters(source="pairwise"))[1].orls["q"]
    ep = build_orls(frame, BuildParameters(source="pairwise", uncertainty="ep"))[1].orls["q"]
    assert {d.variance for d in ep.decisions} == {"ep(logit)"}
    for item, score in fisher.scores.items():
        assert abs(ep.scores[item] - score) < 0.1
    with pytest.raises(ConfigError, match="choose one of bootstrap"):
        resolve_parameters(
            BuildParameters(source="pairwise", method="rank-centrality", uncertainty="ep")
        )


def test_two_item_bradley_terry_matches_the_closed_form() -> None:
    # a beats b 30 times, b beats a 10 times: MLE s_a - s_b = log(30/10), and the
    # Fisher standard error of the difference is sqrt(n / (wins * losses)).
    frame = pd.DataFrame(
        {"query": "q", "annotator": "x", "winner": ["a"] * 30 + ["b"] * 10,
         "loser": ["b"] * 30 + ["a"] * 10, "tie": 0}
    )  # fmt: skip
    orl = build_orls(frame, BuildParameters(source="pairwise", reg=0.0))[1].orls["q"]
    (decision,) = orl.decisions
    assert decision.diff == pytest.approx(np.log(3.0), abs=1e-6)
    assert decision.se == pytest.approx(np.sqrt(40 / (30 * 10)), rel=1e-6)
    z = np.log(3.0) / np.sqrt(40 / 300)
    from scipy.stats import norm

    assert decision.p_value == pytest.approx(2 * norm.sf(z), rel=1e-6)
    low, high = orl.intervals["a"]  # type: ignore[misc]
    # centred scores: s_a = diff / 2, Var(s_a) = Var(diff) / 4
    assert (high - low) / 2 == pytest.approx(1.959964 * np.sqrt(40 / 300) / 2, rel=1e-5)
