"""Stored ORLs: list the builds, show one build's tiers, export them, diff two builds.

The use cases behind ``orlbuild orl list|show|export|diff``: each reads the
store (:mod:`orlbuild.store.builds`) and hands back plain frames and records;
the CLI only renders them. Export formats and the diff are those of
:mod:`orlbuild.orl_io.writing` (docs/input-formats.md, "Input formats": ORL exports).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from orlbuild.builders.tiering.equivalence import state_changes
from orlbuild.errors import ConfigError
from orlbuild.orl_io.writing import backed_entries, diff_orl_entries, export_orls
from orlbuild.store import builds as stored_builds
from orlbuild.store.builds import (
    get_build,
    list_builds,
    load_build_entries,
    load_build_judgments,
    load_query_orls,
    load_tie_decisions,
    load_under_judged,
)
from orlbuild.vocabulary import ExportFormat, Source

if TYPE_CHECKING:
    from orlbuild.store.engine import Bind

__all__ = [
    "DIFF_CHANGES",
    "BuildDiff",
    "BuildEntries",
    "BuildExport",
    "BuildRecord",
    "diff_builds",
    "export_build",
    "item_rank_intervals",
    "list_stored_builds",
    "show_build",
]

#: A stored build's metadata, as the services hand it to the front ends.
BuildRecord = stored_builds.BuildRecord


@dataclass(frozen=True)
class BuildEntries:
    """One stored build and its ORL entries (:data:`orlbuild.store.builds.ENTRY_COLUMNS`)."""

    record: BuildRecord
    entries: pd.DataFrame

    def tiers_by_query(self) -> dict[str, list[dict[str, Any]]]:
        """Query -> tiers, each with its rank and its items' scores and intervals."""
        out: dict[str, list[dict[str, Any]]] = {}
        for (query, _rank), part in self.entries.groupby(["query", "rank"], sort=True):
            items = part.drop(columns=["query", "rank"]).to_dict("records")
            tier = {"rank": int(part["rank"].iloc[0]), "items": items}
            out.setdefault(str(query), []).append(tier)
        return out


@dataclass(frozen=True)
class BuildExport:
    """A build's ORLs rendered in one export format."""

    record: BuildRecord
    text: str
    entries: int


@dataclass(frozen=True)
class BuildDiff:
    """The items that moved tier between build ``a`` and build ``b``, and per query the tested
    decisions by state (separated, equivalent, undecided) where they differ.

    Attributes
    ----------
    a, b
        The two builds.
    moved
        ``query, item, rank_a, rank_b, tiers_a, tiers_b, change``
        (:func:`orlbuild.orl_io.writing.diff_orl_entries`).
    states
        The tested decisions by state, per query where they differ.
    queries
        The queries of either build (of ``--query`` only, when given).
    """

    a: BuildRecord
    b: BuildRecord
    moved: pd.DataFrame
    states: pd.DataFrame | None = None
    queries: int = 0

    def summary(self) -> pd.DataFrame:
        """Per query with a change: how many items moved ``up``, ``down``, were ``added``
        (only in B) or ``removed`` (only in A); the words of ``moved['change']``."""
        counts = (
            pd.crosstab(self.moved["query"], self.moved["change"])
            if len(self.moved)
            else pd.DataFrame(index=pd.Index([], name="query"))
        )
        counts = counts.reindex(columns=list(DIFF_CHANGES), fill_value=0).astype("int64")
        counts.columns.name = None
        return counts.sort_index().reset_index()

    def totals(self) -> dict[str, int]:
        """The changes over every query, and the queries changed and compared."""
        counts = self.moved["change"].value_counts()
        totals = {change: int(counts.get(change, 0)) for change in DIFF_CHANGES}
        totals["queries_changed"] = int(self.moved["query"].nunique())
        totals["queries"] = self.queries
        return totals

    def headline(self) -> str:
        """One line: ``build 1 -> build 2, items: 12 moved up, 9 moved down, 1 added, 0
        removed, in 5 of 40 queries``."""
        t = self.totals()
        return (
            f"build {self.a.id} -> build {self.b.id}, items: {t['up']} moved up, {t['down']} "
            f"moved down, {t['added']} added, {t['removed']} removed, in {t['queries_changed']} "
            f"of {t['queries']} queries"
        )


#: The changes of an item between two builds, in the order the summary gives them.
DIFF_CHANGES = ("up", "down", "added", "removed")


def list_stored_builds(bind: Bind, collection: str | None = None) -> pd.DataFrame:
    """The stored builds, newest first (:func:`orlbuild.store.builds.list_builds`).

    ``created_at`` is given as text, as every front end shows it.
    """
    frame = list_builds(bind, collection)
    frame["created_at"] = frame["created_at"].astype(str)
    return frame


def show_build(
    bind: Bind, build: str | int, query: str | None = None, *, rank_intervals: bool = False
) -> BuildEntries:
    """A build (id or name) and its ORL entries, of every query or only ``query``.

    With ``rank_intervals`` the entries gain ``rank_lo`` and ``rank_hi``, each item's
    simultaneous rank interval within its query (:func:`item_rank_intervals`).
    """
    record = get_build(bind, build)
    entries = load_build_entries(bind, record.id, None if query is None else [query])
    if rank_intervals:
        intervals = item_rank_intervals(bind, record, query)
        entries = entries.merge(intervals, on=["query", "item"], how="left", validate="1:1")
    return BuildEntries(record, entries)


def item_rank_intervals(bind: Bind, record: BuildRecord, query: str | None = None) -> pd.DataFrame:
    """Simultaneous rank intervals of the items of a pairwise build's queries.

    The build stores strengths but not their covariance, so both are recomputed
    from the judgments the build read with its stored parameters (model,
    estimator, seed: the planner's evidence,
    :func:`orlbuild.builders.planning.evidence.pairwise_evidence`). The intervals are
    csranks' step-down simultaneous rank intervals from the strengths and their
    covariance (:func:`scoring.statistics.gaussian_rank_intervals`, with
    ``--mc-draws`` draws and ``alpha = sig``; a build with ``sig = 0`` uses 0.05):
    with probability at least ``1 - sig`` (asymptotically, the strengths being
    approximately normal) every item's interval holds its true rank at once
    (docs/tiers-and-audit.md, "Item rank intervals").

    Parameters
    ----------
    bind
        The store.
    record
        A build from pairwise judgments.
    query
        Only this query (all by default).

    Returns
    -------
    pandas.DataFrame
        ``query, item, rank_lo, rank_hi`` (nullable integers), one row per item
        of every query whose fit succeeded.

    Raises
    ------
    ConfigError
        The build is not from pairwise judgments (graded labels and listwise
        rankings have no covariance of strengths).
    """
    from orlbuild.builders.build import query_rng
    from orlbuild.builders.parameters import BuildParameters
    from orlbuild.builders.planning.evidence import PLANNING_SIG, pairwise_evidence
    from scoring.statistics import gaussian_rank_intervals

    if record.source != Source.pairwise.value:
        raise ConfigError(
            f"build {record.id} is {record.source}: item rank intervals need a build from "
            "pairwise judgments (the covariance of their strengths)"
        )
    params = BuildParameters.from_json(dict(record.parameters))
    orls = load_query_orls(bind, record.id)
    judgments = load_build_judgments(bind, record)
    if query is not None:
        orls = {q: orl for q, orl in orls.items() if q == query}
        judgments = judgments[judgments["query"].astype(str) == query]
    evidence, _failed = pairwise_evidence(judgments, params, {q: o.tiers for q, o in orls.items()})
    alpha = params.sig if params.sig > 0 else PLANNING_SIG
    seed = int(params.seed or 0)
    rows: list[tuple[str, str, int, int]] = []
    for found in evidence:
        if len(found.items) < 2:
            rows.extend((found.query, str(i), 1, 1) for i in found.items)
            continue
        ranks = gaussian_rank_intervals(
            found.scores,
            found.cov,
            alpha=alpha,
            draws=params.mc_draws,
            rng=query_rng(seed, found.query),
        )
        rows.extend(
            (found.query, str(item), int(lo), int(hi))
            for item, lo, hi in zip(found.items, ranks.lower, ranks.upper, strict=True)
        )
    frame = pd.DataFrame(rows, columns=["query", "item", "rank_lo", "rank_hi"])
    return frame.astype({"rank_lo": "Int64", "rank_hi": "Int64"})


def export_build(
    bind: Bind,
    build: str | int,
    fmt: ExportFormat,
    *,
    all_orders: bool = False,
    raw_cells: bool = False,
) -> BuildExport:
    """A build's ORLs as ``json``, ``tsv``, ``qrels`` or ``trec-prefs`` text.

    Formats as :func:`orlbuild.orl_io.writing.export_orls` (qrels grade = T - rank + 1).
    ``trec-prefs`` states preferences one by one, so it writes only the orders a
    test backs (:func:`orlbuild.orl_io.writing.backed_entries`) unless
    ``all_orders``; a boundary whose backing the build did not record (builds
    made before it was, ``--sig 0``, graded and ``direct``) is kept.
    """
    shown = show_build(bind, build)
    entries = shown.entries
    if fmt == "trec-prefs" and not all_orders:
        entries = backed_entries(
            entries,
            _unbacked_boundaries(bind, shown.record.id, entries),
            load_under_judged(bind, shown.record.id),
        )
    text = export_orls(entries, fmt, build=shown.record.to_json(), raw_cells=raw_cells)
    return BuildExport(shown.record, text, len(shown.entries))


def _unbacked_boundaries(bind: Bind, build_id: int, entries: pd.DataFrame) -> dict[str, set[int]]:
    """Query -> the tiers whose boundary above records crossing pairs no test backs."""
    decisions = load_tie_decisions(bind, [build_id])
    unbacked = decisions["unbacked_pairs"].fillna(0).astype("int64") > 0
    opened = decisions[(decisions["decision"] == "separated") & unbacked]
    rank = entries.set_index(["query", "item"])["rank"]
    out: dict[str, set[int]] = {}
    for query, item in zip(opened["query"], opened["item"], strict=True):
        key = (query, item)
        if key in rank.index:
            out.setdefault(str(query), set()).add(int(rank.loc[key]))
    return out


def diff_builds(
    bind: Bind, build_a: str | int, build_b: str | int, *, query: str | None = None
) -> BuildDiff:
    """Per query, the items whose tier differs between two builds (ids or names).

    Parameters
    ----------
    bind
        The store.
    build_a, build_b
        The builds, by id or name.
    query
        Only this query (``--query``); it must be in one of the builds.

    Returns
    -------
    BuildDiff

    Raises
    ------
    ConfigError
        ``query`` is in neither build.
    """
    a, b = get_build(bind, build_a), get_build(bind, build_b)
    entries_a, entries_b = load_build_entries(bind, a.id), load_build_entries(bind, b.id)
    decisions_a, decisions_b = load_tie_decisions(bind, [a.id]), load_tie_decisions(bind, [b.id])
    if query is not None:
        name = query.strip()
        if not ((entries_a["query"] == name).any() or (entries_b["query"] == name).any()):
            raise ConfigError(
                f"query {name!r} is in neither build {a.id} nor build {b.id}; "
                "see `orlbuild orl show BUILD`"
            )
        entries_a, entries_b = (e[e["query"] == name] for e in (entries_a, entries_b))
        decisions_a, decisions_b = (d[d["query"] == name] for d in (decisions_a, decisions_b))
    moved = diff_orl_entries(entries_a, entries_b)
    states = state_changes(decisions_a, decisions_b)
    queries = len(set(entries_a["query"]) | set(entries_b["query"]))
    return BuildDiff(a, b, moved, states, queries)
