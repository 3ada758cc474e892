"""What the store holds, for ``orlbuild systems list`` and ``orlbuild collections list``
(docs/commands.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from orlbuild.store.listing import build_counts, system_counts
from orlbuild.store.status import STATUS_COUNTS, store_status

if TYPE_CHECKING:
    from sqlalchemy import Engine

__all__ = ["COLLECTION_COLUMNS", "list_collections_counted", "list_systems_counted"]

#: The columns of :func:`list_collections_counted`.
COLLECTION_COLUMNS = ("collection", *STATUS_COUNTS[:-1], "systems", "batches", "builds")


def list_systems_counted(engine: Engine, collection: str | None = None) -> pd.DataFrame:
    """Every system with a run: ``collection, system, runs, queries, rows``.

    Parameters
    ----------
    engine
        The store.
    collection
        Only this collection (an error naming it when it does not exist).
    """
    return system_counts(engine, collection)


def list_collections_counted(engine: Engine, collection: str | None = None) -> pd.DataFrame:
    """Every collection with its counts: :data:`COLLECTION_COLUMNS`.

    ``queries``, ``items``, ``annotators``: the names stored; ``listwise``,
    ``pairwise``, ``graded``: judgment rows; ``systems``: systems with a run;
    ``batches``: ingested files; ``builds``: ORL builds.
    """
    collections = store_status(engine, collection)["collections"]
    builds = build_counts(engine)
    rows = [
        {
            "collection": name,
            **{key: counts[key] for key in STATUS_COUNTS[:-1]},
            "systems": len(counts["runs"]),
            "batches": counts["batches"],
            "builds": builds.get(name, 0),
        }
        for name, counts in collections.items()
    ]
    return pd.DataFrame(rows, columns=list(COLLECTION_COLUMNS))
