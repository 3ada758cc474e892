"""Quality checks of a build (docs/tiers-and-audit.md, "Quality checks").

* comparison counts per item and per pair, items under ``min_comparisons`` flagged;
* agreement: the share of raw preferences consistent with the ORL, overall
  and per annotator (to spot a careless annotator);
* cycles of the majority-preference graph, listed, not hidden;
* per annotator, so that an LLM judge is audited like a person:

  - ``position_bias``: the share of their strict preferences won by the item
    shown first, where the data say which was shown first (a ``first``
    column, or the store's ``winner_first`` flag, which the arena, evalica and
    crowd-kit shapes fill; 0.5 is unbiased; NaN where the data do not say,
    docs/tiers-and-audit.md, "Quality checks");
  - ``kappa``: Cohen's kappa between the annotator and the other annotators
    on the pairs both judged (outcomes first-id wins / second-id wins / tie,
    every judgment of the annotator against every judgment of the others on
    the same pair; :func:`annotator_kappa`);
  - agreement with the ORL: ``agreement_ordered``, the share of their strict
    preferences between items the ORL puts in different tiers that side with
    the ORL (the figure to quote: a careless annotator is near 0.5), and
    ``agreement_all``, the share of all their preferences consistent with the
    ORL (a strict preference between items of one tier counts against it).

Counts (``preferences``, ``consistent``, ``contradicted``, ``tied``,
``shared``) are integers.

A row's ``count`` (counted rows) weighs it everywhere.

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
import numpy.typing as npt
import pandas as pd

from orlbuild.builders.comparison_graph import majority_preference_cycles
from orlbuild.builders.pairwise_data import comparisons_from_arrays

__all__ = [
    "QualityReport",
    "annotator_kappa",
    "build_quality",
    "position_bias",
    "raw_preferences",
]

_PREFERENCE_COLUMNS = ["query", "annotator", "winner", "loser", "tie"]
#: Optional columns kept from pairwise judgments: outcomes per row, item shown first.
_OPTIONAL_COLUMNS = ("count", "first")


def raw_preferences(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """The raw preferences of judgments of any source.

    Parameters
    ----------
    frame
        Pairwise (``winner, loser, tie``, optionally ``count`` and the item shown
        ``first`` or the store's ``winner_first`` flag), listwise (``item, rank``)
        or graded (``item, grade``) judgments with ``query`` and ``annotator``.
    source
        ``pairwise``, ``listwise`` or ``graded``.

    Returns
    -------
    pandas.DataFrame
        Columns ``query, annotator, winner, loser, tie`` (pairwise: also ``count``
        and ``first``, the item shown first or None, when the judgments say).
    """
    frame = frame.copy()
    if "annotator" not in frame.columns:
        frame["annotator"] = "_"
    if source == "pairwise":
        if "tie" not in frame.columns:
            frame["tie"] = 0
        if "first" not in frame.columns and "winner_first" in frame.columns:
            frame["first"] = _first_shown(frame)
        kept = [c for c in _OPTIONAL_COLUMNS if c in frame.columns]
        out = frame[[*_PREFERENCE_COLUMNS, *kept]].copy()
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


def _first_shown(frame: pd.DataFrame) -> pd.Series:
    """The item shown first, from the stored ``winner_first`` flag (None where unknown)."""
    flag = frame["winner_first"].astype("boolean")
    shown = np.where(flag.fillna(False).to_numpy(dtype=bool), frame["winner"], frame["loser"])
    return pd.Series(shown, index=frame.index, dtype=object).where(flag.notna().to_numpy(), None)


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
        ``annotator, preferences, consistent, contradicted, tied`` (integer
        counts), ``agreement_ordered`` (consistent share among the strict
        preferences whose two items the ORL puts in different tiers),
        ``agreement_all`` (consistent share of all preferences), ``position_bias``
        (share of strict preferences won by the item shown first; NaN when
        the data do not say), ``kappa`` and ``shared`` (Cohen's kappa with the
        other annotators, and the judgment pairs it is computed from).
    cycles
        ``query, length, cycle`` (items joined by ``" > "``).
    """

    items: pd.DataFrame
    pairs: pd.DataFrame
    agreement: float
    annotators: pd.DataFrame
    cycles: pd.DataFrame


def annotator_kappa(prefs: pd.DataFrame) -> pd.DataFrame:
    """Cohen's kappa of each annotator against the other annotators, on shared pairs.

    Each judgment is one of three outcomes for its unordered pair (the
    smaller id wins, the larger wins, a tie). Every judgment of annotator
    ``k`` on a pair is matched with every judgment of the other annotators on
    the same pair; ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_o`` the share
    of matched judgments with the same outcome and ``p_e`` the agreement
    expected from the two sides' outcome shares over the same matches
    (Cohen 1960). A small implementation rather than a dependency: it needs
    the per-pair counts only, so it is linear in the judgments.

    Parameters
    ----------
    prefs
        :func:`raw_preferences` (``count`` optional).

    Returns
    -------
    pandas.DataFrame
        ``annotator, kappa, shared`` (``shared``: matched judgment pairs;
        kappa NaN when there are none or ``p_e = 1``).

    Examples
    --------
    >>> import pandas as pd
    >>> prefs = pd.DataFrame({"query": "q", "annotator": ["x", "y", "x", "y"],
    ...     "winner": ["a", "a", "c", "d"], "loser": ["b", "b", "d", "c"], "tie": 0})
    >>> annotator_kappa(prefs)["kappa"].round(2).tolist()
    [0.0, 0.0]
    """
    weight = prefs["count"].astype(float) if "count" in prefs.columns else 1.0
    low, high = _pair_ends(prefs["winner"].astype(str), prefs["loser"].astype(str))
    outcome = np.where(
        prefs["tie"].to_numpy().astype(bool), "tie", np.where(prefs["winner"] == low, "low", "high")
    )
    frame = pd.DataFrame(
        {
            "query": prefs["query"].astype(str).to_numpy(),
            "low": low,
            "high": high,
            "annotator": prefs["annotator"].astype(str).to_numpy(),
            "outcome": outcome,
            "w": weight,
        }
    )
    mine = frame.pivot_table(
        index=["query", "low", "high", "annotator"],
        columns="outcome",
        values="w",
        aggfunc="sum",
        fill_value=0.0,
    ).reindex(columns=["low", "high", "tie"], fill_value=0.0)
    total = mine.groupby(level=["query", "low", "high"]).transform("sum")
    others = total - mine
    n_mine = mine.sum(axis=1)
    n_others = others.sum(axis=1)
    matched = n_mine * n_others
    agree = (mine * others).sum(axis=1)
    side_mine = mine.mul(n_others, axis=0)
    side_others = others.mul(n_mine, axis=0)
    by = mine.index.get_level_values("annotator")
    shared = matched.groupby(by).sum()
    observed = agree.groupby(by).sum() / shared
    expected = (
        side_mine.groupby(by).sum().div(shared, axis=0)
        * side_others.groupby(by).sum().div(shared, axis=0)
    ).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = (observed - expected) / (1.0 - expected)
    kappa = kappa.where((shared > 0) & (expected < 1.0))
    return pd.DataFrame(
        {"annotator": shared.index, "kappa": kappa.to_numpy(), "shared": shared.to_numpy()}
    )


def _pair_ends(
    winner: pd.Series, loser: pd.Series
) -> tuple[npt.NDArray[np.object_], npt.NDArray[np.object_]]:
    """The smaller and the larger id of every preference's two items, element by element.

    ``frame[["winner", "loser"]].min(axis=1)`` on string columns falls back to one
    Python reduction per row (40 s of a 200,000-annotator ``quality``,
    docs/performance.md, "Quality of a build"); one comparison of the two arrays gives
    the same ids.
    """
    first = winner.to_numpy(dtype=object)
    second = loser.to_numpy(dtype=object)
    smaller = np.asarray(second < first, dtype=bool) if len(first) else np.zeros(0, dtype=bool)
    return np.where(smaller, second, first), np.where(smaller, first, second)


def position_bias(prefs: pd.DataFrame) -> pd.Series:
    """Per annotator, the share of strict preferences won by the item shown first.

    NaN for annotators (or data) without a ``first`` column value.
    """
    if "first" not in prefs.columns:
        return pd.Series(dtype=float, name="position_bias")
    weight = pd.Series(_weights(prefs), index=prefs.index)
    known = prefs["first"].notna() & ~prefs["tie"].astype(bool)
    part = prefs[known]
    won = (part["winner"].astype(str) == part["first"].astype(str)).astype(float)
    w = weight[known]
    by = part["annotator"].astype(str)
    return ((won * w).groupby(by).sum() / w.groupby(by).sum()).rename("position_bias")


def _weights(prefs: pd.DataFrame) -> np.ndarray:
    """Outcomes of each preference row (its ``count``, else 1)."""
    if "count" not in prefs.columns:
        return np.ones(len(prefs))
    return prefs["count"].fillna(1).to_numpy(dtype=np.float64)


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
            "w": _weights(prefs)[known],
            "consistent": np.where(tie, same, rank_w < rank_l)[known],
            "contradicted": (~tie & (rank_w > rank_l))[known],
            "tied": (~tie & same)[known],
            "sided": (~tie & (rank_w < rank_l))[known],
            "ordered": (~tie & ~same)[known],
        }
    )


#: Per-annotator columns that count judgments (printed as integers).
_COUNT_COLUMNS = ("preferences", "consistent", "contradicted", "tied", "shared")


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
    weight = _weights(prefs)
    ends["w"] = np.concatenate([weight, weight])
    items = ends.groupby(["query", "item"], sort=True)["w"].sum().rename("comparisons")
    items = items.astype(np.int64).reset_index()
    items["flagged"] = items["comparisons"] < min_comparisons
    low, high = _pair_ends(prefs["winner"], prefs["loser"])
    pairs = (
        pd.DataFrame({"query": prefs["query"], "item_a": low, "item_b": high, "w": weight})
        .groupby(["query", "item_a", "item_b"], sort=True)["w"]
        .sum()
        .astype(np.int64)
        .rename("comparisons")
        .reset_index()
    )
    flat = pd.Series(
        {(q, i): float(r) for q, orl in ranks.items() for i, r in orl.items()}, dtype=float
    )
    classified = _classify(prefs, flat)
    weighted = classified.drop(columns=["annotator", "w"]).mul(classified["w"], axis=0)
    weighted["annotator"] = classified["annotator"]
    weighted["n"] = classified["w"]
    per = weighted.groupby("annotator", sort=True).agg(
        preferences=("n", "sum"),
        consistent=("consistent", "sum"),
        contradicted=("contradicted", "sum"),
        tied=("tied", "sum"),
        sided=("sided", "sum"),
        sided_total=("ordered", "sum"),
    )
    # Among strict preferences whose items the ORL orders: how often the annotator sided
    # with the ORL (a careless annotator is near 0.5, an adversarial one below).
    per["agreement_ordered"] = per.pop("sided") / (per["sided_total"])
    per["agreement_all"] = per["consistent"] / per["preferences"]
    per = per.drop(columns="sided_total")
    per.index = per.index.astype(str)
    per["position_bias"] = position_bias(prefs).reindex(per.index)
    kappa = annotator_kappa(prefs).set_index("annotator")
    per["kappa"] = kappa["kappa"].reindex(per.index)
    per["shared"] = kappa["shared"].reindex(per.index).fillna(0.0)
    for count in _COUNT_COLUMNS:  # weighed by integer counts: whole numbers
        per[count] = per[count].round().astype(np.int64)
    agreement = (
        float(weighted["consistent"].sum() / weighted["n"].sum())
        if len(classified)
        else float("nan")
    )
    cycle_rows = []
    for query, part in prefs.groupby("query", sort=True):
        comps = comparisons_from_arrays(
            part["winner"].to_numpy(dtype=object),
            part["loser"].to_numpy(dtype=object),
            part["tie"].to_numpy().astype(bool),
            part["annotator"].to_numpy(dtype=object),
            counts=_weights(part) if "count" in part.columns else None,
        )
        for cycle in majority_preference_cycles(comps):
            cycle_rows.append(
                {"query": str(query), "length": len(cycle), "cycle": " > ".join(cycle)}
            )
    cycles = pd.DataFrame(cycle_rows, columns=["query", "length", "cycle"])
    return QualityReport(items, pairs, agreement, per.reset_index(), cycles)
