"""Edge cases of the pairwise and listwise routes; explicit per-query failures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from orlbuild.builders import BuildParameters, QueryBuildError, build_orls
from orlbuild.errors import BuildError, ConfigError


def pairwise(*rows: tuple[str, str] | tuple[str, str, int], query: str = "q") -> pd.DataFrame:
    records = [
        {
            "query": query,
            "annotator": "a",
            "winner": r[0],
            "loser": r[1],
            "tie": r[2] if len(r) > 2 else 0,
        }
        for r in rows
    ]
    return pd.DataFrame(records)


def tiers(frame: pd.DataFrame, **options: object) -> list[list[str]]:
    params = BuildParameters(source=options.pop("source", "pairwise"), **options)  # type: ignore[arg-type]
    _, outcome = build_orls(frame, params)
    (orl,) = outcome.orls.values()
    assert all(np.isfinite(s) for s in orl.scores.values())
    return orl.tiers


@pytest.mark.parametrize("method", ["direct", "bt", "plackett-luce", "borda"])
def test_single_item_query(method: str) -> None:
    # pairwise rows always name two items; a single item arises from a one-item list
    frame = pd.DataFrame({"query": ["q"], "annotator": ["a"], "item": ["d1"], "rank": [1]})
    assert tiers(frame, source="listwise", method=method) == [["d1"]]


def test_two_items_clear_and_unclear() -> None:
    # simultaneous: the default before issue 32 (posterior fits its prior over the build's
    # queries, and one query of two items cannot teach it that 20-0 is a boundary)
    assert tiers(pairwise(*[("a", "b")] * 20), tiering="simultaneous") == [["a"], ["b"]]
    assert tiers(pairwise(("a", "b"), ("b", "a"))) == [["a", "b"]]


@pytest.mark.parametrize("tiering", ["leader", "model"])
@pytest.mark.parametrize("method", ["bt", "rank-centrality"])
def test_item_that_never_wins_or_never_loses(method: str, tiering: str) -> None:
    # (issue 10: the default became `simultaneous`, which at 5 comparisons per pair
    # ties `top` with a, b, c under bt; the boundary handling is what is tested here)
    rows = [("a", "b"), ("b", "a"), ("a", "c"), ("c", "a"), ("b", "c"), ("c", "b")] * 5
    rows += [("a", "z"), ("b", "z"), ("c", "z")] * 5  # z never wins
    rows += [("top", "a"), ("top", "b"), ("top", "c")] * 5  # top never loses
    built = tiers(pairwise(*rows), method=method, tiering=tiering)
    assert built[0] == ["top"]
    assert built[-1] == ["z"]
    assert sorted(built[1]) == ["a", "b", "c"]


@pytest.mark.parametrize("solver", ["ilsr", "mm"])
def test_never_winning_item_without_regularisation_fails_naming_the_query(solver: str) -> None:
    frame = pairwise(("a", "b"), ("b", "a"), ("a", "z"), ("b", "z"), query="q7")
    with pytest.raises(QueryBuildError, match=r"query 'q7': .*--reg > 0"):
        build_orls(frame, BuildParameters(source="pairwise", reg=0.0, solver=solver))


def test_tie_only_query_is_one_tier() -> None:
    built = tiers(pairwise(("a", "b", 1), ("b", "c", 1), ("c", "a", 1)))
    assert built == [["a", "b", "c"]]


def test_three_cycle_is_one_tier_by_exact_score_tie() -> None:
    frame = pairwise(("a", "b"), ("b", "c"), ("c", "a"))
    _, outcome = build_orls(frame, BuildParameters(source="pairwise", sig=0.0))
    orl = outcome.orls["q"]
    assert orl.tiers == [["a", "b", "c"]]
    assert {d.rule for d in orl.decisions} == {"exact score tie"}


def test_disconnected_graph_fails_listing_components_or_orders_them_separately() -> None:
    frame = pairwise(*[("a", "b")] * 15, *[("c", "d"), ("c", "e")] * 15, ("d", "e"), ("e", "d"))
    with pytest.raises(
        QueryBuildError, match=r"disconnected into 2 components \(c, d, e \| a, b\)"
    ):
        build_orls(frame, BuildParameters(source="pairwise"))
    params = BuildParameters(source="pairwise", disconnected="tiers", tiering="simultaneous")
    _, outcome = build_orls(frame, params)
    orl = outcome.orls["q"]
    assert orl.components == [["c", "d", "e"], ["a", "b"]]
    assert orl.tiers == [["a", "c"], ["b", "d", "e"]]
    assert all("component" in d.rule for d in orl.decisions)
    assert any("2 components" in w for w in outcome.warnings)


def test_failures_are_collected_with_skip_and_stop_the_build_by_default() -> None:
    good = pairwise(("a", "b"), ("b", "a"), query="good")
    bad1 = pairwise(("a", "b"), ("c", "d"), query="bad1")
    bad2 = pairwise(("x", "y"), ("z", "w"), query="bad2")
    frame = pd.concat([good, bad1, bad2])
    with pytest.raises(BuildError, match=r"2 queries failed: query 'bad1': .*query 'bad2': "):
        build_orls(frame, BuildParameters(source="pairwise"))
    _, outcome = build_orls(frame, BuildParameters(source="pairwise"), on_error="skip")
    assert list(outcome.orls) == ["good"]
    assert [f.query for f in outcome.failures] == ["bad1", "bad2"]


LISTS = pd.DataFrame(
    [("q", "a1", d, r) for r, d in enumerate(["d1", "d2", "d3", "d4", "d5"], start=1)]
    + [("q", "a2", d, r) for r, d in enumerate(["d2", "d1", "d3"], start=1)]
    + [("q", "a3", d, r) for r, d in enumerate(["d1", "d3", "d5", "d4"], start=1)]
    + [("q", "a4", d, r) for r, d in enumerate(["d1", "d2"], start=1)],
    columns=["query", "annotator", "item", "rank"],
)


@pytest.mark.parametrize("method", ["bt", "plackett-luce", "borda"])
def test_listwise_lists_of_different_lengths(method: str) -> None:
    _, outcome = build_orls(LISTS, BuildParameters(source="listwise", method=method, sig=0.0))
    orl = outcome.orls["q"]
    order = [i for tier in orl.tiers for i in tier]
    assert sorted(order) == ["d1", "d2", "d3", "d4", "d5"]
    assert order[0] == "d1"
    assert order.index("d3") < order.index("d5")


def test_listwise_default_method_depends_on_lists_per_query() -> None:
    single = LISTS[LISTS["annotator"] == "a1"]
    params, outcome = build_orls(single, BuildParameters(source="listwise"))
    assert params.method == "direct"
    assert outcome.orls["q"].tiers == [["d1"], ["d2"], ["d3"], ["d4"], ["d5"]]
    params, outcome = build_orls(LISTS, BuildParameters(source="listwise"))
    assert params.method == "bt"
    # issue 10: lists expanded into pairs are clustered by annotator by default ...
    assert params.cluster == "annotators"
    assert {d.variance for d in outcome.orls["q"].decisions} == {"sandwich(annotators)"}
    # ... and asking for independent pairs still warns
    _, outcome = build_orls(LISTS, BuildParameters(source="listwise", cluster="none"))
    assert any("--cluster annotators" in w for w in outcome.warnings)
    with pytest.raises(ConfigError, match="'q' have several"):
        build_orls(LISTS, BuildParameters(source="listwise", method="direct"))


def test_direct_keeps_annotator_tiers_with_decisions() -> None:
    frame = pd.DataFrame(
        {"query": "q", "annotator": "a", "item": ["x", "y", "z"], "rank": [1, 1, 2]}
    )
    _, outcome = build_orls(frame, BuildParameters(source="listwise"))
    orl = outcome.orls["q"]
    assert orl.tiers == [["x", "y"], ["z"]]
    assert [d.rule for d in orl.decisions] == ["same annotator tier", "lower annotator tier"]


@pytest.mark.parametrize(
    ("last_item", "method", "error"),
    [
        # "w" stands only in a list that ties it with everything: no comparison names it
        ("w", "bt", "never compared: w"),
        ("y", "plackett-luce", "annotator 'b' ties items at rank 1"),
    ],
)
def test_tied_lists_are_refused_naming_the_cause(last_item: str, method: str, error: str) -> None:
    frame = pd.DataFrame(
        [("q", "a", "x", 1), ("q", "a", "y", 2), ("q", "b", "x", 1), ("q", "b", last_item, 1)],
        columns=["query", "annotator", "item", "rank"],
    )
    with pytest.raises(QueryBuildError, match=error):
        build_orls(frame, BuildParameters(source="listwise", method=method))


def test_bootstrap_resample_that_drops_an_items_only_comparison_still_fits() -> None:
    # "lone" has a single comparison, so about a third of the resamples lose it entirely
    rows = [("a", "b"), ("b", "c"), ("c", "a"), ("a", "c")] * 5 + [("lone", "a")]
    for method in ("bt", "rank-centrality"):
        _, outcome = build_orls(
            pairwise(*rows),
            BuildParameters(
                source="pairwise", method=method, uncertainty="bootstrap", bootstrap=50
            ),
        )
        assert sorted(i for t in outcome.orls["q"].tiers for i in t) == ["a", "b", "c", "lone"]


def test_opt_solver_result_that_is_not_stationary_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from orlbuild.builders.estimation import bradley_terry

    monkeypatch.setattr(
        bradley_terry.choix, "opt_pairwise", lambda *args, **kwargs: np.array([3.0, -3.0])
    )
    frame = pairwise(("a", "b"), ("b", "a"), query="q3")
    with pytest.raises(
        QueryBuildError, match=r"query 'q3': Bradley-Terry \(opt\) did not converge"
    ):
        build_orls(frame, BuildParameters(source="pairwise", solver="opt"))


@pytest.mark.parametrize("method", ["bt", "plackett-luce", "borda"])
def test_listwise_disconnected_components_are_ordered_separately(method: str) -> None:
    frame = pd.DataFrame(
        [("q", a, d, r) for a in ("a1", "a2", "a3") for r, d in enumerate(["x1", "x2"], 1)]
        + [("q", a, d, r) for a in ("b1", "b2", "b3") for r, d in enumerate(["y1", "y2"], 1)],
        columns=["query", "annotator", "item", "rank"],
    )
    with pytest.raises(QueryBuildError, match="disconnected into 2 components"):
        build_orls(frame, BuildParameters(source="listwise", method=method))
    params = BuildParameters(source="listwise", method=method, sig=0.0, disconnected="tiers")
    orl = build_orls(frame, params)[1].orls["q"]
    assert orl.tiers == [["x1", "y1"], ["x2", "y2"]]
