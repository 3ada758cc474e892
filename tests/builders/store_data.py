"""Put judgments into a migrated store for build tests (SQLAlchemy Core on the store's models).

The builds only need rows in the judgment tables and their ingest batches, so
the tests write them directly instead of going through file ingestion.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import Any

import pandas as pd
from sqlalchemy import Connection, insert

from orlbuild.store import create_store_engine
from orlbuild.store.bulk import ensure_collection, ensure_names
from orlbuild.store.models import JUDGMENT_MODELS, Annotator, IngestBatch, Item, Query
from tests.stores import disposed


def _ids(connection: Connection, model: Any, cid: int, names: set[str]) -> dict[str, int]:
    """Get or create the named rows; name -> id."""
    ordered = sorted(names)
    return dict(zip(ordered, ensure_names(connection, model, cid, ordered).tolist(), strict=True))


def store_judgments(
    url: str, kind: str, frame: pd.DataFrame, *, collection: str = "default", file_name: str = "f"
) -> int:
    """Store ``frame`` (columns as the read API returns them) as one batch; returns its id."""
    frame = frame.copy()
    if "annotator" not in frame.columns:
        frame["annotator"] = "_"
    with disposed(create_store_engine(url)) as engine, engine.begin() as connection:
        cid = ensure_collection(connection, collection)
        item_columns = ["winner", "loser"] if kind == "pairwise" else ["item"]
        items = _ids(
            connection,
            Item,
            cid,
            set(frame[item_columns].to_numpy().ravel().astype(str)),
        )
        queries = _ids(connection, Query, cid, set(frame["query"].astype(str)))
        annotators = _ids(connection, Annotator, cid, set(frame["annotator"].astype(str)))
        digest = hashlib.sha256(frame.to_csv(index=False).encode()).hexdigest()
        batch_id = connection.execute(
            insert(IngestBatch)
            .values(
                collection_id=cid,
                kind=kind,
                file_name=file_name,
                sha256=digest,
                row_count=len(frame),
                created_at=datetime.now(timezone.utc),
                created_by="test",
            )
            .returning(IngestBatch.id)
        ).scalar_one()
        rows = []
        for rec in frame.to_dict("records"):
            row = {
                "batch_id": batch_id,
                "query_id": queries[str(rec["query"])],
                "annotator_id": annotators[str(rec["annotator"])],
            }
            if kind == "pairwise":
                row |= {
                    "winner_id": items[str(rec["winner"])],
                    "loser_id": items[str(rec["loser"])],
                    "tie": bool(rec.get("tie", 0)),
                }
            elif kind == "listwise":
                row |= {"item_id": items[str(rec["item"])], "rank": int(rec["rank"])}
            else:
                row |= {"item_id": items[str(rec["item"])], "grade": int(rec["grade"])}
            rows.append(row)
        connection.execute(insert(JUDGMENT_MODELS[kind]), rows)
    return int(batch_id)
