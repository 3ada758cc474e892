"""The comparison graph of a query: components (SciPy), lone items, cycles (networkx).

Items in different connected components cannot be ordered against each other
(docs/tiers-and-audit.md, "Build routes"); cycles of the majority-preference graph are listed
by the quality report, never hidden.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.sparse import coo_array
from scipy.sparse.csgraph import connected_components

from orlbuild.builders.pairwise_data import PairwiseComparisons

__all__ = [
    "comparison_components",
    "majority_preference_cycles",
    "never_compared_items",
]


def comparison_components(comparisons: PairwiseComparisons) -> list[npt.NDArray[np.int64]]:
    """Connected components of the undirected comparison graph.

    Parameters
    ----------
    comparisons
        The query's comparisons; every item is a node, even when never compared.

    Returns
    -------
    list of numpy.ndarray
        Local item indices of each component, sorted; components ordered by
        size (largest first), then by their smallest item id.
    """
    n = comparisons.n_items
    low = np.minimum(comparisons.winners, comparisons.losers)
    high = np.maximum(comparisons.winners, comparisons.losers)
    pairs = np.unique(low * n + high)  # one edge per compared pair (no summed duplicates)
    edges = coo_array((np.ones(len(pairs)), (pairs // n, pairs % n)), shape=(n, n))
    # members sorted, components ordered by a total key below: scipy's labels do not show
    count, labels = connected_components(edges, directed=True, connection="weak")
    order = np.argsort(labels, kind="stable")
    bounds = np.cumsum(np.bincount(labels, minlength=count))[:-1]
    parts = [part.astype(np.int64) for part in np.split(order, bounds)]
    parts.sort(key=lambda part: (-len(part), str(comparisons.items[part[0]])))
    return parts


def never_compared_items(comparisons: PairwiseComparisons) -> list[str]:
    """Items that appear in no comparison (an error for their query)."""
    seen = np.zeros(comparisons.n_items, dtype=bool)
    seen[comparisons.winners] = True
    seen[comparisons.losers] = True
    return [str(item) for item in comparisons.items[~seen]]


def majority_preference_cycles(
    comparisons: PairwiseComparisons, *, limit: int = 100
) -> list[list[str]]:
    """Cycles of the majority-preference graph.

    There is an edge ``a -> b`` when ``a`` beat ``b`` strictly more often than
    ``b`` beat ``a`` (ties, entered once each way, cancel out).

    Parameters
    ----------
    comparisons
        The query's comparisons.
    limit
        Stop after this many cycles (the number of cycles can explode).

    Returns
    -------
    list of list of str
        The shortest cycles - every cycle of the smallest length that has
        any, at most ``limit`` - each as its items starting from its smallest
        item id, sorted.
    """
    import networkx as nx  # on demand: the quality report's alone, not every build's

    counts = comparisons.count_matrix()
    wins, losses = np.nonzero(counts > counts.T)
    graph = nx.DiGraph()
    graph.add_edges_from(
        (str(comparisons.items[a]), str(comparisons.items[b]))
        for a, b in zip(wins.tolist(), losses.tolist(), strict=True)
    )
    # Shortest cycles first: a near-tournament has astronomically many long cycles,
    # but every intransitivity shows up in the shortest ones (3-cycles in a tournament).
    for bound in range(3, graph.number_of_nodes() + 1):
        cycles = []
        for cycle in nx.simple_cycles(graph, length_bound=bound):
            start = cycle.index(min(cycle))
            cycles.append(cycle[start:] + cycle[:start])
            if len(cycles) >= limit:
                break
        if cycles:
            return sorted(cycles, key=lambda c: (len(c), c))
    return []
