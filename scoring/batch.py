"""Vectorised inputs for evaluating many queries at once.

:func:`prepare_batch` joins every query's candidate list with its ORL in a
handful of NumPy operations and lays the result out as ``(queries x k)``
matrices; each measure's ``batch`` method then reduces those matrices along
the position axis. The per-query functions in :mod:`scoring.rank_deviation` and
:mod:`scoring.baselines` are the readable reference; the tests check that the
two agree on random data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from typing import Any

import numpy as np

from scoring.errors import ScoringError
from scoring.orl import ORL, ItemCodes

__all__ = ["BatchData", "FlatRun", "IdTable", "flatten_rankings", "id_strings", "prepare_batch"]


class IdTable:
    """Distinct ids kept as their bytes; Python strings are made only for the ids read.

    The byte reader of ``orlbuild eval`` codes a run's items into such a table
    (docs/performance.md, "Speed of `orlbuild eval`"): scoring on codes reads
    no id, ordering tied rows compares the bytes of their ids, and the
    600,000 strings of a long-id run are made only if something asks for them.
    Indexing gives what indexing the object array of the same strings gives.

    Parameters
    ----------
    ids
        Fixed-width bytes (NumPy ``S`` dtype): ASCII, non-empty, without
        whitespace or NUL, zero-padded.
    """

    __slots__ = ("_bytes", "_strings")

    def __init__(self, ids: np.ndarray) -> None:
        self._bytes = ids
        self._strings: np.ndarray | None = None

    @property
    def bytes(self) -> np.ndarray:
        """The ids as fixed-width bytes (byte order is ``strcmp``'s and ``str``'s order)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._bytes)

    def __getitem__(self, key: Any) -> Any:
        if self._strings is not None:
            return self._strings[key]
        if isinstance(key, (int, np.integer)):
            return self._bytes[key].decode("ascii")
        return _fixed_strings(self._bytes[key])

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        strings = self.strings()
        return strings if dtype is None else strings.astype(dtype)

    def strings(self) -> np.ndarray:
        """Every id as a ``str`` (object array), made once."""
        if self._strings is None:
            self._strings = _fixed_strings(self._bytes)
        return self._strings

    def tolist(self) -> list[str]:
        """Every id as a ``str``."""
        return self.strings().tolist()


def _fixed_strings(ids: np.ndarray) -> np.ndarray:
    """Fixed-width bytes (non-empty, no whitespace) as an object array of ``str``.

    Their bytes, each padded with at least one zero, the zeros made spaces,
    decoded in one call and split on whitespace in C.
    """
    ids = np.ascontiguousarray(ids)
    width = ids.dtype.itemsize
    out = np.empty(len(ids), dtype=object)
    if not len(ids):
        return out
    table = np.zeros((len(ids), width + 1), dtype=np.uint8)
    table[:, :width] = ids.view(np.uint8).reshape(len(ids), width)
    np.maximum(table, 0x20, out=table)
    out[:] = str(table.data, "ascii").split()
    return out


def id_strings(table: np.ndarray | IdTable, codes: np.ndarray) -> np.ndarray:
    """``table[codes]`` as an object array of strings (``table``: an array, or an IdTable)."""
    return np.asarray(table[codes], dtype=object)


@dataclass(frozen=True, init=False)
class FlatRun:
    """All candidate lists of a run, concatenated in rank order.

    Attributes
    ----------
    queries
        Query ids, one per candidate list (object array).
    offsets
        ``items[offsets[j]:offsets[j + 1]]`` is the list of ``queries[j]``.
    items
        Item ids of every list, best first within each query (object array);
        given, or made from ``table[codes]`` when first read.
    codes, table
        Optionally, each of ``items`` as its index into ``table`` (distinct
        ids: an object array or an :class:`IdTable`): an ORL coded against the
        same table object (:class:`scoring.orl.ItemCodes`) is joined with the
        run on integers.
    """

    queries: np.ndarray
    offsets: np.ndarray
    codes: np.ndarray | None = field(repr=False)
    table: Any = field(repr=False)
    _items: np.ndarray | None = field(repr=False)

    def __init__(
        self,
        queries: np.ndarray,
        offsets: np.ndarray,
        items: np.ndarray | None = None,
        codes: np.ndarray | None = None,
        table: np.ndarray | IdTable | None = None,
    ) -> None:
        if items is None and (codes is None or table is None):
            raise TypeError("FlatRun needs items, or codes and their table")
        put = object.__setattr__  # frozen
        put(self, "queries", queries)
        put(self, "offsets", offsets)
        put(self, "codes", codes)
        put(self, "table", table)
        put(self, "_items", items)

    @property
    def items(self) -> np.ndarray:
        """Item ids of every list, best first within each query (object array)."""
        if self._items is None:
            assert self.codes is not None and self.table is not None
            object.__setattr__(self, "_items", id_strings(self.table, self.codes))
        assert self._items is not None
        return self._items

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
    ``i`` is output position ``i + 1``. Matrices that only some measures need
    are computed on first use.

    Attributes
    ----------
    queries
        Query ids (the rows).
    depth
        Number of positions laid out (the largest cutoff needed).
    ranks
        ORL rank of the item at each position when it can earn credit (a first
        occurrence of an ORL item), else 0.
    lengths
        Candidate length per query (after truncation at ``depth``).
    n_ref, n_tiers
        ``|R|`` and ``T`` per query.
    orls, rankings
        The inputs, for the few measures evaluated query by query.
    """

    queries: list[str]
    depth: int
    ranks: np.ndarray
    lengths: np.ndarray
    n_ref: np.ndarray
    n_tiers: np.ndarray
    orls: Sequence[ORL] = field(repr=False)
    rankings: FlatRun = field(repr=False)
    _join: _Join = field(repr=False)
    _coded: bool = field(default=False, repr=False)  # ORLs and run share one id table

    @property
    def shape(self) -> tuple[int, int]:
        """``(Q, depth)``."""
        return (len(self.queries), self.depth)

    @cached_property
    def positions(self) -> np.ndarray:
        """``1..depth`` as float64 (broadcasts against the matrices)."""
        return np.arange(1, self.depth + 1, dtype=np.float64)

    @cached_property
    def filled(self) -> np.ndarray:
        """Whether the candidate has an item at each position."""
        return np.arange(self.depth)[None, :] < self.lengths[:, None]

    @cached_property
    def in_orl(self) -> np.ndarray:
        """Whether the item at each position is in the ORL (repeats included)."""
        j = self._join
        return _scatter(j.rows, j.pos, True, self.shape, bool)

    @cached_property
    def n_nonrelevant(self) -> np.ndarray:
        """Per query, how many items were judged not relevant (:attr:`ORL.nonrelevant`)."""
        if self._coded:  # without building the ORLs' sets
            sizes = (len(_item_codes(o).nonrelevant) for o in self.orls)
        else:
            sizes = (len(o.nonrelevant) for o in self.orls)
        return np.fromiter(sizes, dtype=np.int64, count=len(self.orls))

    @cached_property
    def nonrelevant(self) -> np.ndarray:
        """Whether each position holds the first occurrence of an item judged not relevant.

        One hash look-up per candidate entry against the distinct judged
        non-relevant items, as :func:`prepare_batch` does for the ORL items.
        """
        out = np.zeros(self.shape, dtype=bool)
        if not self.n_nonrelevant.any():
            return out
        sizes = self.n_nonrelevant
        owner = np.repeat(np.arange(len(sizes)), sizes)
        run = self.rankings
        if self._coded:  # codes into one table: no id is hashed again
            table = run.table
            assert table is not None and run.codes is not None
            codes = np.concatenate([_item_codes(o).nonrelevant for o in self.orls])
            width = max(len(table), 1)
            run_codes = run.codes
        else:
            judged = np.empty(int(sizes.sum()), dtype=object)
            judged[:] = list(chain.from_iterable(o.nonrelevant for o in self.orls))
            codes, uniques = _factorize(judged)
            run_codes = _lookup(uniques, run.items)
            width = len(uniques)
        known = np.flatnonzero(run_codes >= 0)
        rows = np.searchsorted(run.offsets, known, side="right") - 1
        keys = rows * width + run_codes[known]
        hit = np.isin(keys, owner * width + codes)
        first = np.zeros(len(keys), dtype=bool)
        first[np.unique(keys, return_index=True)[1]] = True  # entries are in run order
        take = known[hit & first]
        rows = rows[hit & first]
        out[rows, take - run.offsets[rows]] = True
        return out

    @cached_property
    def judged(self) -> np.ndarray:
        """Whether each position holds the first occurrence of a judged item
        (an ORL item or one judged not relevant)."""
        return (self.ranks > 0) | self.nonrelevant

    @cached_property
    def ideal_ranks(self) -> np.ndarray:
        """``g*`` (docs/measures.md, "RDQ"): each query's sorted ranks, then ``T+1, T+2, ...``."""
        j = self._join
        beyond = np.arange(1, self.depth + 1)[None, :] - self.n_ref[:, None]
        ideal = self.n_tiers[:, None] + beyond
        keep = j.slot < self.depth
        ideal[j.sorted_rows[keep], j.slot[keep]] = j.sorted_ranks[keep]
        return ideal

    @cached_property
    def cmp_entry(self) -> np.ndarray:
        """For CMP: the depth at which the credited item at each position enters
        ``run[:d] & ideal[:d]`` (``depth + 1`` for no credit).

        The ideal lists ties in run order, so the credited item at position
        ``i`` sits in it at (items ranked better) + (earlier credited items of
        its tier) + 1, and enters the overlap at the larger of the two depths.
        """
        j = self._join
        tier_base = int(self.n_tiers.max(initial=0)) + 2
        tier_keys = j.sorted_rows * tier_base + j.sorted_ranks
        c_keys = j.c_rows * tier_base + j.c_ranks
        better = np.searchsorted(tier_keys, c_keys, side="left") - j.orl_starts[j.c_rows]
        grouped = np.argsort(c_keys, kind="stable")
        g_keys = c_keys[grouped]
        earlier = np.empty_like(grouped)
        earlier[grouped] = np.arange(len(grouped)) - np.searchsorted(g_keys, g_keys, side="left")
        entry = np.full(self.shape, self.depth + 1, dtype=np.int64)
        entry[j.c_rows, j.c_pos] = np.maximum(j.c_pos + 1, better + earlier + 1)
        return entry

    @cached_property
    def _native(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Native grades of credited items and each query's sorted native grades."""
        if not self.orls:
            return None
        j = self._join
        if self._coded:  # every coded ORL has native grades, in the order of its codes
            orl_native = np.concatenate([_item_codes(o).grades for o in self.orls])
        elif any(o.grades is None for o in self.orls):
            return None
        else:
            orl_native = np.fromiter(
                chain.from_iterable(o.grades.values() for o in self.orls if o.grades is not None),
                dtype=np.float64,
                count=len(j.orl_rows),
            )
        grades = _scatter(j.c_rows, j.c_pos, orl_native[j.c_match], self.shape, np.float64)
        by_grade = np.lexsort((-orl_native, j.orl_rows))
        slot = np.arange(len(by_grade)) - j.orl_starts[j.orl_rows[by_grade]]
        keep = slot < self.depth
        ideal = _scatter(
            j.orl_rows[by_grade][keep],
            slot[keep],
            orl_native[by_grade][keep],
            self.shape,
            np.float64,
        )
        return grades, ideal

    @property
    def grades(self) -> np.ndarray | None:
        """Native grade of the credited item per position (0 elsewhere), or ``None``
        when some ORL has no native grades."""
        native = self._native
        return None if native is None else native[0]

    @property
    def ideal_native(self) -> np.ndarray | None:
        """Native grades sorted descending per query (0-padded), or ``None``."""
        native = self._native
        return None if native is None else native[1]

    @cached_property
    def _levels(self) -> dict[float, tuple[BatchData, np.ndarray]]:
        return {}

    def at_level(self, level: float) -> tuple[BatchData, np.ndarray]:
        """The same candidate lists joined with the ORLs at relevance level ``level``
        (:func:`scoring.relevance_level.orl_at_level`), and which rows keep a relevant item.

        A row without one is laid out against a placeholder item no run holds;
        its values mean nothing and are set to 0 by the caller (trec_eval's
        value for a query without relevant items). Made once per level.
        """
        from scoring.relevance_level import orl_at_level

        cached = self._levels.get(level)
        if cached is None:
            leveled = [orl_at_level(orl, level) for orl in self.orls]
            has = np.fromiter((o is not None for o in leveled), dtype=bool, count=len(leveled))
            orls = [_NO_RELEVANT if o is None else o for o in leveled]
            cached = prepare_batch(orls, list(self.queries), self.rankings, self.depth), has
            self._levels[level] = cached
        return cached

    def ranking_of(self, row: int) -> list[str]:
        """The candidate list of row ``row`` (truncated at ``depth``)."""
        lo, hi = self.rankings.offsets[row], self.rankings.offsets[row + 1]
        return self.rankings.items[lo:hi].tolist()


#: The ORL of a row whose query has no relevant item at a relevance level (never retrieved).
_NO_RELEVANT = ORL({"\x00no relevant item at this level": 1})


@dataclass(frozen=True)
class _Join:
    """Sparse results of joining candidates with ORLs (only ORL items are kept)."""

    rows: np.ndarray  # row and position of every candidate entry that is an ORL item
    pos: np.ndarray
    c_rows: np.ndarray  # ... and of those that earn credit (first occurrences)
    c_pos: np.ndarray
    c_ranks: np.ndarray
    c_match: np.ndarray  # index of the credited item in the flattened ORLs
    orl_rows: np.ndarray  # flattened ORLs, in input order
    orl_starts: np.ndarray
    sorted_rows: np.ndarray  # flattened ORLs sorted by (row, rank), with slot in row
    sorted_ranks: np.ndarray
    slot: np.ndarray


def _item_codes(orl: ORL) -> ItemCodes:
    """The item codes an ORL was built with (checked present by :func:`_shared_table`)."""
    codes = orl._codes
    assert codes is not None
    return codes


def _shared_table(orls: Sequence[ORL], run: FlatRun) -> np.ndarray | None:
    """The id table every ORL and the run are coded against, or ``None``."""
    table = run.table
    if table is None or run.codes is None or not orls:
        return None
    for orl in orls:
        codes = orl._codes
        if codes is None or codes.table is not table:
            return None
    return table


def _lookup(uniques: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Position of each of ``items`` in ``uniques`` (distinct ids), -1 where absent.

    The index is kept as Python objects: pandas 3 would otherwise turn both
    sides into Arrow strings first, which costs more than the look-up.
    """
    import pandas as pd

    return pd.Index(uniques, dtype=object).get_indexer(pd.Index(items, dtype=object))


def _factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``pandas.factorize`` (pandas is loaded here only: ids coded in a shared table need none)."""
    import pandas as pd

    return pd.factorize(values)


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

    Only candidate entries that are ORL items are carried past the first
    step, so the cost beyond one hash look-up per entry scales with the
    number of reference items retrieved, not with the run's depth.

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

    # ORLs, flattened: one entry per (row, item), in input order.
    orl_sizes = np.fromiter((len(o) for o in orls), dtype=np.int64, count=n_q)
    orl_rows = np.repeat(np.arange(n_q), orl_sizes)
    n_orl_items = int(orl_sizes.sum())
    orl_starts = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(orl_sizes, out=orl_starts[1:])
    n_tiers = np.fromiter((o.n_tiers for o in orls), dtype=np.int64, count=n_q)

    table = _shared_table(orls, run)
    if table is not None:
        # ORLs and run coded against one id table (as orlbuild eval reads files): no hashing.
        coded = [_item_codes(o) for o in orls]
        orl_codes = np.concatenate([c.items for c in coded])
        orl_ranks = np.concatenate([c.ranks for c in coded]).astype(np.int64, copy=False)
        n_codes = max(len(table), 1)
        in_some_orl = np.zeros(n_codes, dtype=bool)
        in_some_orl[orl_codes] = True
        assert run.codes is not None
        run_codes = run.codes
        known = np.flatnonzero(in_some_orl[run_codes])
    else:
        # One hash look-up per candidate entry against the (few) distinct ORL items.
        orl_ranks = np.fromiter(
            chain.from_iterable(o.values() for o in orls), dtype=np.int64, count=n_orl_items
        )
        orl_items = np.empty(n_orl_items, dtype=object)
        orl_items[:] = list(chain.from_iterable(o.keys() for o in orls))
        orl_codes, uniques = _factorize(orl_items)
        run_codes = _lookup(uniques, run.items) if len(uniques) else np.full(len(run.items), -1)
        known = np.flatnonzero(run_codes >= 0)
        n_codes = max(len(uniques), 1)
    rows = np.searchsorted(run.offsets, known, side="right") - 1
    pos = known - run.offsets[rows]

    # Join on (row, item) through integer keys.
    orl_keys = orl_rows * n_codes + orl_codes
    order = np.argsort(orl_keys, kind="stable")
    sorted_keys = orl_keys[order]
    keys = rows * n_codes + run_codes[known]
    where = np.minimum(np.searchsorted(sorted_keys, keys), max(len(sorted_keys) - 1, 0))
    found = sorted_keys[where] == keys if len(sorted_keys) else np.zeros(len(keys), bool)
    rows, pos, keys, match = rows[found], pos[found], keys[found], order[where[found]]
    first = np.zeros(len(keys), dtype=bool)
    first[np.unique(keys, return_index=True)[1]] = True  # entries are in run order

    by_rank = np.lexsort((orl_ranks, orl_rows))
    sorted_rows = orl_rows[by_rank]
    join = _Join(
        rows=rows,
        pos=pos,
        c_rows=rows[first],
        c_pos=pos[first],
        c_ranks=orl_ranks[match[first]],
        c_match=match[first],
        orl_rows=orl_rows,
        orl_starts=orl_starts,
        sorted_rows=sorted_rows,
        sorted_ranks=orl_ranks[by_rank],
        slot=np.arange(len(sorted_rows)) - orl_starts[sorted_rows],
    )
    return BatchData(
        queries=queries,
        depth=depth,
        ranks=_scatter(join.c_rows, join.c_pos, join.c_ranks, shape, np.int64),
        lengths=np.diff(run.offsets),
        n_ref=orl_sizes,
        n_tiers=n_tiers,
        orls=orls,
        rankings=run,
        _join=join,
        _coded=table is not None,
    )
