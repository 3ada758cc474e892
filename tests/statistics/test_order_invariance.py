"""For a fixed seed, no p-value, verdict or rank interval depends on the order of the
systems or the queries (docs/comparing-systems.md, "Comparing many systems")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scoring.settings import TestSettings
from scoring.statistics import as_panel, power_analysis, system_comparison
from scoring.vocabulary import SignificanceTest


def _panel(seed: int, n_systems: int = 5, n_queries: int = 25) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    effects = rng.normal(0.0, 0.05, n_systems)
    scores = (
        rng.uniform(0.2, 0.8, (n_queries, 1)) + effects + rng.normal(0, 0.1, (n_queries, n_systems))
    )
    return pd.DataFrame(
        scores,
        columns=[f"sys{k}" for k in range(n_systems)],
        index=pd.Index([f"q{k}" for k in range(n_queries)], name="query"),
    )


def _by_pair(pairs: pd.DataFrame) -> dict[frozenset[str], tuple[float, float, bool]]:
    return {
        frozenset((row.a, row.b)): (row.p_value, row.p_adjusted, bool(row.significant))
        for row in pairs.itertuples()
    }


def _reordered(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return frame.iloc[rng.permutation(len(frame)), rng.permutation(frame.shape[1])]


@pytest.mark.parametrize("test", [t.value for t in SignificanceTest])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_permuting_systems_and_queries_changes_no_p_value(test: str, seed: int) -> None:
    frame = _panel(seed)
    settings = TestSettings(test=SignificanceTest(test), permutations=400, seed=7)
    base = system_comparison(frame, settings)
    base_ranks = base.ranks.set_index("system")[["rank_lo", "rank_hi"]].sort_index()
    for order_seed in range(4):
        other = system_comparison(_reordered(frame, 100 * seed + order_seed), settings)
        assert _by_pair(other.pairs) == _by_pair(base.pairs)
        ranks = other.ranks.set_index("system")[["rank_lo", "rank_hi"]].sort_index()
        pd.testing.assert_frame_equal(ranks, base_ranks)


def test_the_pairs_keep_the_given_orientation() -> None:
    frame = _panel(3, n_systems=3)
    reordered = frame[["sys2", "sys0", "sys1"]]
    pairs = system_comparison(reordered, TestSettings(permutations=200)).pairs
    assert list(zip(pairs["a"], pairs["b"], strict=True)) == [
        ("sys2", "sys0"),
        ("sys2", "sys1"),
        ("sys0", "sys1"),
    ]
    assert np.allclose(pairs["diff"], pairs["mean_a"] - pairs["mean_b"])


def test_power_does_not_depend_on_the_order() -> None:
    frame = _panel(4, n_systems=4, n_queries=30)
    kwargs = {"budgets": [10, 20], "subsamples": 20, "permutations": 200, "seed": 3}
    base = power_analysis(frame, **kwargs)
    other = power_analysis(_reordered(frame, 9), **kwargs)
    assert base.pairs == other.pairs
    np.testing.assert_array_equal(base.full_pvalues, other.full_pvalues)
    np.testing.assert_array_equal(base.pair_power, other.pair_power)
    np.testing.assert_array_equal(base.taus, other.taus)


def test_the_canonical_panel_is_sorted_and_the_same_data() -> None:
    frame = _reordered(_panel(5), 11)
    panel = as_panel(frame)
    canon = panel.canonical()
    assert list(canon.systems) == sorted(panel.systems)
    assert list(canon.queries) == sorted(panel.queries)
    assert canon.canonical() is canon
    back = pd.DataFrame(canon.scores, index=list(canon.queries), columns=list(canon.systems))
    pd.testing.assert_frame_equal(
        back.loc[list(panel.queries), list(panel.systems)],
        pd.DataFrame(panel.scores, index=list(panel.queries), columns=list(panel.systems)),
    )
