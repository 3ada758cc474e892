"""Every physical data line is one stored row, or an error naming the line (issue 23, point 2).

For every reader (TSV, quoted TSV, CSV, JSON Lines, JSON array, TREC qrels,
TREC runs, the preference release shape) a file full of quotes, separators
inside quotes, comments and blank lines is ingested and its data lines are
counted against the rows stored. (trec-prefs and the nested-tier listwise
JSON turn one line into several rows; their golden files check them.)
"""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orlbuild.ingest import read_input
from orlbuild.ingest.rows import is_comment
from orlbuild.store import load_pairwise
from tests.files import Write
from tests.ingest.conftest import ingested, run_cli, store_counts
from tests.stores import store_engine

# The case: a TSV field that starts with a quote used to swallow the next lines.
STAR_WARS_TSV = 'query\titem\tgrade\n"Star Wars" movies\td1\t1\nq2\td2\t1\nq3\t"d3\t2\nq4\td4"\t0\n'

FILES = {
    # name: (kind, content, header lines)
    "plain.tsv": ("graded", STAR_WARS_TSV, 1),
    "quoted.tsv": (
        "graded",
        '"query"\t"item"\t"grade"\n"q ""1"""\t"d\t1"\t1\nq2\t"d2"\t2\n\n"q3"\td3\t0\n',
        1,
    ),
    "p.csv": (
        "pairwise",
        'query,winner,loser\n"q,1","d ""1""",d2\n\nq2,"d,3",d4\n  \nq3,d5,"d6"\n',
        1,
    ),
    "p.jsonl": (
        "pairwise",
        '{"query": "\\"q1", "winner": "a\\"", "loser": "b"}\n\n'
        '{"query": "q2", "winner": "a\\nb", "loser": "c"}\n',
        0,
    ),
    "p.json": (
        "pairwise",
        '[\n {"query": "q1", "winner": "\\"a", "loser": "b"},\n\n'
        ' {"query": "q2", "winner": "a", "loser": "c"}\n]\n',
        2,  # the brackets
    ),
    "g.qrels": ("graded", '# ir_metadata\n"q1 0 "d1 1\n\nq2 0 d2" 0\n  # note\nq3 0 d3 2\n', 0),
    "r.trec": ("run", '#c\nq1 Q0 "d1 1 2.5 t\nq1 Q0 d2" 2 1.5 "t\n\nq2 Q0 d3 1 1 t\n', 0),
    "p.prefs": ("pairwise", '# prefs\nq1 "a b" "a\nq1 b" c c\n', 0),
}


def _data_lines(content: str, header_lines: int) -> int:
    lines = [line for line in content.split("\n") if line.strip() and not is_comment(line)]
    return len(lines) - header_lines


@pytest.mark.parametrize("name", sorted(FILES))
def test_every_data_line_is_one_stored_row(
    name: str, migrated_db_url: str, write_file: Write
) -> None:
    kind, content, header = FILES[name]
    path = write_file(name, content)
    ingested(migrated_db_url, kind, path)
    counts = store_counts(migrated_db_url)["collections"]["default"]
    stored = sum(counts["runs"].values()) if kind == "run" else counts[kind]
    assert stored == _data_lines(content, header)


def test_quotes_in_a_plain_tsv_are_data(migrated_db_url: str, write_file: Write) -> None:
    path = write_file("p.tsv", 'query\twinner\tloser\n"Star Wars" movies\td1\td2\nq2\t"d3\td4\n')
    result = ingested(migrated_db_url, "pairwise", path)
    assert f"{path}: 2 line(s) hold a double quote; a TSV has no quoting" in result.output
    with store_engine(migrated_db_url) as engine:
        frame = load_pairwise(engine)
    assert sorted(frame["query"]) == ['"Star Wars" movies', "q2"]
    assert '"d3' in set(frame["winner"])


def test_csv_text_after_a_closing_quote_is_an_error(
    migrated_db_url: str, write_file: Write
) -> None:
    """``"Star Wars" movies`` is not valid CSV: it used to be stored as ``Star Wars movies``."""
    path = write_file("p.csv", 'query,winner,loser\nq1,d1,d2\n"Star Wars" movies,d1,d2\n')
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 1
    assert f"{path}, line 3: malformed CSV" in result.output
    assert store_counts(migrated_db_url)["collections"] == {}


_cells = st.text(
    alphabet=st.sampled_from(['"', "'", "a", "b", " ", ",", "#", "\\", "é"]), min_size=1, max_size=6
).filter(lambda s: s.strip() and not s.strip().startswith("#"))


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(_cells, _cells), min_size=1, max_size=20))
def test_plain_tsv_rows_equal_lines_whatever_the_quotes(rows: list[tuple[str, str]]) -> None:
    body = "".join(f"{q}\t{item}\t1\n" for q, item in rows)
    parsed = read_input(
        "graded", "g.tsv", stream=io.BytesIO(f"query\titem\tgrade\n{body}".encode())
    )
    frame = parsed.decoded()
    assert len(frame) + parsed.dropped == len(rows)
    assert set(zip(frame["query"], frame["item"], strict=True)) == {
        (q.strip(), i.strip()) for q, i in rows
    }


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(_cells, _cells), min_size=1, max_size=20))
def test_whitespace_qrels_rows_equal_lines_whatever_the_quotes(rows: list[tuple[str, str]]) -> None:
    rows = [(q.replace(" ", "_"), i.replace(" ", "_")) for q, i in rows]
    body = "".join(f"{q} 0 {item} 1\n" for q, item in rows)
    parsed = read_input("graded", "g.qrels", stream=io.BytesIO(body.encode()))
    assert len(parsed) + parsed.dropped == len(rows)


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.tuples(_cells, _cells, _cells), min_size=1, max_size=20))
def test_json_array_and_lines_rows_equal_objects(rows: list[tuple[str, str, str]]) -> None:
    objects = [{"query": q, "winner": w, "loser": w + "x" + lo} for q, w, lo in rows]
    as_lines = "".join(json.dumps(o) + "\n" for o in objects)
    for name, text in (("p.jsonl", as_lines), ("p.json", json.dumps(objects, indent=2))):
        parsed = read_input("pairwise", name, stream=io.BytesIO(text.encode()))
        assert len(parsed) == len(rows)
