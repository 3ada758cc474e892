"""The listwise route (docs/tiers-and-audit.md, "Build routes").

* ``direct``: one list per query used as is (its tiers are the ORL's tiers);
  decisions are recorded with the rule ``same annotator tier``.
* ``bt``: every list is expanded into its implied pairwise preferences (items
  in the same tier imply none) and aggregated with Bradley-Terry.
* ``plackett-luce``: choix's ranking estimators on the strict rankings (a
  list with tied items is an error naming the query and the annotator).
* ``borda``: one minus the mean normalised rank (transparent fallback).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from orlbuild.builders.estimation.strength_models import (
    BordaModel,
    BradleyTerryModel,
    PlackettLuceModel,
    RankedLists,
    StrengthModel,
)
from orlbuild.builders.pairwise_data import ListCodes, comparisons_from_lists, group_positions
from orlbuild.builders.parameters import BuildParameters
from orlbuild.builders.tiering.query_orl import orl_from_model
from orlbuild.records import QueryBuildError, QueryORL, TieDecision

__all__ = ["direct_orl", "listwise_query_orl", "ranked_lists"]


def ranked_lists(frame: pd.DataFrame) -> RankedLists:
    """Index the lists of one query (one list per annotator).

    Parameters
    ----------
    frame
        Columns ``annotator``, ``item``, ``rank``.
    """
    codes = ListCodes.of(frame)
    lists, annotators = [], []
    for block in group_positions(codes.annotators, within=codes.ranks):
        lists.append((codes.items[block], codes.ranks[block]))
        annotators.append(int(codes.annotators[block[0]]))
    return RankedLists(
        codes.item_names,
        lists,
        np.asarray(annotators, dtype=np.int64),
        comparisons_from_lists(frame),
    )


def direct_orl(query: str, frame: pd.DataFrame) -> QueryORL:
    """The ORL of a query judged by a single list, taken as it is.

    Parameters
    ----------
    query
        Query id.
    frame
        The list: columns ``item`` and ``rank`` (1 best, ties allowed).

    Raises
    ------
    QueryBuildError
        When the ranks are not consecutive from 1 (``scoring.ORL`` would reject them).
    """
    ranks = dict(zip(frame["item"].astype(str), frame["rank"].astype(int), strict=True))
    levels = sorted(set(ranks.values()))
    if levels != list(range(1, len(levels) + 1)):
        raise QueryBuildError(query, f"list ranks {levels} are not consecutive from 1")
    ordered = sorted(ranks, key=lambda item: (ranks[item], item))
    tiers: list[list[str]] = [[] for _ in levels]
    decisions: list[TieDecision] = []
    leaders: dict[int, str] = {}
    for item in ordered:
        rank = ranks[item]
        if rank not in leaders:
            if leaders:
                previous = leaders[rank - 1]
                decisions.append(_direct_decision(query, previous, item, ranks, tied=False))
            leaders[rank] = item
        else:
            decisions.append(_direct_decision(query, leaders[rank], item, ranks, tied=True))
        tiers[rank - 1].append(item)
    scores = {item: float(rank) for item, rank in ranks.items()}
    return QueryORL(query, tiers, scores, dict.fromkeys(scores), decisions)


def _direct_decision(
    query: str, leader: str, item: str, ranks: dict[str, int], *, tied: bool
) -> TieDecision:
    return TieDecision.without_test(
        query,
        leader,
        item,
        float(ranks[leader]),
        float(ranks[item]),
        tied=tied,
        rule="same annotator tier" if tied else "lower annotator tier",
    )


def _strict(query: str, frame: pd.DataFrame) -> None:
    repeated = frame.duplicated(["annotator", "rank"])
    if repeated.any():
        row = frame[repeated].iloc[0]
        raise QueryBuildError(
            query,
            f"plackett-luce needs strict rankings but annotator {row['annotator']!r} "
            f"ties items at rank {int(row['rank'])}; use --method bt or borda",
        )


def _model(query: str, frame: pd.DataFrame, params: BuildParameters) -> StrengthModel:
    if params.method == "bt":
        return BradleyTerryModel(comparisons_from_lists(frame), params.reg, str(params.solver))
    if params.method == "plackett-luce":
        _strict(query, frame)
        return PlackettLuceModel(ranked_lists(frame), params.reg, str(params.solver))
    return BordaModel(ranked_lists(frame))


def listwise_query_orl(
    query: str, frame: pd.DataFrame, params: BuildParameters, rng: np.random.Generator
) -> QueryORL:
    """Build the ORL of one query from its listwise judgments.

    Parameters
    ----------
    query
        Query id.
    frame
        Columns ``annotator``, ``item``, ``rank`` (lists may differ in length).
    params
        Resolved parameters (``method`` is direct, bt, plackett-luce or borda).
    rng
        Random generator of the query.

    Raises
    ------
    QueryBuildError
        Naming the query and the cause.
    """
    if params.method == "direct":
        return direct_orl(query, frame)
    return orl_from_model(query, _model(query, frame, params), params, rng)
