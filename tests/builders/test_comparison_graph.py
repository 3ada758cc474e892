"""Components of the comparison graph: the SciPy version gives networkx's components, in order."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from orlbuild.builders.comparison_graph import comparison_components
from orlbuild.builders.pairwise_data import PairwiseComparisons


def _networkx_components(comparisons: PairwiseComparisons) -> list[np.ndarray]:
    """The networkx implementation of earlier builds (the reference)."""
    graph = nx.Graph()
    graph.add_nodes_from(range(comparisons.n_items))
    n = comparisons.n_items
    low = np.minimum(comparisons.winners, comparisons.losers)
    high = np.maximum(comparisons.winners, comparisons.losers)
    pairs = np.unique(low * n + high)
    graph.add_edges_from(zip((pairs // n).tolist(), (pairs % n).tolist(), strict=True))
    parts = [np.array(sorted(part), dtype=np.int64) for part in nx.connected_components(graph)]
    parts.sort(key=lambda part: (-len(part), str(comparisons.items[part[0]])))
    return parts


def _comparisons(items: list[str], winners: list[int], losers: list[int]) -> PairwiseComparisons:
    m = len(winners)
    return PairwiseComparisons(
        items=np.array(items, dtype=object),
        winners=np.array(winners, dtype=np.int64),
        losers=np.array(losers, dtype=np.int64),
        units=np.arange(m, dtype=np.int64),
        annotators=np.zeros(m, dtype=np.int64),
        annotator_names=np.array(["a"], dtype=object),
    )


@pytest.mark.parametrize("seed", range(40))
def test_components_match_networkx(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    m = int(rng.integers(0, 2 * n + 1))
    # ids whose string order differs from the local order, so the tie-break on ids matters
    items = [f"d{int(v)}" for v in rng.permutation(1000)[:n]]
    winners = rng.integers(0, n, size=m).tolist()
    losers = rng.integers(0, n, size=m).tolist()
    c = _comparisons(items, winners, losers)
    got = comparison_components(c)
    want = _networkx_components(c)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.int64
        np.testing.assert_array_equal(g, w)


def test_components_order_and_repeated_pairs() -> None:
    # 300 repeats of one pair (no overflow of summed duplicates), equal sizes ordered by id
    c = _comparisons(["z", "y", "b", "a", "c"], [0] * 300 + [3], [1] * 300 + [2])
    got = [p.tolist() for p in comparison_components(c)]
    assert got == [[2, 3], [0, 1], [4]]


def test_build_path_does_not_import_networkx() -> None:
    import subprocess
    import sys

    code = (
        "import sys, orlbuild.builders.tiering.query_orl; "
        "import orlbuild.builders.estimation.rank_centrality; "
        "print('networkx' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
