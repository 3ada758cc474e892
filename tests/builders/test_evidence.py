"""Ties, counted rows, backed boundaries, under-judged items and annotator reliabilities."""

from __future__ import annotations

import evalica
import numpy as np
import pandas as pd
import pytest

from orlbuild.builders import BuildParameters, build_orls
from orlbuild.builders.estimation.bradley_terry import (
    bradley_terry_information,
    bradley_terry_pairwise,
)
from orlbuild.builders.estimation.crowd_bt import fit_reliabilities
from orlbuild.builders.estimation.davidson import davidson_counts, davidson_fit
from orlbuild.builders.pairwise_data import comparisons_from_pairwise
from orlbuild.builders.tiering.backed_orders import under_judged_items
from tests.builders.simulation import drawn_preferences, simulate_round_robin, tiered_strengths


def _with_ties(seed: int, n_items: int, n_rows: int, tie_share: float) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    first = rng.integers(0, n_items, n_rows)
    second = (first + rng.integers(1, n_items, n_rows)) % n_items
    strength = rng.normal(size=n_items)
    names = np.array([f"m{k:02d}" for k in range(n_items)], dtype=object)
    return drawn_preferences(
        rng, strength, first, second, names, annotator="_", tie_share=tie_share
    )


@pytest.mark.parametrize("solver", ["ilsr", "opt", "mm"])
def test_ties_as_half_wins_reproduce_evalica_bradley_terry(solver: str) -> None:
    # an LLM-leaderboard-like design: 59 items, 8,931 judgments, 39% ties
    frame = _with_ties(3, 59, 8931, 0.39)
    comparisons = comparisons_from_pairwise(frame)
    ours = bradley_terry_pairwise(comparisons.count_matrix(), alpha=0.0, solver=solver)
    winners = [evalica.Winner.Draw if t else evalica.Winner.X for t in frame["tie"]]
    theirs = evalica.bradley_terry(
        frame["winner"], frame["loser"], winners, tolerance=1e-13, limit=100_000
    ).scores
    log = np.log(theirs.reindex(comparisons.items).to_numpy())
    np.testing.assert_allclose(ours, log - log.mean(), atol=1e-6)
    assert list(comparisons.items[np.argsort(-ours)]) == list(
        theirs.sort_values(ascending=False).index
    )


def test_a_tie_is_one_unit_of_evidence() -> None:
    tie = pd.DataFrame({"winner": ["a"], "loser": ["b"], "tie": [1]})
    one = pd.DataFrame({"winner": ["a"], "loser": ["b"], "tie": [0]})
    counts = comparisons_from_pairwise(tie).count_matrix()
    assert counts.tolist() == [[0.0, 0.5], [0.5, 0.0]]
    scores = np.zeros(2)
    info_tie = bradley_terry_information(scores, counts + counts.T)
    single = comparisons_from_pairwise(one).count_matrix()
    info_one = bradley_terry_information(scores, single + single.T)
    np.testing.assert_allclose(info_tie, info_one)  # not twice


def _counted(frame: pd.DataFrame) -> pd.DataFrame:
    keys = ["query", "annotator", "winner", "loser", "tie"]
    return frame.groupby(keys, as_index=False).size().rename(columns={"size": "count"})


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"cluster": "annotators"},
        {"ties": "davidson"},
        {"tiering": "model"},
        {"tiering": "leader", "solver": "opt"},
    ],
)
def test_counted_rows_give_the_orl_of_expanded_rows(options: dict[str, str]) -> None:
    rng = np.random.default_rng(8)
    strengths, _ = tiered_strengths([2, 3, 2], 1.5)
    frames = []
    for k in range(4):
        part = simulate_round_robin(rng, strengths, 6, query=f"q{k}", n_annotators=3)
        part["tie"] = (rng.random(len(part)) < 0.2).astype(int)
        frames.append(part)
    expanded = pd.concat(frames, ignore_index=True)
    counted = _counted(expanded)
    assert counted["count"].max() > 1 and len(counted) < len(expanded)
    params = BuildParameters(source="pairwise", **options)  # type: ignore[arg-type]
    _, full = build_orls(expanded, params)
    _, compact = build_orls(counted, params)
    for query, orl in full.orls.items():
        other = compact.orls[query]
        assert orl.tiers == other.tiers
        assert orl.scores == pytest.approx(other.scores, abs=1e-9)
        assert [d.se for d in orl.decisions] == pytest.approx(
            [d.se for d in other.decisions], abs=1e-9
        )


def test_zero_counts_are_skipped_and_bad_counts_refused() -> None:
    frame = pd.DataFrame(
        {"query": "q", "winner": ["a", "b", "a"], "loser": ["b", "c", "c"], "count": [5, 4, 0]}
    )
    _, outcome = build_orls(frame, BuildParameters(source="pairwise", sig=0.0))
    assert outcome.orls["q"].tiers == [["a"], ["b"], ["c"]]
    from orlbuild.errors import BuildError

    with pytest.raises(BuildError, match="count must be a non-negative integer"):
        build_orls(frame.assign(count=[1.5, 1, 1]), BuildParameters(source="pairwise"))


def test_counted_bootstrap_draws_every_outcome() -> None:
    from orlbuild.builders.estimation.uncertainty import bootstrap_samples

    sizes = np.array([1000.0, 1.0, 1.0])
    seen: list[np.ndarray] = []

    def fit(weights: np.ndarray) -> np.ndarray:
        seen.append(weights)
        return np.zeros(2)

    bootstrap_samples(
        fit, np.arange(3), resamples=50, rng=np.random.default_rng(0), unit_sizes=sizes
    )
    totals = [w.sum() for w in seen]
    assert totals == [1002.0] * 50  # the 1,002 outcomes are drawn one by one
    assert 950 < np.mean([w[0] for w in seen]) < 1002


def test_an_implied_order_no_test_backs_is_not_stated() -> None:
    # The baseball case: Milwaukee beats Baltimore clearly, Cleveland sits just below
    # Milwaukee, and Cleveland-Baltimore is not separated. The max-t walk tested only
    # Milwaukee-Baltimore yet stated Cleveland > Baltimore.
    rows = {("MIL", "BAL"): (11, 2), ("MIL", "CLE"): (7, 6), ("CLE", "BAL"): (8, 5)}
    frame = pd.DataFrame(
        [
            {"query": "al", "winner": w, "loser": lo, "count": c}
            for (a, b), (wins, losses) in rows.items()
            for w, lo, c in ((a, b, wins), (b, a, losses))
        ]
    )
    # backed boundaries are simultaneous's (the default before issue 32)
    walk = build_orls(
        frame, BuildParameters(source="pairwise", reg=0.0, backed=False, tiering="simultaneous")
    )[1]
    backed = build_orls(frame, BuildParameters(source="pairwise", reg=0.0, tiering="simultaneous"))[
        1
    ]
    assert walk.orls["al"].tiers == [["MIL", "CLE"], ["BAL"]]  # states CLE > BAL
    orl = backed.orls["al"]
    assert orl.tiers == [["MIL", "CLE", "BAL"]]
    assert walk.orls["al"].unbacked_orders == 1 and orl.unbacked_orders == 0


def test_a_backed_boundary_records_its_weakest_crossing_pair() -> None:
    rng = np.random.default_rng(5)
    strengths, _ = tiered_strengths([3, 3], 3.0)
    frame = simulate_round_robin(rng, strengths, 12, query="q")
    params = BuildParameters(source="pairwise", tiering="simultaneous")
    orl = build_orls(frame, params)[1].orls["q"]
    assert [sorted(t) for t in orl.tiers] == [["d00", "d01", "d02"], ["d03", "d04", "d05"]]
    (boundary,) = [d for d in orl.decisions if d.decision == "separated"]
    assert boundary.crossing_pairs == 9 and boundary.unbacked_pairs == 0
    assert boundary.weakest_z is not None and boundary.weakest_critical is not None
    assert boundary.weakest_z > boundary.weakest_critical
    assert boundary.weakest_above in orl.tiers[0] and boundary.weakest_below in orl.tiers[1]
    assert orl.unbacked_orders == 0 and orl.stated_orders == 9


def test_a_query_with_one_item_compared_once_is_not_collapsed() -> None:
    # NASCAR: a driver with one race (a win) leads with a large standard error; no pair
    # with him is separated, which blocked every boundary of the other 8 items
    rng = np.random.default_rng(2)
    strengths, _ = tiered_strengths([4, 4], 3.0)
    frame = simulate_round_robin(rng, strengths, 10, query="q")
    once = pd.DataFrame(
        [{"query": "q", "annotator": "a0", "winner": "new", "loser": "d00", "tie": 0}]
    )
    frame = pd.concat([frame, once], ignore_index=True)
    params = BuildParameters(source="pairwise", tiering="simultaneous")
    orl = build_orls(frame, params)[1].orls["q"]
    assert orl.under_judged == ["new"]
    assert len(orl.tiers) == 2
    assert {"d00", "d01", "d02", "d03"} <= set(orl.tiers[0])
    assert {"d04", "d05", "d06", "d07"} <= set(orl.tiers[1])
    assert "new" in orl.tiers[0]  # placed by its estimate
    # its orders are not backed: every order it takes part in is counted
    assert orl.unbacked_orders == 4
    assert any("under-judged" in w for w in orl.warnings)


def test_under_judged_needs_three_items_and_a_far_worse_precision() -> None:
    assert not under_judged_items(np.array([[0.0, 5.0], [5.0, 0.0]])).any()
    even = np.full((5, 5), 0.4)
    np.fill_diagonal(even, 0.0)
    assert not under_judged_items(even).any()


def test_davidson_recovers_the_tie_parameter() -> None:
    rng = np.random.default_rng(4)
    n, nu = 6, 0.8
    s = np.linspace(1.0, -1.0, n)
    rows = []
    for i in range(n):
        for j in range(i + 1, n):
            pi, pj, mid = np.exp(s[i]), np.exp(s[j]), nu * np.exp((s[i] + s[j]) / 2)
            probs = np.array([pi, pj, mid]) / (pi + pj + mid)
            for outcome in rng.choice(3, size=400, p=probs):
                w, lo = (i, j) if outcome != 1 else (j, i)
                rows.append({"winner": f"d{w}", "loser": f"d{lo}", "tie": int(outcome == 2)})
    comparisons = comparisons_from_pairwise(pd.DataFrame(rows))
    wins, ties = davidson_counts(comparisons, None)
    fit = davidson_fit(wins, ties, alpha=0.0)
    assert fit.nu == pytest.approx(nu, rel=0.1)
    np.testing.assert_allclose(fit.scores, s - s.mean(), atol=0.1)
    orl = build_orls(
        pd.DataFrame(rows).assign(query="q"), BuildParameters(source="pairwise", ties="davidson")
    )[1].orls["q"]
    assert len(orl.tiers) >= 2


def _annotated(seed: int, reversed_annotators: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = []
    for k in range(30):
        strengths, _ = tiered_strengths([2, 2, 2], 1.5)
        frames.append(simulate_round_robin(rng, strengths, 6, query=f"q{k}", n_annotators=6))
    frame = pd.concat(frames, ignore_index=True)
    flip = frame["annotator"].isin([f"a{k}" for k in range(reversed_annotators)])
    frame.loc[flip, ["winner", "loser"]] = frame.loc[flip, ["loser", "winner"]].to_numpy()
    return frame


def test_reliability_recovers_a_reversed_annotator() -> None:
    frame = _annotated(11, reversed_annotators=1)
    from orlbuild.builders.build import _check_frame, pairwise_query_comparisons

    fit = fit_reliabilities(
        list(pairwise_query_comparisons(_check_frame(frame, "pairwise"))), reg=0.5
    )
    eta = dict(zip(fit.names, fit.eta, strict=True))
    assert eta["a0"] < 0.2  # reversed
    assert all(eta[f"a{k}"] > 0.8 for k in range(1, 6))
    record = next(r for r in fit.annotators if r.annotator == "a0")
    assert record.low <= record.reliability <= record.high < 0.5


def test_reliability_build_lists_annotators_and_their_flips() -> None:
    frame = _annotated(12, reversed_annotators=1)
    params, outcome = build_orls(
        frame, BuildParameters(source="pairwise", annotators="reliability")
    )
    assert params.annotators == "reliability"
    by_name = {r.annotator: r for r in outcome.reliabilities}
    assert set(by_name) == {f"a{k}" for k in range(6)}
    assert all(r.flips is not None and r.flips >= 0 for r in by_name.values())
    assert by_name["a0"].reliability < 0.5
