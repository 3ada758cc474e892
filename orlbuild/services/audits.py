"""Audits of stored builds: their tie decisions with intervals, and auditor overrides.

The use cases behind ``orlbuild audit [BUILD]`` and ``orlbuild audit override``:
read the decisions (:mod:`orlbuild.store.builds`), summarise how each query
was tiered (:func:`orlbuild.services.builds.tiering_by_query`), and derive a
build by an override (:func:`orlbuild.services.builds.override_build`). The
CLI only renders the results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from orlbuild.records import OverrideRequest
from orlbuild.services.builds import override_build, tiering_by_query
from orlbuild.services.texts import display_texts, shorten
from orlbuild.store.builds import (
    BuildRecord,
    build_versions,
    get_build,
    list_builds,
    load_annotator_reliabilities,
    load_build_entries,
    load_query_orders,
    load_under_judged,
)
from orlbuild.store.builds import load_tie_decisions as _load_tie_decisions

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from orlbuild.store.engine import Bind

__all__ = [
    "BOUNDARY_COLUMNS",
    "OVERRIDE_COLUMNS",
    "BuildAudit",
    "audit_builds",
    "derive_override",
]

#: Columns of :attr:`BuildAudit.boundaries`.
BOUNDARY_COLUMNS = [
    "build",
    "query",
    "above_tier",
    "opens",
    "weakest_above",
    "weakest_below",
    "weakest_z",
    "weakest_critical",
    "crossing_pairs",
    "unbacked_pairs",
    "backed",
]

#: Columns of :attr:`BuildAudit.overrides`.
OVERRIDE_COLUMNS = ["build", "query", "action", "argument", "reason", "created_by", "created_at"]


@dataclass(frozen=True)
class BuildAudit:
    """How the tiers of some builds were decided, and the overrides behind derived builds.

    Attributes
    ----------
    summary
        One row per (build, query): :data:`orlbuild.services.builds.TIERING_COLUMNS`.
    decisions
        Every tie decision, newest build first, with the leader's and the
        item's 95% intervals (``leader_low``, ``leader_high``, ``item_low``,
        ``item_high``).
    overrides
        :data:`OVERRIDE_COLUMNS`, ``created_at`` as text.
    boundaries
        :data:`BOUNDARY_COLUMNS`: per tier boundary, its weakest crossing pair
        and how many of its crossing pairs no test backs (``backed``: none).
    reliabilities
        ``build, annotator, reliability, low, high, comparisons, flips``
        (``--annotators reliability`` builds).
    """

    summary: pd.DataFrame
    decisions: pd.DataFrame
    overrides: pd.DataFrame
    boundaries: pd.DataFrame = field(default_factory=pd.DataFrame)
    reliabilities: pd.DataFrame = field(default_factory=pd.DataFrame)


def audit_builds(
    bind: Bind, build: str | int | None = None, query: str | None = None, *, texts: bool = False
) -> BuildAudit:
    """The tie decisions of one build (id or name) or of every build, and their overrides.

    Parameters
    ----------
    bind
        The store.
    build
        Build id or name; ``None``: every stored build.
    query
        Only this query.
    texts
        Add ``leader_text`` and ``item_text`` to the decisions: the items' stored
        titles or texts, shortened (``orlbuild ingest text``; left out when none is stored).
    """
    ids = [get_build(bind, build).id] if build else list_builds(bind)["id"].tolist()
    records = {i: get_build(bind, i) for i in ids}
    parameters = {i: r.parameters for i, r in records.items()}
    summary, decisions = tiering_by_query(_load_tie_decisions(bind, ids, query), parameters)
    summary = _with_backing(bind, summary, ids)
    decisions = _with_intervals(bind, decisions)
    if texts:
        decisions = _with_texts(bind, decisions, {i: r.collection for i, r in records.items()})
    overrides = pd.DataFrame(
        [{"build": i, **o} for i, r in records.items() for o in r.overrides],
        columns=OVERRIDE_COLUMNS,
    )
    if query is not None:
        overrides = overrides[overrides["query"] == query]
    overrides["created_at"] = overrides["created_at"].astype(str)
    reliabilities = pd.concat(
        [load_annotator_reliabilities(bind, i).assign(build=i) for i in ids], ignore_index=True
    )
    reliabilities = reliabilities[["build", *reliabilities.columns[:-1]]]
    return BuildAudit(summary, decisions, overrides, _boundaries(decisions), reliabilities)


def _with_texts(bind: Bind, decisions: pd.DataFrame, collections: dict[int, str]) -> pd.DataFrame:
    """The decisions with ``leader_text`` and ``item_text`` beside ``leader`` and ``item``."""
    if not len(decisions):
        return decisions
    collection = decisions["build"].map(collections)
    shown: dict[str, list[str]] = {"leader": [""] * len(decisions), "item": [""] * len(decisions)}
    found = False
    for name in collection.unique():
        rows = (collection == name).to_numpy().nonzero()[0]
        part = decisions.iloc[rows]
        names = {str(n) for n in part["leader"]} | {str(n) for n in part["item"]}
        texts = display_texts(bind, str(name), "items", names)
        found = found or bool(texts)
        for column, values in shown.items():
            for row, item in zip(rows, part[column], strict=True):
                values[row] = shorten(texts.get(str(item), ""), AUDIT_TEXT_WIDTH)
    if not found:
        return decisions
    with_texts = decisions.copy()
    for column in ("leader", "item"):
        at = with_texts.columns.get_loc(column) + 1
        with_texts.insert(at, f"{column}_text", shown[column])
    return with_texts


#: Characters of an item's text in the audit's decisions (two per row).
AUDIT_TEXT_WIDTH = 40


def _boundaries(decisions: pd.DataFrame) -> pd.DataFrame:
    """The decisions that open a tier, with their weakest crossing pair."""
    opened = decisions[decisions["decision"] == "separated"].copy()
    opened["above_tier"] = opened.groupby(["build", "query"]).cumcount() + 1
    opened["opens"] = opened["item"]
    opened["backed"] = opened["unbacked_pairs"].map(lambda v: None if pd.isna(v) else bool(v == 0))
    return opened[BOUNDARY_COLUMNS].reset_index(drop=True)


def _with_backing(bind: Bind, summary: pd.DataFrame, ids: list[int]) -> pd.DataFrame:
    """Add per query the stated orders, those no test backs, and the under-judged items."""
    notes: dict[tuple[int, str], tuple[int, int]] = {}
    flagged: dict[tuple[int, str], str] = {}
    for build_id in ids:
        for query, counts in load_query_orders(bind, build_id).items():
            notes[build_id, query] = counts
        for query, items in load_under_judged(bind, build_id).items():
            flagged[build_id, query] = ", ".join(sorted(items))
    keys = list(zip(summary["build"].astype(int), summary["query"].astype(str), strict=True))
    out = summary.copy()
    out["unbacked_orders"] = [notes.get(k, (0, 0))[1] for k in keys]
    out["under_judged"] = [flagged.get(k, "") for k in keys]
    return out


def _with_intervals(bind: Bind, decisions: pd.DataFrame) -> pd.DataFrame:
    """Add the leader's and the item's 95% intervals to each decision."""
    parts = []
    for build_id in decisions["build"].unique().tolist():
        part = decisions[decisions["build"] == build_id]
        entries = load_build_entries(bind, int(build_id))[["query", "item", "low", "high"]]
        leader = entries.rename(
            columns={"item": "leader", "low": "leader_low", "high": "leader_high"}
        )
        item = entries.rename(columns={"low": "item_low", "high": "item_high"})
        parts.append(
            part.merge(leader, on=["query", "leader"], how="left").merge(
                item, on=["query", "item"], how="left"
            )
        )
    return pd.concat(parts, ignore_index=True) if parts else decisions


def derive_override(
    engine: Engine, build: str | int, request: OverrideRequest
) -> tuple[BuildRecord, dict[str, Any]]:
    """Derive a build from ``build`` with one override; ``build`` stays untouched.

    Parameters are those of :func:`orlbuild.services.builds.override_build`.

    Returns
    -------
    record : BuildRecord
        The new build.
    override : dict
        ``build, parent, query, action, argument, reason, by``: what was done, by
        whom; and ``version``, the name the new build is reachable by
        (``NAME@N``, docs/tiers-and-audit.md, "Build names"; ``None`` for an unnamed build).
    """
    new_id = override_build(engine, build, request)
    record = get_build(engine, new_id)
    override = {
        "build": new_id,
        "parent": record.parent_id,
        "query": request.query,
        "action": request.action,
        "argument": request.argument,
        "reason": request.reason,
        "by": record.created_by,
        "version": _version_name(engine, record.name, new_id),
    }
    return record, override


def _version_name(engine: Engine, name: str | None, build_id: int) -> str | None:
    """``NAME@N`` of a named build (it keeps its parent's name, as a new version)."""
    if name is None:
        return None
    versions = build_versions(engine, name)
    return f"{name}@{versions.index(build_id) + 1}" if build_id in versions else None
