"""No column is dropped silently: an unused column is reported, in every kind and syntax."""

from __future__ import annotations

import pytest

from tests.files import Write
from tests.ingest.conftest import ingested, run_cli, store_counts

#: kind -> CSV content with an extra ``source`` column
WITH_EXTRA_COLUMN = {
    "listwise": "query,item,rank,source\nq1,d1,1,web\n",
    "pairwise": "query,winner,loser,source\nq1,d1,d2,web\n",
    "graded": "query,item,grade,source\nq1,d1,2,web\n",
    "run": "query,item,rank,source\nq1,d1,1,web\n",
}


def _as_jsonl(csv: str) -> str:
    """A one-row CSV as one JSONL object with the same keys and (string) values."""
    header, row = csv.splitlines()
    record = dict(zip(header.split(","), row.split(","), strict=True))
    return "{" + ", ".join(f'"{k}": "{v}"' for k, v in record.items()) + "}\n"


@pytest.mark.parametrize("syntax", ["csv", "jsonl"])
@pytest.mark.parametrize("kind", list(WITH_EXTRA_COLUMN))
def test_extra_column_is_reported_in_every_kind_and_syntax(
    kind: str, syntax: str, migrated_db_url: str, write_file: Write
) -> None:
    content = WITH_EXTRA_COLUMN[kind]
    path = write_file(f"{kind}.{syntax}", _as_jsonl(content) if syntax == "jsonl" else content)
    result = ingested(migrated_db_url, kind, path)
    assert f"Warning: {path}: ignored column(s) 'source'" in result.stderr
    assert "stored 1" in result.stdout


def test_arena_extra_columns_are_reported_not_refused(
    migrated_db_url: str, write_file: Write
) -> None:
    """LMArena exports carry many more columns (turn, language, tstamp...): read, reported."""
    path = write_file(
        "arena.csv",
        "question_id,model_a,model_b,winner,judge,turn,language,tstamp\n"
        "q1,m1,m2,model_a,j1,1,English,1.0\n",
    )
    result = ingested(migrated_db_url, "pairwise", path)
    assert "ignored column(s) 'turn', 'language', 'tstamp'" in result.stderr
    assert "arena columns" in result.stderr


def test_complete_file_has_no_warning(migrated_db_url: str, write_file: Write) -> None:
    path = write_file("p.csv", "query,annotator,winner,loser,tie\nq1,a,d1,d2,0\n")
    result = ingested(migrated_db_url, "pairwise", path)
    assert "Warning" not in result.output


def test_misspelt_column_stores_nothing(seeded_db_url: str, write_file: Write) -> None:
    """A near miss of an absent column (``anotator``) would silently default every
    annotator to ``_``: refused instead."""
    path = write_file("p.csv", "query,anotator,winner,loser\nq1,a9,d1,d2\n")
    before = store_counts(seeded_db_url)
    result = run_cli(seeded_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 1
    assert "did you mean 'annotator'?" in result.output
    assert store_counts(seeded_db_url) == before


def test_published_evalica_llmfao_header_is_read_with_its_extra_columns_reported(
    migrated_db_url: str, write_file: Write
) -> None:
    """evalica's LLMFAO file as published (``id,prompt,model_x,model_y,worker,winner,left,
    right``; hand-built rows): ``id``, ``model_x`` and ``model_y`` are near misses of arena's
    ``qid``, ``model_a`` and ``model_b``, names the evalica shape does not read even spelt
    so. They are ignored and reported, with what they resemble, not refused."""
    path = write_file(
        "llmfao.csv",
        "id,prompt,model_x,model_y,worker,winner,left,right\n"
        "1,8,3,7,58,tie,Model A,Model B\n"
        "2,8,3,9,83,left,Model A,Model C\n"
        "2,8,3,9,12,right,Model A,Model C\n",
    )
    result = ingested(migrated_db_url, "pairwise", path)
    assert "stored 3 pairwise rows" in result.stdout
    assert "ignored column(s) 'id', 'prompt', 'model_x', 'model_y'" in result.stderr
    # model_y is as close to model_a as to model_b: the first in sorted order is named
    for near, known in (("id", "qid"), ("model_x", "model_a"), ("model_y", "model_a")):
        assert f"'{near}' resembles '{known}' of the arena shape" in result.stderr
    assert "does not read either" in result.stderr


def test_near_miss_of_a_column_given_under_another_name_is_reported(
    migrated_db_url: str, write_file: Write
) -> None:
    """``model_x`` next to ``item_a`` (whose alias ``model_a`` it resembles) cannot be a typo
    of a column the file lacks: reported, not refused."""
    path = write_file("arena.csv", "qid,item_a,item_b,winner,model_x\nq1,m1,m2,model_a,7\n")
    result = ingested(migrated_db_url, "pairwise", path)
    assert (
        "'model_x' resembles 'model_a', but the file gives the 'item_a' column already"
        in result.stderr
    )


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        # a near miss of a column the chosen shape reads and the header lacks
        ("left,right,winner,anotator", "did you mean 'annotator'?"),
        ("left,right,winner,querry", "did you mean 'query'?"),
        ("left,right,winner,counts", "did you mean 'count'?"),
        ("qid,model_a,model_b,winner,judg", "did you mean 'judge'?"),
        # a misspelt required column
        ("qeury,winner,loser", "missing required column 'query'"),
    ],
)
def test_misspelt_column_the_shape_reads_is_still_an_error(
    header: str, expected: str, seeded_db_url: str, write_file: Write
) -> None:
    values = {"left": "d1", "right": "d2", "winner": "left", "model_a": "d1", "model_b": "d2"}
    if "loser" in header:
        values |= {"winner": "d1", "loser": "d2"}
    elif "model_a" in header:
        values["winner"] = "model_a"
    row = ",".join(values.get(name, "x1") for name in header.split(","))
    path = write_file("p.csv", f"{header}\n{row}\n")
    before = store_counts(seeded_db_url)
    result = run_cli(seeded_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 1, result.output
    assert expected in result.output
    assert store_counts(seeded_db_url) == before
