"""Turning a run table into ordered candidate lists (RDQ.md section 8).

Within a query, documents are ordered by score descending (float64) with ties
broken by document id descending - trec_eval's rule, which pytrec_eval
follows - or by the rank column when asked.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from scoring.batch import FlatRun
from scoring.errors import ScoringError

__all__ = ["OrderBy", "flat_run_from_frame", "rankings_from_frame"]

OrderBy = Literal["score", "rank"]
Duplicates = Literal["error", "keep-first"]


def _ordered(frame: pd.DataFrame, order_by: OrderBy | None) -> tuple[pd.DataFrame, str]:
    """Sort a ``query, item, score|rank`` table into rank order; return it and the key used."""
    missing = {"query", "item"} - set(frame.columns)
    if missing:
        raise ScoringError(f"a run table needs columns query, item; missing {sorted(missing)}")
    key = order_by or ("score" if "score" in frame.columns else "rank")
    if key not in frame.columns:
        raise ScoringError(f"a run table needs a {key!r} column to order by")
    values = pd.to_numeric(frame[key], errors="coerce").astype(np.float64)
    if not np.all(np.isfinite(values.to_numpy())):
        bad = frame.loc[~np.isfinite(values.to_numpy()), key].iloc[0]
        raise ScoringError(f"run column {key!r} holds a non-finite or non-numeric value {bad!r}")
    table = pd.DataFrame(
        {
            "query": frame["query"].astype(str).to_numpy(),
            "item": frame["item"].astype(str).to_numpy(),
            "_key": values.to_numpy(),
        }
    )
    # score: higher first, ties by item id descending (trec_eval); rank: lower first.
    ascending = [True, key == "rank", False]
    table = table.sort_values(["query", "_key", "item"], ascending=ascending, kind="mergesort")
    return table, key


def flat_run_from_frame(
    frame: pd.DataFrame,
    *,
    order_by: OrderBy | None = None,
    duplicates: Duplicates = "error",
    depth: int | None = None,
) -> FlatRun:
    """Order a run table and concatenate its candidate lists.

    Parameters
    ----------
    frame
        Columns ``query``, ``item`` and ``score`` or ``rank``.
    order_by
        ``"score"`` (default when present) or ``"rank"``.
    duplicates
        ``"error"`` (default, as trec_eval) or ``"keep-first"`` after ordering.
    depth
        Keep at most this many items per query.
    """
    table, _ = _ordered(frame, order_by)
    repeated = table.duplicated(["query", "item"], keep="first").to_numpy()
    if repeated.any():
        if duplicates == "error":
            row = table.loc[repeated].iloc[0]
            raise ScoringError(
                f"document {row['item']!r} appears twice for query {row['query']!r} "
                "(use duplicates='keep-first' to keep the first occurrence)"
            )
        table = table.loc[~repeated]
    queries = table["query"].to_numpy()
    if depth is not None:
        position = table.groupby("query", sort=False).cumcount().to_numpy()
        keep = position < depth
        table, queries = table.loc[keep], queries[keep]
    starts = (
        np.flatnonzero(np.r_[True, queries[1:] != queries[:-1]])
        if len(queries)
        else np.zeros(0, dtype=np.int64)
    )
    offsets = np.append(starts, len(queries)).astype(np.int64)
    qarr = np.empty(len(starts), dtype=object)
    qarr[:] = queries[starts].tolist()
    items = np.empty(len(table), dtype=object)
    items[:] = table["item"].tolist()
    return FlatRun(qarr, offsets, items)


def rankings_from_frame(
    frame: pd.DataFrame,
    *,
    order_by: OrderBy | None = None,
    duplicates: Duplicates = "error",
) -> dict[str, list[str]]:
    """``{query: [items best first]}`` from a ``query, item, score|rank`` table."""
    return flat_run_from_frame(frame, order_by=order_by, duplicates=duplicates).to_dict()
