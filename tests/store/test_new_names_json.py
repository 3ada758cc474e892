"""New names of a first ingest go into SQLite as JSON arrays unpacked by ``json_each``
(``store/bulk.py``, ``NameIds._insert_new``; docs/performance.md, "Ingesting large
vocabularies").

The names must come back byte for byte (quotes, backslashes, non-ASCII, characters
JSON escapes, text that looks like a JSON number or literal), with the ids each row
refers to, and the ids must be dense, as when each name was bound by ``executemany``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import orlbuild.ingest.rows as rows_module
import orlbuild.store.bulk as bulk_module
from orlbuild.services.ingests import ingest_file
from tests.stores import store_engine

ODD = [
    'say "hi"',
    "back\\slash",
    "\\u0041",
    "caf\u00e9",
    "\u65e5\u672c",
    "emoji \U0001f600",
    # (control characters such as "bell\x07" and "del\x7f" are refused in ids: issue 39)
    "tab\\t",
    "narrow\u202fnbsp",
    "123",
    "1.50",
    "null",
    "true",
    "[1, 2]",
    "{}",
    "x'y",
    "nb\u00a0sp",
]


def test_new_names_come_back_exactly_with_their_ids(
    migrated_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rows_module, "CHUNK_ROWS", 5)  # several chunks of new names
    monkeypatch.setattr(bulk_module, "JSON_NAMES", 3)  # several JSON arrays per chunk
    rows = [(f"q{i % 4}", ODD[i], ODD[(i + 1) % len(ODD)]) for i in range(len(ODD))]
    path = tmp_path / "odd.tsv"
    path.write_text(
        "query\tannotator\twinner\tloser\ttie\n"
        + "".join(f"{q}\ta\t{w}\t{lo}\t0\n" for q, w, lo in rows),
        encoding="utf-8",
    )
    with store_engine(migrated_db_url) as engine:
        ingest_file(engine, "pairwise", path)
        with engine.connect() as connection:
            stored = connection.exec_driver_sql(
                "SELECT q.name, w.name, l.name FROM pairwise_judgments p "
                "JOIN queries q ON q.id = p.query_id JOIN items w ON w.id = p.winner_id "
                "JOIN items l ON l.id = p.loser_id ORDER BY p.id"
            ).all()
            items = connection.exec_driver_sql("SELECT id, name FROM items ORDER BY id").all()
            if connection.dialect.name == "sqlite":
                types = connection.exec_driver_sql("SELECT DISTINCT typeof(name) FROM items").all()
                assert types == [("text",)]
    assert sorted(tuple(r) for r in stored) == sorted(rows)
    assert sorted(name for _, name in items) == sorted(ODD)
    ids = [i for i, _ in items]
    assert ids == list(range(ids[0], ids[0] + len(ODD)))


@pytest.mark.parametrize(
    "names",
    [
        ["msmarco_passage_00_000000001", "d2", "caf\u00e9", "\U0001f600"],
        ["one"],
        [],
        *([f"plain{i}", odd, "x"] for i, odd in enumerate(ODD)),
        ['"', '""', "a,b"],
    ],
)
def test_the_json_text_of_new_names_holds_them_exactly(names: list[str]) -> None:
    import json

    text = bulk_module._json_array(names)
    assert json.loads(text) == names
    if names and all(n.isprintable() and '"' not in n and "\\" not in n for n in names):
        assert text == '["' + '","'.join(names) + '"]'  # joined, not encoded name by name
