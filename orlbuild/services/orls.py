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

from orlbuild.orl_io.writing import diff_orl_entries, export_orls
from orlbuild.store import builds as stored_builds
from orlbuild.store.builds import get_build, list_builds, load_build_entries
from orlbuild.vocabulary import ExportFormat

if TYPE_CHECKING:
    from orlbuild.store.engine import Bind

__all__ = [
    "BuildDiff",
    "BuildEntries",
    "BuildExport",
    "BuildRecord",
    "diff_builds",
    "export_build",
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
    """The items that moved tier between build ``a`` and build ``b``."""

    a: BuildRecord
    b: BuildRecord
    moved: pd.DataFrame


def list_stored_builds(bind: Bind, collection: str | None = None) -> pd.DataFrame:
    """The stored builds, newest first (:func:`orlbuild.store.builds.list_builds`).

    ``created_at`` is given as text, as every front end shows it.
    """
    frame = list_builds(bind, collection)
    frame["created_at"] = frame["created_at"].astype(str)
    return frame


def show_build(bind: Bind, build: str | int, query: str | None = None) -> BuildEntries:
    """A build (id or name) and its ORL entries, of every query or only ``query``."""
    record = get_build(bind, build)
    entries = load_build_entries(bind, record.id, None if query is None else [query])
    return BuildEntries(record, entries)


def export_build(bind: Bind, build: str | int, fmt: ExportFormat) -> BuildExport:
    """A build's ORLs as ``json``, ``tsv``, ``qrels`` or ``trec-prefs`` text.

    Formats as :func:`orlbuild.orl_io.writing.export_orls` (qrels grade = T - rank + 1).
    """
    shown = show_build(bind, build)
    text = export_orls(shown.entries, fmt, build=shown.record.to_json())
    return BuildExport(shown.record, text, len(shown.entries))


def diff_builds(bind: Bind, build_a: str | int, build_b: str | int) -> BuildDiff:
    """Per query, the items whose tier differs between two builds (ids or names)."""
    a, b = get_build(bind, build_a), get_build(bind, build_b)
    moved = diff_orl_entries(load_build_entries(bind, a.id), load_build_entries(bind, b.id))
    return BuildDiff(a, b, moved)
