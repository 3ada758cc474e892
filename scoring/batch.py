"""Vectorised inputs for evaluating many queries at once.

:func:`prepare_batch` joins every query's candidate list with its ORL in a
handful of NumPy operations and lays the result out as ``(queries x k)``
matrices; each measure's ``batch`` method then reduces those matrices along
the position axis. The per-query functions in :mod:`scoring.rdq` and
:mod:`scoring.baselines` are the readable reference; the tests check that the
two agree on random data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain

import numpy as np
import pandas as pd

from scoring.errors import ScoringError
from scoring.orl import ORL

__all__ = ["BatchData", "FlatRun", "flatten_rankings", "prepare_batch"]


@dataclass(frozen=True)
class FlatRun:
    """All candidate lists of a run, concatenated in rank order.

    Attributes
    ----------
    queries
        Query ids, one per candidate list (object array).
    offsets
        ``items[offsets[j]:offsets[j + 1]]`` is the list of ``queries[j]``.
    items
        Item ids of every list, best first within each query (object array).
    """

    queries: np.ndarray
    offsets: np.ndarray
    items: np.ndarray

    def to_dict(self) -> dict[str, list[str]]:
        """``{query: [items best first]}``."""
        return {
            str(q): self.items[self.offsets[j] : self.offsets[j + 1]].tolist()
            for j, q in enumerate(self.queries)
        }


def flatten_rankings(run: Mapping[str, Sequence[str]], depth: int | None = None) -> FlatRun:
    """Concatenate ``{query: ranked items}``, keeping at most ``depth`` items per query."""
    queries = list(run)
    lists = [run[q] if depth is None else run[q][:depth] for q in queries]
    lengths = np.fromiter((len(x) for x in lists), dtype=np.int64, count=len(lists))
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    items = np.empty(int(offsets[-1]), dtype=object)
    items[:] = list(chain.from_iterable(lists))
    qarr = np.empty(len(queries), dtype=object)
    qarr[:] = queries
    return FlatRun(qarr, offsets, items)


@dataclass(frozen=True)
class BatchData:
    """Candidate lists of ``Q`` queries joined with their ORLs, as matrices.

    Row ``j`` of every ``(Q, depth)`` matrix is query ``queries[j]``; column
    ``i`` is output position ``i + 1``.

    Attributes
    ----------
    queries
        Query ids (the rows).
    depth
        Number of positions laid out (the largest cutoff needed).
    ranks
        ORL rank of the item at each position when it can earn credit (a first
        occurrence of an ORL item), else 0.
    filled
        Whether the candidate has an item at that position.
    in_orl
        Whether the item at that position is in the ORL (repeats included).
    ideal_ranks
        ``g*`` (RDQ.md section 3) per position.
    n_ref, n_tiers
        ``|R|`` and ``T`` per query.
    grades
        Native grade of the credited item per position (NaN-free; 0 elsewhere),
        or ``None`` when some ORL has no native grades.
    ideal_native
        Native grades sorted descending per query (0-padded), or ``None``.
    cmp_entry
        For CMP: the depth ``d`` at which the credited item at each position
        enters ``run[:d] & ideal[:d]`` (``depth + 1`` for no credit).
    orls, rankings
        The inputs, for the few measures evaluated query by query.
    """

    queries: list[str]
    depth: int
    ranks: np.ndarray
    filled: np.ndarray
    in_orl: np.ndarray
    ideal_ranks: np.ndarray
    n_ref: np.ndarray
    n_tiers: np.ndarray
    grades: np.ndarray | None
    ideal_native: np.ndarray | None
    cmp_entry: np.ndarray
    orls: Sequence[ORL] = field(repr=False)
    rankings: FlatRun = field(repr=False)

    @cached_property
    def positions(self) -> np.ndarray:
        """``1..depth`` as float64 (broadcasts against the matrices)."""
        return np.arange(1, self.depth + 1, dtype=np.float64)

    def ranking_of(self, row: int) -> list[str]:
        """The candidate list of row ``row`` (truncated at ``depth``)."""
        lo, hi = self.rankings.offsets[row], self.rankings.offsets[row + 1]
        return self.rankings.items[lo:hi].tolist()


def _scatter(
    rows: np.ndarray,
    cols: np.ndarray,
    values: np.ndarray | bool,
    shape: tuple[int, int],
    dtype: type,
) -> np.ndarray:
    """A dense matrix with ``values`` at ``(rows, cols)`` and zeros elsewhere."""
    out: np.ndarray = np.zeros(shape, dtype=dtype)
    out[rows, cols] = values
    return out


def prepare_batch(orls: Sequence[ORL], queries: list[str], run: FlatRun, depth: int) -> BatchData:
    """Join candidate lists with ORLs and lay them out as ``(Q, depth)`` matrices.

    Parameters
    ----------
    orls
        One ORL per row, in the same order as ``queries``.
    queries
        The row labels.
    run
        Candidate lists aligned with ``queries``: ``run.queries[j] == queries[j]``
        (an empty list for a query without one), already truncated at ``depth``.
    depth
        Number of positions to lay out (at least 1).
    """
    n_q = len(queries)
    if len(run.queries) != n_q:
        raise ScoringError("internal: run rows are not aligned with the ORL rows")
    shape = (n_q, depth)

    # ORLs, flattened: one entry per (query, item), sorted by (row, rank).
    orl_sizes = np.fromiter((len(o) for o in orls), dtype=np.int64, count=n_q)
    orl_rows = np.repeat(np.arange(n_q), orl_sizes)
    orl_items = np.empty(int(orl_sizes.sum()), dtype=object)
    orl_items[:] = list(chain.from_iterable(o.keys() for o in orls))
    orl_ranks = np.fromiter(
        chain.from_iterable(o.values() for o in orls), dtype=np.int64, count=len(orl_items)
    )
    n_tiers = np.fromiter((o.n_tiers for o in orls), dtype=np.int64, count=n_q)

    # Candidates, flattened with their positions.
    lengths = np.diff(run.offsets)
    run_rows = np.repeat(np.arange(n_q), lengths)
    run_pos = np.arange(len(run.items)) - np.repeat(run.offsets[:-1], lengths)

    # Join on (row, item) through integer keys.
    codes, uniques = pd.factorize(np.concatenate([orl_items, run.items]))
    n_codes = max(len(uniques), 1)
    orl_keys = orl_rows * n_codes + codes[: len(orl_items)]
    run_keys = run_rows * n_codes + codes[len(orl_items) :]
    order = np.argsort(orl_keys, kind="stable")
    sorted_keys = orl_keys[order]
    where = np.searchsorted(sorted_keys, run_keys)
    where_clipped = np.minimum(where, max(len(sorted_keys) - 1, 0))
    found = (
        (where < len(sorted_keys)) & (sorted_keys[where_clipped] == run_keys)
        if len(sorted_keys)
        else np.zeros(len(run_keys), dtype=bool)
    )
    match = order[where_clipped]

    first = np.zeros(len(run_keys), dtype=bool)
    if len(run_keys):
        _, first_index = np.unique(run_keys, return_index=True)
        first[first_index] = True
    credited = found & first

    filled = _scatter(run_rows, run_pos, True, shape, bool)
    in_orl = _scatter(run_rows[found], run_pos[found], True, shape, bool)
    c_rows, c_pos = run_rows[credited], run_pos[credited]
    c_ranks = orl_ranks[match[credited]]
    ranks = _scatter(c_rows, c_pos, c_ranks, shape, np.int64)

    # g*: each query's sorted ranks, then T+1, T+2, ...
    by_rank = np.lexsort((orl_ranks, orl_rows))
    sorted_rows, sorted_ranks = orl_rows[by_rank], orl_ranks[by_rank]
    orl_starts = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(orl_sizes, out=orl_starts[1:])
    slot = np.arange(len(sorted_rows)) - orl_starts[sorted_rows]
    beyond = np.arange(1, depth + 1)[None, :] - orl_sizes[:, None]
    ideal_ranks = n_tiers[:, None] + beyond
    keep = slot < depth
    ideal_ranks[sorted_rows[keep], slot[keep]] = sorted_ranks[keep]

    # CMP entry depth: the credited item at position i sits in the ideal list at
    # (items ranked better) + (earlier credited items of its tier) + 1.
    tier_base = int(n_tiers.max(initial=0)) + 2
    tier_keys = sorted_rows * tier_base + sorted_ranks
    c_keys = c_rows * tier_base + c_ranks
    better = np.searchsorted(tier_keys, c_keys, side="left") - orl_starts[c_rows]
    grouped = np.argsort(c_keys, kind="stable")
    g_keys = c_keys[grouped]
    group_start = np.searchsorted(g_keys, g_keys, side="left")
    earlier = np.empty_like(grouped)
    earlier[grouped] = np.arange(len(grouped)) - group_start
    ideal_pos = better + earlier + 1
    cmp_entry = np.full(shape, depth + 1, dtype=np.int64)
    cmp_entry[c_rows, c_pos] = np.maximum(c_pos + 1, ideal_pos)

    grades = ideal_native = None
    if n_q and all(o.grades is not None for o in orls):
        orl_native = np.fromiter(
            chain.from_iterable(o.grades.values() for o in orls if o.grades is not None),
            dtype=np.float64,
            count=len(orl_items),
        )
        grades = _scatter(c_rows, c_pos, orl_native[match[credited]], shape, np.float64)
        by_grade = np.lexsort((-orl_native, orl_rows))
        g_slot = np.arange(len(by_grade)) - orl_starts[orl_rows[by_grade]]
        g_keep = g_slot < depth
        ideal_native = _scatter(
            orl_rows[by_grade][g_keep],
            g_slot[g_keep],
            orl_native[by_grade][g_keep],
            shape,
            np.float64,
        )

    return BatchData(
        queries=queries,
        depth=depth,
        ranks=ranks,
        filled=filled,
        in_orl=in_orl,
        ideal_ranks=ideal_ranks,
        n_ref=orl_sizes,
        n_tiers=n_tiers,
        grades=grades,
        ideal_native=ideal_native,
        cmp_entry=cmp_entry,
        orls=orls,
        rankings=run,
    )
