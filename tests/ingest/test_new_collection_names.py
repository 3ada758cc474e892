"""Names of a collection the ingest creates go in without a lookup (``store/bulk.py``).

No other transaction can store names in a collection created by the ingest's
own transaction, so every name is new: SQLite takes the next ids, PostgreSQL
draws them from the table's sequence and sends the names by one ``COPY``
(docs/performance.md, "Ingesting large vocabularies"). A later file into the
same collection looks its names up as before. Either way each stored
judgment must name the items of its line.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import select

import orlbuild.ingest.rows as rows_module
from orlbuild.services.ingests import ingest_file
from orlbuild.store.bulk import created_collection
from orlbuild.store.models import Item
from orlbuild.store.read import load_pairwise
from tests.stores import store_engine

Write = Callable[[str, str | bytes], Path]


def _rows(start: int, stop: int) -> list[tuple[str, str, str]]:
    """Rows whose items are new in every chunk and also repeat earlier ones."""
    return [
        (f"q{i % 7}", f"item_{i * 7919 % 1000:04d}", f"item_{i:04d}") for i in range(start, stop)
    ]


def _text(rows: list[tuple[str, str, str]]) -> str:
    return "query\twinner\tloser\n" + "".join("\t".join(r) + "\n" for r in rows)


def _stored(engine: object, collection: str) -> list[tuple[str, str, str]]:
    frame = load_pairwise(engine, collection)  # type: ignore[arg-type]
    return sorted(zip(frame["query"], frame["winner"], frame["loser"], strict=True))


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rows_module, "CHUNK_ROWS", 64)


def test_names_of_a_new_collection_then_of_an_existing_one(
    migrated_db_url: str, write_file: Write, small_chunks: None
) -> None:
    first, second = _rows(1, 400), _rows(300, 700)
    first = [r for r in first if r[1] != r[2]]
    second = [r for r in second if r[1] != r[2]]
    with store_engine(migrated_db_url) as engine:
        ingest_file(engine, "pairwise", write_file("a.tsv", _text(first)), collection="c")
        assert _stored(engine, "c") == sorted(first)
        ingest_file(engine, "pairwise", write_file("b.tsv", _text(second)), collection="c")
        assert _stored(engine, "c") == sorted(first + second)
        with engine.connect() as connection:
            names = connection.execute(select(Item.name)).scalars().all()
    assert len(names) == len(set(names)) == len({n for r in first + second for n in r[1:]})


def test_ids_drawn_with_gaps_still_name_the_right_items(
    migrated_db_url: str, write_file: Write, small_chunks: None
) -> None:
    """PostgreSQL: ids drawn from the sequence need not be consecutive."""
    if not migrated_db_url.startswith("postgresql"):
        pytest.skip("the sequence is PostgreSQL's")
    rows = [r for r in _rows(1, 300) if r[1] != r[2]]
    with store_engine(migrated_db_url) as engine:
        with engine.begin() as connection:
            connection.exec_driver_sql(
                "ALTER SEQUENCE " + "items_id_seq" + " INCREMENT BY 3"  # gaps between ids
            )
        ingest_file(engine, "pairwise", write_file("a.tsv", _text(rows)), collection="c")
        assert _stored(engine, "c") == sorted(rows)
        with engine.connect() as connection:
            ids = connection.execute(select(Item.id).order_by(Item.id)).scalars().all()
    assert len(ids) > 64 and all(b - a == 3 for a, b in itertools.pairwise(ids))


def test_created_collection_says_whether_this_transaction_created_it(
    migrated_db_url: str,
) -> None:
    with store_engine(migrated_db_url) as engine:
        with engine.begin() as connection:
            cid, created = created_collection(connection, "c")
            assert created and created_collection(connection, "c") == (cid, False)
        with engine.begin() as connection:
            assert created_collection(connection, "c") == (cid, False)
