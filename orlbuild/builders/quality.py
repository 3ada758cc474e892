"""Quality checks of a build (docs/tiers-and-audit.md, "Quality checks").

* comparison counts per item and per pair, items under ``min_comparisons`` flagged;
* agreement: the share of raw preferences consistent with the ORL, overall
  and per annotator (to spot a careless annotator);
* cycles of the majority-preference graph, listed, not hidden.

Raw preferences come from the build's source: pairwise rows as they are;
listwise lists and graded labels as their implied strict preferences (pairs
of one annotator's items with different ranks or grades). A strict
preference is *consistent* when the ORL ranks the winner strictly above the
loser, *contradicted* when below, *tied* when both share a tier; a recorded
tie is consistent when both items share a tier. Preferences involving an
item absent from the ORL are not counted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from orlbuild.builders.comparison_graph import majority_preference_cycles
from orlbuild.builders.pairwise_data import comparisons_from_arrays

__all__ = ["QualityReport", "build_quality", "raw_preferences"]

_PREFERENCE_COLUMNS = ["query", "annotator", "winner", "loser", "tie"]


def raw_preferences(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """The raw preferences of judgments of any source.

    Parameters
    ----------
    frame
        Pairwise (``winner, loser, tie``), listwise (``item, rank``) or graded
        (``item, grade``) judgments with ``query`` and ``annotator``.
    source
        ``pairwise``, ``listwise`` or ``graded``.

    Returns
    -------
    pandas.DataFrame
        Columns ``query, annotator, winner, loser, tie``.
    """
    frame = frame.copy()
    if "annotator" not in frame.columns:
        frame["annotator"] = "_"
    if source == "pairwise":
        if "tie" not in frame.columns:
            frame["tie"] = 0
        out = frame[_PREFERENCE_COLUMNS].copy()
        out["tie"] = out["tie"].fillna(0).astype(int)
        return out
    # Better rank = smaller value for lists, larger grade for graded labels.
    value = frame["rank"].astype(float) if source == "listwise" else -frame["grade"].astype(float)
    judged = frame.assign(_v=value)[["query", "annotator", "item", "_v"]]
    pairs = judged.merge(judged, on=["query", "annotator"], suffixes=("_w", "_l"))
    pairs = pairs[pairs["_v_w"] < pairs["_v_l"]]
    return pd.DataFrame(
        {
            "query": pairs["query"].to_numpy(),
            "annotator": pairs["annotator"].to_numpy(),
            "winner": pairs["item_w"].to_numpy(),
            "loser": pairs["item_l"].to_numpy(),
            "tie": 0,
        }
    )


@dataclass(frozen=True)
class QualityReport:
    """Quality of one build.

    Attributes
    ----------
    items
        ``query, item, comparisons, flagged`` (flagged: fewer than ``min_comparisons``).
    pairs
        ``query, item_a, item_b, comparisons`` (``item_a < item_b``).
    agreement
        Share of raw preferences consistent with the ORL (NaN with none).
    annotators
        ``annotator, preferences, consistent, contradicted, tied, agreement,
        agreement_ordered`` (the last: consistent share among the strict
        preferences whose two items the ORL puts in different tiers).
    cycles
        ``query, length, cycle`` (items joined by ``" > "``).
    """

    items: pd.DataFrame
    pairs: pd.DataFrame
    agreement: float
    annotators: pd.DataFrame
    cycles: pd.DataFrame


def _classify(prefs: pd.DataFrame, ranks: pd.Series) -> pd.DataFrame:
    keys_w = pd.MultiIndex.from_arrays([prefs["query"], prefs["winner"]])
    keys_l = pd.MultiIndex.from_arrays([prefs["query"], prefs["loser"]])
    rank_w = ranks.reindex(keys_w).to_numpy()
    rank_l = ranks.reindex(keys_l).to_numpy()
    known = ~(np.isnan(rank_w) | np.isnan(rank_l))
    tie = prefs["tie"].to_numpy().astype(bool)
    same = rank_w == rank_l
    return pd.DataFrame(
        {
            "annotator": prefs["annotator"].to_numpy()[known],
            "consistent": np.where(tie, same, rank_w < rank_l)[known],
            "contradicted": (~tie & (rank_w > rank_l))[known],
            "tied": (~tie & same)[known],
            "sided": (~tie & (rank_w < rank_l))[known],
            "ordered": (~tie & ~same)[known],
        }
    )


def build_quality(
    prefs: pd.DataFrame, ranks: dict[str, dict[str, int]], *, min_comparisons: int = 5
) -> QualityReport:
    """Quality report of a build.

    Parameters
    ----------
    prefs
        Raw preferences (:func:`raw_preferences`).
    ranks
        The build's ORLs: query -> item -> rank.
    min_comparisons
        Items compared fewer times than this are flagged.

    Returns
    -------
    QualityReport
    """
    ends = pd.concat(
        [
            prefs[["query", "winner"]].set_axis(["query", "item"], axis=1),
            prefs[["query", "loser"]].set_axis(["query", "item"], axis=1),
        ]
    )
    items = ends.groupby(["query", "item"], sort=True).size().rename("comparisons").reset_index()
    items["flagged"] = items["comparisons"] < min_comparisons
    low = prefs[["winner", "loser"]].min(axis=1)
    high = prefs[["winner", "loser"]].max(axis=1)
    pairs = (
        pd.DataFrame({"query": prefs["query"], "item_a": low, "item_b": high})
        .groupby(["query", "item_a", "item_b"], sort=True)
        .size()
        .rename("comparisons")
        .reset_index()
    )
    flat = pd.Series(
        {(q, i): float(r) for q, orl in ranks.items() for i, r in orl.items()}, dtype=float
    )
    classified = _classify(prefs, flat)
    per = classified.groupby("annotator", sort=True).agg(
        preferences=("consistent", "size"),
        consistent=("consistent", "sum"),
        contradicted=("contradicted", "sum"),
        tied=("tied", "sum"),
        sided=("sided", "sum"),
        sided_total=("ordered", "sum"),
    )
    per["agreement"] = per["consistent"] / per["preferences"]
    # Among strict preferences whose items the ORL orders: how often the annotator sided
    # with the ORL (a careless annotator is near 0.5, an adversarial one below).
    per["agreement_ordered"] = per.pop("sided") / (per["sided_total"])
    per = per.drop(columns="sided_total")
    agreement = float(classified["consistent"].mean()) if len(classified) else float("nan")
    cycle_rows = []
    for query, part in prefs.groupby("query", sort=True):
        comps = comparisons_from_arrays(
            part["winner"].to_numpy(dtype=object),
            part["loser"].to_numpy(dtype=object),
            part["tie"].to_numpy().astype(bool),
            part["annotator"].to_numpy(dtype=object),
        )
        for cycle in majority_preference_cycles(comps):
            cycle_rows.append(
                {"query": str(query), "length": len(cycle), "cycle": " > ".join(cycle)}
            )
    cycles = pd.DataFrame(cycle_rows, columns=["query", "length", "cycle"])
    return QualityReport(items, pairs, agreement, per.reset_index(), cycles)
