"""The optional ``count`` column of every tabular pairwise shape (issues 20 and 21).

Stored in ``pairwise_judgments.count`` (migration 0006) and delivered as an
integer ``count`` column by ``load_pairwise``; rows with count 0 are skipped
with a note; anything but a non-negative integer is a one-line error.
"""

from __future__ import annotations

import time

import pytest

from orlbuild.store import load_pairwise
from tests.files import Write
from tests.ingest.conftest import counted_pairwise_tuples, ingested, run_cli, store_counts
from tests.stores import store_engine


def _stored(url: str) -> list[tuple[object, ...]]:
    """``(query, winner, loser, tie, count)`` of every stored preference, sorted."""
    with store_engine(url) as engine:
        rows = counted_pairwise_tuples(load_pairwise(engine))
    return [(q, w, lo, t, n) for q, _a, w, lo, t, n in rows]


SHAPES = {
    "native": "query,winner,loser,count\nq1,d1,d2,{}\n",
    "arena": "query,model_a,model_b,winner,count\nq1,d1,d2,model_a,{}\n",
    "evalica": "query,left,right,winner,count\nq1,d1,d2,left,{}\n",
    "crowd-kit": "query,worker,left,right,label,count\nq1,w,d1,d2,d1,{}\n",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_tabular_shape_carries_count(
    shape: str, migrated_db_url: str, write_file: Write
) -> None:
    path = write_file("p.csv", SHAPES[shape].format(7))
    ingested(migrated_db_url, "pairwise", path)
    assert _stored(migrated_db_url) == [("q1", "d1", "d2", False, 7)]


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("-1", "count must be >= 0"),
        ("1.5", "count must be an integer"),
        ("2.0", "count must be an integer"),
        ("x", "count must be an integer"),
        ("1_000", "count must be an integer"),
        ("99999999999999999999", "count is too large"),
        ("3000000000", "count is too large"),
    ],
)
@pytest.mark.parametrize("shape", ["native", "arena"])
def test_bad_count_is_a_one_line_error_naming_file_line_value(
    shape: str, value: str, reason: str, migrated_db_url: str, write_file: Write
) -> None:
    path = write_file("p.csv", SHAPES[shape].format(value))
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith(f"Error: {path}, line 2: {reason}")
    assert f"(got '{value}')" in lines[0] or value in lines[0]
    assert store_counts(migrated_db_url)["collections"] == {}


def test_zero_counts_are_skipped_with_a_note_and_empty_counts_one(
    migrated_db_url: str, write_file: Write
) -> None:
    path = write_file(
        "p.tsv", "query\twinner\tloser\tcount\nq1\td1\td2\t0\nq1\td2\td3\t\nq1\td3\td1\t 4 \n"
    )
    result = ingested(migrated_db_url, "pairwise", path)
    assert f"Warning: {path}: skipped 1 row(s) with count 0" in result.output
    assert "stored 2 pairwise rows" in result.output
    assert _stored(migrated_db_url) == [("q1", "d2", "d3", False, 1), ("q1", "d3", "d1", False, 4)]


def test_all_zero_counts_store_nothing(migrated_db_url: str, write_file: Write) -> None:
    path = write_file("p.csv", "query,winner,loser,count\nq1,d1,d2,0\n")
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 1
    assert "every row has count 0" in result.output


def test_files_without_count_count_one_and_jsonl_may_omit_it(
    migrated_db_url: str, write_file: Write
) -> None:
    plain = write_file("p.csv", "query,winner,loser\nq1,d1,d2\n")
    ingested(migrated_db_url, "pairwise", plain)
    mixed = write_file(
        "m.jsonl",
        '{"query": "q2", "winner": "a", "loser": "b"}\n'
        '{"query": "q2", "winner": "b", "loser": "c", "count": 5}\n',
    )
    ingested(migrated_db_url, "pairwise", mixed)
    assert _stored(migrated_db_url) == [
        ("q1", "d1", "d2", False, 1),
        ("q2", "a", "b", False, 1),
        ("q2", "b", "c", False, 5),
    ]


def test_a_count_table_of_a_million_comparisons_ingests_in_seconds(
    migrated_db_url: str, write_file: Write
) -> None:
    """A count table is few rows: 60 models, every ordered pair, 1,000,000 comparisons."""
    models = [f"m{i}" for i in range(60)]
    pairs = [(a, b) for a in models for b in models if a != b]  # 3540 rows
    per_row, extra = divmod(1_000_000, len(pairs))
    lines = [f"arena,{a},{b},{per_row + (i < extra)}" for i, (a, b) in enumerate(pairs)]
    path = write_file("counts.csv", "query,winner,loser,count\n" + "\n".join(lines) + "\n")
    start = time.perf_counter()
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(path))
    seconds = time.perf_counter() - start
    assert result.exit_code == 0, result.output
    assert sum(row[-1] for row in _stored(migrated_db_url)) == 1_000_000
    assert seconds < 10  # a few hundred ms idle; generous for a loaded machine


def test_build_on_counted_rows_runs(migrated_db_url: str, write_file: Write) -> None:
    """The builders receive the ``count`` column and must not break on it (est weights it)."""
    rows = "".join(
        f"q1,d{a},d{b},{n}\n" for a, b, n in [(1, 2, 5), (2, 3, 4), (1, 3, 6), (3, 2, 1), (2, 1, 1)]
    )
    path = write_file("p.csv", "query,winner,loser,count\n" + rows)
    ingested(migrated_db_url, "pairwise", path)
    built = run_cli(migrated_db_url, "build", "--source", "pairwise", "--name", "counted")
    assert built.exit_code == 0, built.output
