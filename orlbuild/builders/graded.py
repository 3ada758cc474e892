"""The graded route (docs/tiers-and-audit.md, "Build routes"): one tier per distinct positive grade.

Several annotators per (query, item) are aggregated first:

* ``median`` (default): the median grade, a half-way median (an even number
  of annotators split between two grades) rounded *down*, so that a
  disagreement never promotes an item;
* ``mean``: the mean grade, kept as a fraction (it is its own tier);
* ``max``: the highest grade;
* ``majority``: the most frequent grade; equally frequent grades resolve to
  the lowest of them (same reason as the median).

Grade 0 items are not in the ORL; a query with no positive aggregated grade
gets no ORL and fails with that cause. The aggregated (native) grades are kept
for ``nDCG(gain=native)``.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from orlbuild.records import QueryBuildError, QueryORL, TieDecision

__all__ = ["aggregate_grades", "graded_orl", "graded_orls"]


def aggregate_grades(frame: pd.DataFrame, how: str = "median") -> pd.DataFrame:
    """Aggregate the grades of several annotators per (query, item).

    Parameters
    ----------
    frame
        Columns ``query``, ``item``, ``grade`` (``annotator`` is not needed).
    how
        ``median``, ``mean``, ``max`` or ``majority``.

    Returns
    -------
    pandas.DataFrame
        Columns ``query``, ``item``, ``grade``, one row per (query, item),
        sorted by query then item.
    """
    keys = ["query", "item"]
    grades = frame[[*keys, "grade"]].astype({"grade": np.float64})
    if how == "median":
        out = grades.groupby(keys, sort=True)["grade"].median()
        out = np.floor(out)
    elif how == "mean":
        out = grades.groupby(keys, sort=True)["grade"].mean()
    elif how == "max":
        out = grades.groupby(keys, sort=True)["grade"].max()
    elif how == "majority":
        counts = grades.groupby([*keys, "grade"], sort=True).size().rename("n").reset_index()
        counts = counts.sort_values([*keys, "n", "grade"], ascending=[True, True, False, True])
        out = counts.drop_duplicates(keys, keep="first").set_index(keys)["grade"]
    else:
        raise ValueError(f"unknown grade aggregate {how!r}")
    return out.rename("grade").reset_index().sort_values(keys, ignore_index=True)


def graded_orl(query: str, grades: pd.Series) -> QueryORL:
    """ORL of one query from its aggregated grades.

    Parameters
    ----------
    query
        Query id.
    grades
        Item -> aggregated grade.

    Returns
    -------
    QueryORL
        Tiers by decreasing positive grade, the native grades, and one
        ``same grade`` / ``lower grade`` decision per item after the first.

    Raises
    ------
    QueryBuildError
        When no item has a positive grade.

    Examples
    --------
    Grades {3, 1, 2} give 3 -> rank 1, 2 -> rank 2, 1 -> rank 3.
    """
    positive = grades[grades > 0]
    if positive.empty:
        raise _no_positive(query)
    items = positive.index.to_numpy(dtype=object).astype(str)
    values = positive.to_numpy(dtype=np.float64)
    order = np.lexsort((items, -values))
    return _orl(query, items[order].tolist(), values[order].tolist())


def _no_positive(query: str) -> QueryBuildError:
    return QueryBuildError(query, "no positive grades (every judged item has grade 0)")


def graded_orls(grades: pd.DataFrame) -> Iterator[tuple[str, QueryORL | QueryBuildError]]:
    """:func:`graded_orl` of every query of ``grades`` at once, in query order.

    The sorting is done once for all queries (NumPy), so a build of a million small
    queries spends its time making the ORL objects, not slicing a DataFrame per query.

    Parameters
    ----------
    grades
        :func:`aggregate_grades`'s frame: ``query``, ``item``, ``grade``.

    Yields
    ------
    tuple of (str, QueryORL or QueryBuildError)
        Each query (sorted) with its ORL, or the error :func:`graded_orl` raises for it.
    """
    queries = grades["query"].to_numpy().astype(str)
    items = grades["item"].to_numpy().astype(str)
    values = grades["grade"].to_numpy(dtype=np.float64)
    order = np.lexsort((items, -values, queries))
    queries, items, values = queries[order], items[order], values[order]
    if not len(queries):
        return
    starts = np.flatnonzero(np.r_[True, queries[1:] != queries[:-1]])
    positive = values > 0  # NaN is not: as in graded_orl; positives sort first
    counts = np.add.reduceat(positive.astype(np.int64), starts)
    item_list, value_list = items.tolist(), values.tolist()
    for start, count in zip(starts.tolist(), counts.tolist(), strict=True):
        query = str(queries[start])
        if not count:
            yield query, _no_positive(query)
        else:
            stop = start + count
            yield query, _orl(query, item_list[start:stop], value_list[start:stop])


def _orl(query: str, items: list[str], values: list[float]) -> QueryORL:
    """The ORL of items already sorted by decreasing grade, then item."""
    tiers: list[list[str]] = []
    decisions: list[TieDecision] = []
    leader = -1
    for index, item in enumerate(items):
        if leader >= 0:
            same = values[index] == values[leader]
            decisions.append(
                TieDecision.without_test(
                    query,
                    items[leader],
                    item,
                    values[leader],
                    values[index],
                    tied=same,
                    rule="same grade" if same else "lower grade",
                )
            )
        if leader < 0 or values[index] != values[leader]:
            tiers.append([])
            leader = index
        tiers[-1].append(item)
    scores = dict(zip(items, values, strict=True))
    return QueryORL(
        query=query,
        tiers=tiers,
        scores=scores,
        intervals=dict.fromkeys(scores),
        decisions=decisions,
        native_grades=dict(scores),
    )
