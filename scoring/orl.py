"""The ordered reference list (ORL) of one query (docs/measures.md, "The ORL").

An ORL maps each reference item to an integer rank; smaller is better and
items sharing a rank form a tier. Ranks start at 1 and are consecutive, so an
ORL with ``T`` tiers uses exactly the ranks ``1..T``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import (
    Hashable,
    ItemsView,
    Iterable,
    Iterator,
    KeysView,
    Mapping,
    Sequence,
    ValuesView,
)
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from scoring.errors import ScoringError

if TYPE_CHECKING:
    from scoring.batch import IdTable

__all__ = ["ORL", "ItemCodes", "orls_from_coded_grades", "orls_from_grade_table"]


def _check_rank(item: Hashable, rank: object) -> int:
    """Return ``rank`` as an ``int`` or raise naming the item."""
    if type(rank) is int:  # the common case, without the slower ABC check below
        return rank
    if isinstance(rank, bool) or not isinstance(rank, numbers.Integral):
        raise ScoringError(f"ORL rank of item {item!r} must be an integer, got {rank!r}")
    return int(rank)


class ORL(Mapping[str, int]):
    """Ordered reference list of one query: item -> tier rank (1 is best).

    Parameters
    ----------
    mapping
        Item -> integer rank. Ranks must be ``1..T`` with no gaps.
    grades
        Optional native graded labels of the items (kept when the ORL was
        built from graded judgments, used by ``nDCG(grade=native)``).
    normalize
        Compress arbitrary integer ranks to ``1..T`` (dense ranking) instead
        of rejecting gaps.
    nonrelevant
        Optional items judged and found not relevant (grade 0 in qrels). They
        earn nothing anywhere; only the measures that tell judged from unjudged
        items read them (``Bpref``, ``infAP``, ``Judged@k``; docs/measures.md,
        "trec_eval, gdeval and ir_measures measures").

    Raises
    ------
    ScoringError
        (a ``ValueError``) for an empty ORL, a non-integer rank, a rank below
        1, or a gap in the ranks, naming the offending item and rank; or for
        an item that is both in the ORL and judged not relevant.

    Examples
    --------
    >>> orl = ORL({"d1": 1, "d3": 1, "d2": 2})
    >>> orl.tiers
    [['d1', 'd3'], ['d2']]
    """

    __slots__ = ("_codes", "_grades", "_nonrelevant", "_ranks", "_sorted_ranks")

    def __init__(
        self,
        mapping: Mapping[str, int],
        *,
        grades: Mapping[str, float] | None = None,
        normalize: bool = False,
        nonrelevant: Iterable[str] = (),
    ) -> None:
        if len(mapping) == 0:
            raise ScoringError("an ORL must hold at least one item")
        ranks = {item: _check_rank(item, rank) for item, rank in mapping.items()}
        if normalize:
            levels = {r: i for i, r in enumerate(sorted(set(ranks.values())), start=1)}
            ranks = {item: levels[r] for item, r in ranks.items()}
        n_tiers = len(set(ranks.values()))
        # n_tiers distinct values inside 1..n_tiers are exactly 1..n_tiers, with no gaps.
        if min(ranks.values()) < 1 or max(ranks.values()) > n_tiers:
            item, rank = next((i, r) for i, r in ranks.items() if r < 1 or r > n_tiers)
            raise ScoringError(
                f"ORL ranks must be consecutive integers from 1 with no gaps "
                f"(this ORL has {n_tiers} tiers, so ranks 1..{n_tiers}); "
                f"item {item!r} has rank {rank}"
            )
        self._ranks: dict[str, int] = ranks
        self._codes: ItemCodes | None = None
        self._sorted_ranks = np.sort(np.fromiter(ranks.values(), dtype=np.int64, count=len(ranks)))
        self._grades: dict[str, float] | None = None
        if grades is not None:
            missing = [item for item in ranks if item not in grades]
            if missing:
                raise ScoringError(f"native grades are missing for ORL item {missing[0]!r}")
            self._grades = {item: float(grades[item]) for item in ranks}
        self._nonrelevant = frozenset(nonrelevant)
        both = self._nonrelevant.intersection(ranks)
        if both:
            raise ScoringError(f"item {min(both)!r} is in the ORL and also judged not relevant")

    # --- constructors -----------------------------------------------------------------
    @classmethod
    def from_ranked_list(cls, items: Sequence[str]) -> ORL:
        """Build a strict ORL (no ties) from items listed best first.

        Raises
        ------
        ScoringError
            When an item is repeated.
        """
        ranks: dict[str, int] = {}
        for position, item in enumerate(items, start=1):
            if item in ranks:
                raise ScoringError(
                    f"item {item!r} appears twice in the ranked list "
                    f"(positions {ranks[item]} and {position})"
                )
            ranks[item] = position
        return cls(ranks)

    @classmethod
    def from_tiers(cls, tiers: Iterable[Iterable[str]]) -> ORL:
        """Build an ORL from tiers listed best first, e.g. ``[["d1", "d3"], ["d2"]]``."""
        ranks: dict[str, int] = {}
        for rank, tier in enumerate(tiers, start=1):
            members = list(tier) if not isinstance(tier, str) else [tier]
            if not members:
                raise ScoringError(f"tier {rank} of the ORL is empty")
            for item in members:
                if item in ranks:
                    raise ScoringError(
                        f"item {item!r} appears in tier {ranks[item]} and tier {rank}"
                    )
                ranks[item] = rank
        return cls(ranks)

    @classmethod
    def from_grades(cls, grades: Mapping[str, float]) -> ORL:
        """Build an ORL from graded labels (docs/measures.md, "The ORL").

        Each distinct positive grade becomes a tier, highest grade first
        (grades {3, 1, 2} give 3 -> rank 1, 2 -> rank 2, 1 -> rank 3). Grade 0
        items are not in the ORL; they are kept as judged not relevant
        (:attr:`nonrelevant`), and the native grades for ``nDCG(grade=native)``.

        Raises
        ------
        ScoringError
            For a negative or non-finite grade, or when no grade is positive.
        """
        for item, grade in grades.items():
            if not math.isfinite(grade) or grade < 0:
                raise ScoringError(f"grade of item {item!r} must be >= 0, got {grade!r}")
        positive = {item: float(g) for item, g in grades.items() if g > 0}
        if not positive:
            raise ScoringError("no item has a positive grade, so there is no ORL")
        levels = {g: r for r, g in enumerate(sorted(set(positive.values()), reverse=True), 1)}
        return cls(
            {item: levels[g] for item, g in positive.items()},
            grades=positive,
            nonrelevant=[item for item, g in grades.items() if g == 0],
        )

    @classmethod
    def from_scores(cls, scores: Mapping[str, float], *, higher_is_better: bool = True) -> ORL:
        """Build an ORL from item scores; equal scores share a tier (dense ranking)."""
        sign = -1.0 if higher_is_better else 1.0
        levels = {s: r for r, s in enumerate(sorted({sign * float(v) for v in scores.values()}), 1)}
        return cls({item: levels[sign * float(v)] for item, v in scores.items()})

    def __getattr__(self, name: str) -> Any:
        """Build a coded ORL's dictionaries on first use (:func:`orls_from_coded_grades`).

        Called only for a slot not yet set: ``_ranks``, ``_grades`` and
        ``_nonrelevant`` of an ORL built from codes stay unset until read.
        """
        if name in _LAZY_SLOTS:
            codes = object.__getattribute__(self, "_codes")
            if codes is not None:
                names = codes.table[codes.items].tolist()
                self._ranks = dict(zip(names, codes.ranks.tolist(), strict=True))
                self._grades = dict(zip(names, codes.grades.tolist(), strict=True))
                self._nonrelevant = frozenset(codes.table[codes.nonrelevant].tolist())
                return object.__getattribute__(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # --- mapping protocol -------------------------------------------------------------
    def __getitem__(self, item: str) -> int:
        return self._ranks[item]

    def __iter__(self) -> Iterator[str]:
        return iter(self._ranks)

    def __len__(self) -> int:
        return len(self._sorted_ranks)  # without building a lazily built ORL's dictionaries

    def __contains__(self, item: object) -> bool:
        return item in self._ranks

    # The dict's own views: the Mapping mixins would call __getitem__ per item.
    def keys(self) -> KeysView[str]:
        return self._ranks.keys()

    def values(self) -> ValuesView[int]:
        return self._ranks.values()

    def items(self) -> ItemsView[str, int]:
        return self._ranks.items()

    def get(self, item: str, default: Any = None) -> Any:
        return self._ranks.get(item, default)

    def __eq__(self, other: object) -> bool:
        # Defined without __hash__, so an ORL is unhashable, as the dict it compares equal to.
        if isinstance(other, ORL):
            return (
                self._ranks == other._ranks
                and self._grades == other._grades
                and self._nonrelevant == other._nonrelevant
            )
        if isinstance(other, Mapping):
            return self._ranks == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"ORL.from_tiers({self.tiers!r})"

    # --- properties -------------------------------------------------------------------
    @property
    def ranks(self) -> Mapping[str, int]:
        """Read-only item -> rank mapping."""
        return MappingProxyType(self._ranks)

    @property
    def grades(self) -> Mapping[str, float] | None:
        """Native graded labels, or ``None`` when the ORL was not built from grades."""
        return None if self._grades is None else MappingProxyType(self._grades)

    @property
    def has_grades(self) -> bool:
        """Whether the ORL holds native grades (read without building a coded ORL's
        dictionaries: every ORL built from codes has them)."""
        try:
            grades = object.__getattribute__(self, "_grades")
        except AttributeError:  # a coded ORL not yet built
            return True
        return grades is not None

    @property
    def nonrelevant(self) -> frozenset[str]:
        """Items judged not relevant (grade 0); empty unless the judgments said so."""
        return self._nonrelevant

    @property
    def n_judged(self) -> int:
        """Judged items: the ORL's items plus those judged not relevant."""
        return len(self._ranks) + len(self._nonrelevant)

    @property
    def n_items(self) -> int:
        """``|R|``, the number of reference items."""
        return len(self._sorted_ranks)

    @property
    def n_tiers(self) -> int:
        """``T``, the number of tiers (the largest rank)."""
        return int(self._sorted_ranks[-1])

    @property
    def tiers(self) -> list[list[str]]:
        """Items grouped by tier, best tier first (insertion order inside a tier)."""
        grouped: list[list[str]] = [[] for _ in range(self.n_tiers)]
        for item, rank in self._ranks.items():
            grouped[rank - 1].append(item)
        return grouped

    def ideal_ranks(self, k: int) -> np.ndarray:
        """``g*_1..g*_k`` (docs/measures.md, "RDQ"): sorted ranks, then ``T+1, T+2, ...``."""
        n = min(k, self.n_items)
        tail = self.n_tiers + np.arange(1, k - n + 1, dtype=np.int64)
        return np.concatenate([self._sorted_ranks[:n], tail])

    def to_dict(self) -> dict[str, int]:
        """A plain ``{item: rank}`` copy."""
        return dict(self._ranks)


@dataclass(frozen=True)
class ItemCodes:
    """An ORL's items as integer codes into a table of distinct ids (e.g. shared with a run).

    Attributes
    ----------
    table
        The distinct item ids; codes of two ORLs (or of an ORL and a run) are
        comparable when their tables are the same object.
    items
        Code of each ORL item, in the ORL's item order (best rank first).
    ranks, grades
        Each item's rank (ascending) and native grade.
    nonrelevant
        Codes of the items judged not relevant.
    """

    table: np.ndarray | IdTable
    items: np.ndarray
    ranks: np.ndarray
    grades: np.ndarray
    nonrelevant: np.ndarray


_LAZY_SLOTS = frozenset({"_ranks", "_grades", "_nonrelevant"})


def orls_from_grade_table(
    queries: np.ndarray, items: np.ndarray, grades: np.ndarray
) -> tuple[dict[str, ORL], list[str]]:
    """One graded-route ORL per query from aligned columns, as :meth:`ORL.from_grades` builds it.

    The tiers of every query are computed at once (NumPy), which is what makes
    reading the qrels of thousands of queries fast.

    Parameters
    ----------
    queries, items
        Query and item ids (strings), one row per (query, item), no repeats.
    grades
        Finite grades >= 0; 0 means judged not relevant (not in the ORL, kept
        in :attr:`ORL.nonrelevant`).

    Returns
    -------
    tuple
        ``{query: ORL}`` in sorted query order, and the queries whose grades
        are all 0 (they get no ORL).

    Raises
    ------
    ScoringError
        For a negative or non-finite grade.
    """
    import pandas as pd  # here: building an ORL by hand loads no pandas

    query_codes, uniques = pd.factorize(np.asarray(queries, dtype=object))
    codes, names = _sorted_codes(np.asarray(queries, dtype=object), query_codes, uniques)
    return _graded_orls(codes, names, np.asarray(items, dtype=object), grades, None)


def orls_from_coded_grades(
    query_codes: np.ndarray,
    queries: np.ndarray,
    item_codes: np.ndarray,
    items: np.ndarray | IdTable,
    grades: np.ndarray,
) -> tuple[dict[str, ORL], list[str]]:
    """:func:`orls_from_grade_table` of rows given as integer codes; the ORLs keep the codes.

    Each ORL carries its items' codes into ``items`` (:class:`ItemCodes`), so
    that a run coded against the same table is joined with the ORLs on
    integers (:func:`scoring.batch.prepare_batch`), without hashing an id again.

    Parameters
    ----------
    query_codes, queries
        Each row's index into ``queries`` (distinct query ids, strings; a
        table shared with runs may hold queries without rows here).
    item_codes, items
        Each row's index into ``items`` (distinct item ids: strings, or a
        :class:`~scoring.batch.IdTable`, whose strings are then made only if read).
    grades
        As for :func:`orls_from_grade_table`.

    Returns
    -------
    tuple
        As :func:`orls_from_grade_table`.
    """
    queries = np.asarray(queries, dtype=object)
    codes, names = _sorted_codes(queries[query_codes], np.asarray(query_codes), queries)
    item_codes = np.asarray(item_codes, dtype=np.int64)
    return _graded_orls(codes, names, None, grades, (items, item_codes))


def _graded_orls(
    codes: np.ndarray,
    uniques: np.ndarray,
    items: np.ndarray | None,
    grades: np.ndarray,
    coded: tuple[Any, np.ndarray] | None,
) -> tuple[dict[str, ORL], list[str]]:
    """The ORLs of :func:`orls_from_grade_table` from query codes in sorted query order.

    ``items`` (each row's id) may be ``None`` when ``coded`` (the id table and
    each row's code) is given: the ids are then read from the table only if
    an error names one.
    """
    grades = np.asarray(grades, dtype=np.float64)
    bad = ~np.isfinite(grades) | (grades < 0)
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        item = items[at] if items is not None else _row_id(coded, at)
        raise ScoringError(f"grade of item {item!r} must be >= 0, got {grades[at]!r}")
    positive = grades > 0
    zero_codes = codes[~positive]
    zero_order = np.argsort(zero_codes, kind="stable")
    zero_rows = np.flatnonzero(~positive)[zero_order]
    zero_starts = np.searchsorted(zero_codes[zero_order], np.arange(len(uniques) + 1)).tolist()
    # Sort by (query, grade descending): ranks are dense within each query.
    order = np.lexsort((-grades, codes))
    order = order[positive[order]]
    q_sorted, g_sorted = codes[order], grades[order]
    new_query = np.r_[True, q_sorted[1:] != q_sorted[:-1]]
    new_level = new_query | np.r_[True, g_sorted[1:] != g_sorted[:-1]]
    level_count = np.cumsum(new_level)
    ranks = level_count - np.maximum.accumulate(np.where(new_query, level_count - 1, 0))
    ranks = ranks.astype(np.int64)
    starts = np.flatnonzero(new_query)
    ends = np.r_[starts[1:], len(order)]
    heads = q_sorted[starts].tolist()
    orls: dict[str, ORL] = {}
    if coded is not None:
        # Codes only: each ORL's dictionaries are built if it is ever read (ORL.__getattr__);
        # the scorer joins the ORLs with a run coded against ``table`` on these arrays.
        table, row_codes = coded
        item_codes, zero_item_codes = row_codes[order], row_codes[zero_rows]
        for lo, hi, code in zip(starts.tolist(), ends.tolist(), heads, strict=True):
            orl = ORL.__new__(ORL)
            orl._sorted_ranks = ranks[lo:hi]  # already ascending
            z_lo, z_hi = zero_starts[code], zero_starts[code + 1]
            orl._codes = ItemCodes(
                table,
                item_codes[lo:hi],
                orl._sorted_ranks,
                g_sorted[lo:hi],
                zero_item_codes[z_lo:z_hi],
            )
            orls[str(uniques[code])] = orl
    else:
        assert items is not None
        # Whole columns as lists once: slicing lists is cheaper than slicing arrays per query.
        zero_items = items[zero_rows].tolist()
        names_all = items[order].tolist()
        ranks_all = ranks.tolist()
        grades_all = g_sorted.tolist()
        for lo, hi, code in zip(starts.tolist(), ends.tolist(), heads, strict=True):
            names = names_all[lo:hi]
            orl = ORL.__new__(ORL)
            orl._ranks = dict(zip(names, ranks_all[lo:hi], strict=True))
            orl._sorted_ranks = ranks[lo:hi]  # already ascending
            orl._grades = dict(zip(names, grades_all[lo:hi], strict=True))
            z_lo, z_hi = zero_starts[code], zero_starts[code + 1]
            orl._nonrelevant = frozenset(zero_items[z_lo:z_hi])
            orl._codes = None
            orls[str(uniques[code])] = orl
    # Queries judged but without a positive grade (``uniques`` may hold others: a shared table).
    judged = np.zeros(len(uniques), dtype=bool)
    judged[codes] = True
    judged[heads] = False
    without = [str(query) for query in uniques[judged].tolist()]
    return orls, without  # in sorted query order already: the codes follow it


def _row_id(coded: tuple[Any, np.ndarray] | None, row: int) -> str:
    """The id of row ``row`` of a coded table (for an error message)."""
    assert coded is not None
    table, row_codes = coded
    return str(table[int(row_codes[row])])


def _sorted_codes(
    values: np.ndarray, codes: np.ndarray, uniques: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Codes of ``values`` (``uniques[codes]``) into their sorted unique values (as strings).

    Only the distinct values are sorted.
    """
    names = np.asarray(uniques).astype(str)
    if len(set(names.tolist())) != len(names):  # e.g. 1 and "1": equal as strings
        names, codes = np.unique(values.astype(str), return_inverse=True)
        return codes.astype(np.int64).ravel(), names.astype(object)
    order = np.argsort(names, kind="stable")
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    return position[codes], names[order].astype(object)
