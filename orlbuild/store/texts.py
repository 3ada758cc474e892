"""Query and item text in the store: text batches, the current text of a name, deletion.

A text batch (:class:`~orlbuild.store.models.TextBatch`) stores only the texts
that were new to the collection, or that replaced a stored text when the
caller allowed it; a text found already stored is counted, not stored again,
and a file that brings nothing new stores no batch (a no-op). The text of a
query or an item is the one of its newest batch, so that a replacement keeps
the replaced text and deleting the replacing batch brings it back
(docs/input-formats.md, "Query and item text").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Protocol

import pandas as pd
from sqlalchemy import Connection, Engine, delete, func, insert, select, update

from orlbuild.errors import StoreError
from orlbuild.store.bulk import IN_LIST_CHUNK, NameIds, created_collection
from orlbuild.store.driver_errors import database_errors
from orlbuild.store.engine import Bind, connect, write_transaction
from orlbuild.store.models import (
    Build,
    Collection,
    Item,
    ItemText,
    OrlEntry,
    Query,
    QueryText,
    TextBatch,
)
from orlbuild.store.read import BATCH_COLUMNS

__all__ = [
    "TEXT_COLUMNS",
    "NewTexts",
    "StoredTexts",
    "TextRow",
    "collection_names",
    "current_texts",
    "delete_text_batch",
    "list_text_batches",
    "store_texts",
]

#: The text columns of each ``of``, in the order of a row's ``fields``.
TEXT_COLUMNS: dict[str, tuple[str, str, str]] = {
    "queries": ("text", "description", "narrative"),
    "items": ("title", "text", "url"),
}

_MODELS: dict[str, tuple[Any, Any, str]] = {
    "queries": (Query, QueryText, "query_id"),
    "items": (Item, ItemText, "item_id"),
}

Fields = tuple[str | None, str | None, str | None]


class TextRow(Protocol):
    """One text to store: the line it came from, the name, the fields (:data:`TEXT_COLUMNS`)."""

    @property
    def line(self) -> int: ...

    @property
    def name(self) -> str: ...

    @property
    def fields(self) -> Fields: ...


@dataclass(frozen=True)
class NewTexts:
    """One text file, read while it is stored.

    Attributes
    ----------
    collection, of
        Where the texts go and whose they are (``queries`` or ``items``).
    file_name, created_by
        Provenance.
    chunks
        The rows, read once; a bad line raises while they are consumed,
        inside the transaction, which then stores nothing.
    finished
        Called once the chunks are consumed: the content's SHA-256, the
        format read and the number of lines read.
    reading
        The reading options in words (``--of items --format tsv``).
    replace
        Whether a text different from the stored one replaces it (in a new
        batch) instead of being refused.
    """

    collection: str
    of: str
    file_name: str
    created_by: str
    chunks: Iterable[Sequence[TextRow]]
    finished: Callable[[], tuple[str, str, int]]
    reading: str
    replace: bool = False


@dataclass(frozen=True)
class StoredTexts:
    """What :func:`store_texts` did.

    Attributes
    ----------
    batch_id
        The new batch, or ``None`` when every text was already stored (a no-op).
    added, replaced, unchanged
        Texts new to the collection, texts that replaced another, texts
        already stored as they are.
    """

    batch_id: int | None
    added: int
    replaced: int
    unchanged: int


def collection_names(bind: Bind, collection: str, of: str) -> frozenset[str]:
    """The query or item names the collection knows: its judgments, runs and ORLs.

    An unknown collection names nothing.
    """
    name_model = _MODELS[of][0]
    column = OrlEntry.query if of == "queries" else OrlEntry.item
    with connect(bind) as connection:
        cid = connection.scalar(select(Collection.id).where(Collection.name == collection))
        if cid is None:
            return frozenset()
        names = set(
            connection.scalars(select(name_model.name).where(name_model.collection_id == cid))
        )
        names.update(
            connection.scalars(
                select(column)
                .distinct()
                .join(Build, Build.id == OrlEntry.build_id)
                .where(Build.collection_id == cid)
            )
        )
    return frozenset(names)


def _current_by_ids(
    connection: Connection, of: str, ids: Sequence[int]
) -> dict[int, tuple[int, Fields]]:
    """Id -> (batch, fields) of the newest stored text of each id that has one."""
    _, text_model, ref = _MODELS[of]
    columns = [getattr(text_model, c) for c in TEXT_COLUMNS[of]]
    found: dict[int, tuple[int, Fields]] = {}
    wanted = sorted(set(ids))
    for start in range(0, len(wanted), IN_LIST_CHUNK):
        part = wanted[start : start + IN_LIST_CHUNK]
        ref_column = getattr(text_model, ref)
        stmt = (
            select(ref_column, text_model.batch_id, *columns)
            .where(ref_column.in_(part))
            .order_by(text_model.batch_id)
        )
        for row in connection.execute(stmt):
            found[int(row[0])] = (int(row[1]), (row[2], row[3], row[4]))
    return found


def store_texts(engine: Engine, texts: NewTexts) -> StoredTexts:
    """Store the texts of a file in one transaction: new ones, and replacements if allowed.

    Raises
    ------
    StoreError
        A text that differs from the stored one of the same name, when
        ``texts.replace`` is false (nothing is stored).
    """
    with database_errors(engine):
        return _store_texts(engine, texts)


def _store_texts(engine: Engine, texts: NewTexts) -> StoredTexts:
    name_model, text_model, ref = _MODELS[texts.of]
    columns = TEXT_COLUMNS[texts.of]
    added = replaced = unchanged = 0
    batch_id: int | None = None
    with write_transaction(engine) as connection:
        # the collection is created only when a text is kept (a file that keeps none is a no-op)
        cid = connection.scalar(select(Collection.id).where(Collection.name == texts.collection))
        names: NameIds | None = None
        for chunk in texts.chunks:
            if not chunk:
                continue
            if names is None:
                new_collection = cid is None
                if cid is None:
                    cid, new_collection = created_collection(connection, texts.collection)
                names = NameIds(connection, name_model, cid, new=new_collection)
            ids = names.ids([row.name for row in chunk]).tolist()
            current = _current_by_ids(connection, texts.of, ids)
            rows: list[dict[str, Any]] = []
            for row, name_id in zip(chunk, ids, strict=True):
                stored = current.get(name_id)
                if stored is not None and tuple(stored[1]) == tuple(row.fields):
                    unchanged += 1
                    continue
                if stored is not None and not texts.replace:
                    what = "query" if texts.of == "queries" else "item"
                    raise StoreError(
                        f"{texts.file_name}, line {row.line}: {what} {row.name!r} already "
                        f"has another text (text batch {stored[0]}); pass --replace to store this "
                        "one as a new batch (the stored text is kept in its batch)"
                    )
                replaced += stored is not None
                added += stored is None
                rows.append({ref: name_id, **dict(zip(columns, row.fields, strict=True))})
            if rows and batch_id is None:
                assert cid is not None
                batch_id = _new_batch(connection, cid, texts)
            if rows:
                for row_values in rows:
                    row_values["batch_id"] = batch_id
                connection.execute(insert(text_model), rows)
        sha256, fmt, lines = texts.finished()
        if batch_id is not None:
            connection.execute(
                update(TextBatch)
                .where(TextBatch.id == batch_id)
                .values(
                    sha256=sha256,
                    format=fmt,
                    lines_read=lines,
                    row_count=added + replaced,
                    replaced=replaced,
                )
            )
    return StoredTexts(batch_id, added, replaced, unchanged)


def _new_batch(connection: Connection, cid: int, texts: NewTexts) -> int:
    """Insert the batch row (its digest and counts are written once the file is read)."""
    inserted = connection.execute(
        insert(TextBatch).values(
            collection_id=cid,
            of=texts.of,
            format="",
            file_name=texts.file_name[:1024],
            sha256="",
            row_count=0,
            replaced=0,
            lines_read=0,
            reading=texts.reading[:200],
            created_at=datetime.now(timezone.utc),
            created_by=texts.created_by,
        )
    ).inserted_primary_key
    assert inserted is not None
    return int(inserted[0])


def current_texts(
    bind: Bind, collection: str, of: str, names: Iterable[str] | None = None
) -> dict[str, Fields]:
    """Name -> fields (:data:`TEXT_COLUMNS`) of the newest stored text of each name.

    Names without a stored text (and an unknown collection) are absent;
    ``names=None`` gives every stored text of the collection.
    """
    name_model, text_model, ref = _MODELS[of]
    columns = [getattr(text_model, c) for c in TEXT_COLUMNS[of]]
    ref_column = getattr(text_model, ref)
    base = (
        select(name_model.name, *columns)
        .join(name_model, name_model.id == ref_column)
        .join(Collection, Collection.id == name_model.collection_id)
        .where(Collection.name == collection)
        .order_by(text_model.batch_id)
    )
    found: dict[str, Fields] = {}
    with connect(bind) as connection:
        if names is None:
            parts: list[list[str] | None] = [None]
        else:
            wanted = sorted(set(names))
            parts = [wanted[i : i + IN_LIST_CHUNK] for i in range(0, len(wanted), IN_LIST_CHUNK)]
        for part in parts:
            stmt = base if part is None else base.where(name_model.name.in_(part))
            for row in connection.execute(stmt):
                found[str(row[0])] = (row[1], row[2], row[3])
    return found


def list_text_batches(bind: Bind, collection: str | None = None) -> pd.DataFrame:
    """The text batches as rows of ``orlbuild batches list`` (kind ``text``), oldest first."""
    stmt = (
        select(
            TextBatch.id,
            Collection.name,
            TextBatch.file_name,
            TextBatch.sha256,
            TextBatch.row_count,
            TextBatch.created_at,
            TextBatch.created_by,
            TextBatch.reading,
        )
        .join(Collection, Collection.id == TextBatch.collection_id)
        .order_by(TextBatch.id)
    )
    if collection is not None:
        stmt = stmt.where(Collection.name == collection)
    with connect(bind) as connection:
        rows = connection.execute(stmt).all()
    frame = pd.DataFrame.from_records(
        [(r[0], r[1], "text", r[2], r[3], r[4], r[5], r[6], r[7], "") for r in rows],
        columns=BATCH_COLUMNS,
    )
    return frame.astype({"id": "int64", "row_count": "int64"})


def delete_text_batch(engine: Engine, batch_id: int) -> int:
    """Delete a text batch and its texts; returns the number of texts removed.

    The texts it had replaced are again the current ones.

    Raises
    ------
    StoreError
        No text batch has this id.
    """
    with database_errors(engine), write_transaction(engine) as connection:
        row = connection.execute(
            select(TextBatch.of, TextBatch.row_count).where(TextBatch.id == batch_id)
        ).first()
        if row is None:
            raise StoreError(
                f"no text batch with id {batch_id}; see `orlbuild batches list` (kind text)"
            )
        text_model = _MODELS[row.of][1]
        connection.execute(delete(text_model).where(text_model.batch_id == batch_id))
        connection.execute(delete(TextBatch).where(TextBatch.id == batch_id))
    return int(row.row_count)


def text_count(bind: Bind, collection: str, of: str) -> int:
    """How many names of the collection have a stored text."""
    name_model, text_model, ref = _MODELS[of]
    ref_column = getattr(text_model, ref)
    stmt = (
        select(func.count(func.distinct(ref_column)))
        .join(name_model, name_model.id == ref_column)
        .join(Collection, Collection.id == name_model.collection_id)
        .where(Collection.name == collection)
    )
    with connect(bind) as connection:
        return int(connection.scalar(stmt) or 0)
