"""Values that used to slip through or crash (issue 23, points 7 and 8): one line, none stored."""

from __future__ import annotations

import gzip
import time
import tracemalloc
import zlib
from pathlib import Path

import pytest

from orlbuild.errors import InputError
from orlbuild.ingest import read_input
from orlbuild.ingest.source import MAX_LINE_CHARS
from orlbuild.ingest.trec_reader import fast_trec_frame
from orlbuild.store import load_pairwise
from orlbuild.vocabulary import InputFormat
from tests.files import Write
from tests.ingest.conftest import ingest_cli, ingested, run_cli, store_counts
from tests.store_cli import one_error_line, outcome
from tests.stores import store_engine

HUGE = "99999999999999999999"  # > 2**64


@pytest.mark.parametrize(
    ("kind", "name", "content", "reason"),
    [
        ("graded", "g.qrels", f"q1 0 d1 {HUGE}\n", "grade is too large"),
        ("graded", "g.tsv", f"query\titem\tgrade\nq1\td1\t{HUGE}\n", "grade is too large"),
        ("graded", "g.tsv", f"query\titem\tgrade\nq1\td1\t-{HUGE}\n", "grade is too large"),
        ("listwise", "l.tsv", f"query\titem\trank\nq1\td1\t{HUGE}\n", "rank is too large"),
        ("run", "r.trec", f"q1 Q0 d1 {HUGE} 1.5 t\n", "rank is too large"),
    ],
)
def test_integers_beyond_64_bits_are_one_line_errors(
    kind: str, name: str, content: str, reason: str, migrated_db_url: str, write_file: Write
) -> None:
    path = write_file(name, content)
    line = one_error_line(*outcome(ingest_cli(migrated_db_url, kind, path)))
    assert f"{path}, line " in line and reason in line and HUGE in line
    assert store_counts(migrated_db_url)["collections"] == {}


@pytest.mark.parametrize(
    ("kind", "name", "content"),
    [
        ("pairwise", "p.tsv", "query\twinner\tloser\nq1\td\x001\td2\n"),
        ("graded", "g.qrels", "q\x001 0 d1 1\n"),
        ("run", "r.tsv", "query\titem\trank\nq1\td1\t1\nq1\td\x00\t2\n"),
        ("pairwise", "p.jsonl", '{"query": "q1", "winner": "a\\u0000b", "loser": "c"}\n'),
    ],
)
def test_nul_byte_in_an_id_is_refused_on_every_backend(
    kind: str, name: str, content: str, migrated_db_url: str, write_file: Write
) -> None:
    path = write_file(name, content)
    line = one_error_line(*outcome(ingest_cli(migrated_db_url, kind, path)))
    assert "contains a NUL byte" in line and f"{path}, line" in line
    assert store_counts(migrated_db_url)["collections"] == {}


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("r.tsv", "query\titem\trank\tscore\nq1\td1\t1\t1_000\n"),
        ("r.trec", "q1 Q0 d1 1 1_000 t\n"),
        ("r.trec", "q1 Q0 d1 1 1.5 t\nq1 Q0 d2 2 1_0.5 t\n"),
    ],
)
def test_score_with_an_underscore_is_not_a_number(
    name: str, content: str, migrated_db_url: str, write_file: Write
) -> None:
    path = write_file(name, content)
    line = one_error_line(
        *outcome(run_cli(migrated_db_url, "ingest", "run", str(path), "--system", "s"))
    )
    assert "score must be a number" in line and "_" in line
    qrels = write_file("q.qrels", "q1 0 d1 1\n")
    line = one_error_line(
        *outcome(run_cli(migrated_db_url, "eval", str(qrels), str(path), "-m", "P@1"))
    )
    assert "score must be a number" in line


@pytest.mark.parametrize(
    ("value", "found"),
    [("NaN", "float"), ("true", "bool"), ("1.0", "float"), ("[1]", "list"), ("Infinity", "float")],
)
def test_json_ids_that_are_not_text_are_errors(
    value: str, found: str, migrated_db_url: str, write_file: Write
) -> None:
    path = write_file("p.jsonl", f'{{"query": {value}, "winner": "a", "loser": "b"}}\n')
    line = one_error_line(*outcome(run_cli(migrated_db_url, "ingest", "pairwise", str(path))))
    assert f"query must be a string (or an integer), found {found}" in line


def test_json_integer_ids_are_stored_as_text_with_a_note(
    migrated_db_url: str, write_file: Write
) -> None:
    path = write_file(
        "p.json",
        '[{"query": 1, "winner": 10, "loser": "b"}, {"query": 1, "winner": "b", "loser": 11}]',
    )
    result = ingested(migrated_db_url, "pairwise", path)
    assert (
        f"{path}: 4 identifier(s) were JSON numbers, stored as their decimal text "
        "(first: query 1 on line 1)" in result.output
    )
    with store_engine(migrated_db_url) as engine:
        frame = load_pairwise(engine)
    assert sorted(frame["winner"]) == ["10", "b"] and set(frame["query"]) == {"1"}


def test_all_zero_qrels_are_not_read_as_preferences(
    migrated_db_url: str, write_file: Write
) -> None:
    path = write_file("judged.qrels", "q1 0 d1 0\nq1 0 d2 0\nq2 0 d3 0\n")
    line = one_error_line(*outcome(run_cli(migrated_db_url, "ingest", "pairwise", str(path))))
    assert "looks like TREC qrels with every grade 0" in line and "ingest graded" in line
    assert store_counts(migrated_db_url)["collections"] == {}
    forced = run_cli(migrated_db_url, "ingest", "pairwise", str(path), "--format", "prefs-release")
    assert forced.exit_code == 0, forced.output  # the user said so


HEADERS = {
    "graded": b"query\titem\tgrade\n",
    "pairwise": b"query\twinner\tloser\n",
    "run": b"query\titem\trank\n",
}


@pytest.fixture(scope="module")
def bomb_member() -> bytes:
    """One gzip member expanding to a 200 MB line without a newline (about 200 KB)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip member
    block = b"x" * (1 << 20)
    return b"".join([*(compressor.compress(block) for _ in range(200)), compressor.flush()])


def _line_bomb(path: Path, first_line: bytes, member: bytes) -> Path:
    """``first_line`` then the 200 MB line, as a two-member gzip file (as ``cat a.gz b.gz``)."""
    path.write_bytes(gzip.compress(first_line) + member)
    return path


@pytest.mark.parametrize("kind", ["graded", "pairwise", "run"])
def test_one_enormous_line_is_refused_quickly_in_bounded_memory(
    kind: str, tmp_path: Path, bomb_member: bytes
) -> None:
    bomb = _line_bomb(tmp_path / "bomb.tsv.gz", HEADERS[kind], bomb_member)
    assert bomb.stat().st_size < 400_000
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(InputError, match=f"line 2: line longer than {MAX_LINE_CHARS:,}"):
            read_input(kind, bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - start < 5
    assert peak < 300 * 2**20, f"peak {peak / 2**20:.0f} MiB"


def test_one_enormous_line_sends_eval_to_the_exact_reader_quickly(
    tmp_path: Path, bomb_member: bytes
) -> None:
    bomb = _line_bomb(tmp_path / "bomb.trec.gz", b"q1 Q0 d1 1 1.5 t\n", bomb_member)
    tracemalloc.start()
    try:
        assert fast_trec_frame(bomb, InputFormat.trec) is None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 300 * 2**20, f"peak {peak / 2**20:.0f} MiB"


def test_a_json_array_on_one_line_is_not_a_long_line(tmp_path: Path) -> None:
    """LMArena writes the whole array on one line: objects are capped, the line is not."""
    battle = '{"question_id": "x%d", "model_a": "m1", "model_b": "m2", "winner": "model_a"}'
    text = "[" + ", ".join(battle % i for i in range(40_000)) + "]"
    assert len(text) > MAX_LINE_CHARS
    path = tmp_path / "battles.json"
    path.write_text(text)
    assert len(read_input("pairwise", path, query="arena")) == 40_000


def test_eval_reports_integers_beyond_64_bits_in_one_line(write_file: Write) -> None:
    """The C-speed reader of ``orlbuild eval`` hands such files to the exact reader."""
    qrels = write_file("g.qrels", "q1 0 d1 1\n")
    run = write_file("r.trec", f"q1 Q0 d1 {HUGE} 1.5 t\n")
    line = one_error_line(
        *outcome(run_cli("sqlite:///unused.db", "eval", str(qrels), str(run), "-m", "P@1"))
    )
    assert f"{run}, line 1: rank is too large" in line
    big = write_file("big.qrels", f"q1 0 d1 {HUGE}\n")
    ok = write_file("ok.trec", "q1 Q0 d1 1 1.5 t\n")
    line = one_error_line(
        *outcome(run_cli("sqlite:///unused.db", "eval", str(big), str(ok), "-m", "P@1"))
    )
    assert f"{big}, line 1: grade is too large" in line
