"""Inputs that used to end in a traceback end in one line (issue 39, items 9-11).

A ``--db`` or TOML ``[database] path`` naming a text file (``sqlite3.DatabaseError``),
id arguments beyond the backend's id columns (``NumericValueOutOfRange`` on PostgreSQL at
2^31, ``OverflowError`` on SQLite at 2^63), and JSON or TOML nested 200,000 / 100,000
levels deep (``RecursionError``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orlbuild.cli.main import app
from orlbuild.errors import InputError
from orlbuild.nesting import MAX_DEPTH, JsonDepth, checked_toml_text
from tests.pipeline_configs import MINIMAL
from tests.store_cli import cli, one_error_line, outcome, runner

DEEP_JSON = "[" * 200_000 + "]" * 200_000


@pytest.mark.parametrize(
    "args", [("status",), ("db", "current"), ("db", "upgrade"), ("orl", "list")]
)
def test_a_db_that_is_a_text_file_is_one_line(tmp_path: Path, args: tuple[str, ...]) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database\n")
    for url in (str(notes), f"sqlite:///{notes}"):
        code, out, err = cli(url, *args)
        one_error_line(code, out, err, "notes.txt", "is not an SQLite database", "--db")
    assert notes.read_text() == "not a database\n"


def test_a_toml_database_path_that_is_a_text_file_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "pairs.tsv").write_text("query\twinner\tloser\nq1\tx\ty\n")
    (tmp_path / "a.trec").write_text("q1 Q0 x 1 1.0 a\n")
    config = tmp_path / "p.toml"
    config.write_text(MINIMAL + '\n[database]\npath = "notes.txt"\n')
    monkeypatch.delenv("ORLBUILD_DB", raising=False)
    code, out, err = outcome(runner.invoke(app, ["--quiet", "pipeline", str(config)]))
    one_error_line(code, out, err, "notes.txt", "is not an SQLite database")


def _id_commands(n: int) -> list[tuple[str, ...]]:
    return [
        ("batches", "delete", str(n)),
        ("results", "show", str(n)),
        ("results", "export", str(n)),
        ("orl", "show", str(n)),
        ("audit", str(n)),
    ]


def test_ids_beyond_the_backend_range_are_one_line(migrated_db_url: str, backend: str) -> None:
    largest = 2**31 - 1 if backend == "postgresql" else 2**63 - 1
    for n in (largest + 1, 2**64, 10**30):
        for args in _id_commands(n):
            code, out, err = cli(migrated_db_url, *args)
            one_error_line(code, out, err, str(n), "ids are whole numbers from 1 to")
    for args in _id_commands(largest):  # in range: simply not there
        code, out, err = cli(migrated_db_url, *args)
        line = one_error_line(code, out, err, str(largest))
        assert "ids are whole numbers" not in line


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("deep.json", DEEP_JSON),
        ("deep.jsonl", '{"query": "q", "item": "a", "rank": ' + DEEP_JSON + "}\n"),
        (
            "array.json",
            '[{"query": "q", "item": "a", "rank": 1},\n {"query": "q", "item": "b", '
            f'"rank": {DEEP_JSON}}}]',
        ),
    ],
)
def test_deep_json_ingest_is_one_line(
    migrated_db_url: str, tmp_path: Path, name: str, content: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    code, out, err = cli(migrated_db_url, "ingest", "listwise", str(path))
    line = one_error_line(code, out, err, name, f"nested deeper than {MAX_DEPTH} levels")
    assert ("line 2" in line) == (name == "array.json")


def test_deep_eval_orl_json_and_toml_are_one_line(tmp_path: Path) -> None:
    orl = tmp_path / "orl.json"
    orl.write_text('{"queries": {"q1": {"x": 1}}, "build": ' + DEEP_JSON + "}")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 x 1 1.0 t\n")
    code, out, err = cli("sqlite://", "eval", str(orl), str(run), "-m", "nDCG@10")
    one_error_line(code, out, err, "orl.json", "nested deeper than 100 levels")
    config = tmp_path / "deep.toml"
    config.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n" + MINIMAL)
    code, out, err = cli("sqlite://", "pipeline", str(config))
    one_error_line(code, out, err, "deep.toml", "line 1", "TOML nested deeper than 100 levels")


def test_the_depth_scanner_reads_strings_escapes_and_block_edges() -> None:
    text = '{"a": "[[[[\\"[[", "b": [[1]], "c": "\\\\", "d": [' + "[" * 5 + "]" * 6 + "}"
    for size in (1, 2, 3, 7, len(text)):
        scanner = JsonDepth("f", limit=7)
        for start in range(0, len(text), size):
            scanner.feed(text[start : start + size])
        assert scanner.depth == 0 and not scanner.in_string
    with pytest.raises(InputError, match="line 3: JSON nested deeper than 6"):
        scanner = JsonDepth("f", limit=6)
        for part in ('{"x":\n', '"]]]\\\\"\n', text):
            scanner.feed(part)
    at_limit = "[" * 100 + "]" * 100
    JsonDepth("f").feed(at_limit)  # exactly the limit is accepted
    assert checked_toml_text('x = [[1], {a = "[[[["}]\n[t]\n[[u]]\n', "c.toml", limit=2)
