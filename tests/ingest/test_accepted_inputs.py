"""What real files contain is accepted, and lands in the store exactly as meant."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from orlbuild.ingest import DuplicatePolicy
from orlbuild.services.ingests import ingest_file
from orlbuild.store import load_graded, load_listwise, load_pairwise, load_run
from tests.files import Write
from tests.ingest.conftest import ingested, pairwise_tuples, run_cli, store_counts
from tests.stores import store_engine


def _pairs(url: str, collection: str = "default") -> list[tuple[str, str, str, str, bool]]:
    with store_engine(url) as engine:
        frame = load_pairwise(engine, collection)
    return pairwise_tuples(frame)


def test_bom_crlf_trailing_blank_lines_and_quoted_fields(
    migrated_db_url: str, write_file: Write
) -> None:
    content = (
        "\ufeffquery,annotator,winner,loser,tie\r\n"
        '"q 1","Ann, B.","doc ""one""","d2",0\r\n'
        '"q 1",a2," d3 ","d 4",1\r\n'
        "\r\n\r\n"
    )
    ingested(migrated_db_url, "pairwise", write_file("p.csv", content))
    assert _pairs(migrated_db_url) == [
        ("q 1", "Ann, B.", 'doc "one"', "d2", False),
        ("q 1", "a2", "d3", "d 4", True),
    ]


def test_error_line_numbers_count_physical_lines(migrated_db_url: str, write_file: Write) -> None:
    """Blank lines (and a leading blank line before the header) do not shift the reported line."""
    content = '\nquery,winner,loser\n\nq1,"a b",d2\n\nq1,d3,d3\n'
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(write_file("p.csv", content)))
    assert result.exit_code == 1
    assert "line 6:" in result.output


@pytest.mark.parametrize(
    ("name", "content", "line"),
    [
        # issue 23: one physical line is one row; a quote never swallows the next lines
        ("p.csv", 'query,winner,loser\nq1,"a\nb",d2\nq1,d3,d4\n', 2),
        ("p.csv", 'query,winner,loser\nq1,"unclosed,d2\nq1,d3,d4\nq1,d5,d6\n', 2),
        ("p.tsv", '"query"\t"winner"\t"loser"\nq1\t"a\nb"\td2\n', 2),
    ],
)
def test_quoted_field_over_a_line_end_is_an_error_naming_its_line(
    name: str, content: str, line: int, migrated_db_url: str, write_file: Write
) -> None:
    path = write_file(name, content)
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 1
    assert f"{path}, line {line}: a quoted field runs over the end of the line" in result.output
    assert store_counts(migrated_db_url)["collections"] == {}


def test_listwise_tabular_and_nested_jsonl_agree(migrated_db_url: str, write_file: Write) -> None:
    tsv = (
        "query\tannotator\titem\trank\nq1\ta1\td3\t1\nq1\ta1\td1\t2\nq1\ta1\td7\t2\nq1\ta1\td2\t3\n"
    )
    jsonl = '{"query": "q1", "annotator": "a2", "ranking": ["d3", ["d1", "d7"], "d2"]}\n'
    ingested(migrated_db_url, "listwise", write_file("l.tsv", tsv))
    ingested(migrated_db_url, "listwise", write_file("l.jsonl", jsonl))
    with store_engine(migrated_db_url) as engine:
        frame = load_listwise(engine)
    ranks = {a: dict(zip(g["item"], g["rank"], strict=True)) for a, g in frame.groupby("annotator")}
    assert ranks["a1"] == ranks["a2"] == {"d3": 1, "d1": 2, "d7": 2, "d2": 3}
    assert list(frame.columns) == ["query", "annotator", "item", "rank", "batch_id"]


def test_graded_qrels_and_tabular(migrated_db_url: str, write_file: Write) -> None:
    qrels = "q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 1\n"
    csv = "query,annotator,item,grade\nq1,a1,d1,3\nq1,a1,d1,3\n"  # identical repeat stored once
    ingested(migrated_db_url, "graded", write_file("g.qrels", qrels))
    ingested(migrated_db_url, "graded", write_file("g.csv", csv))
    with store_engine(migrated_db_url) as engine:
        frame = load_graded(engine)
        only_q2 = load_graded(engine, queries=["q2"])
    assert sorted(
        zip(frame["query"], frame["annotator"], frame["item"], frame["grade"], strict=True)
    ) == [
        ("q1", "_", "d1", 2),
        ("q1", "_", "d2", 0),
        ("q1", "a1", "d1", 3),
        ("q2", "_", "d1", 1),
    ]
    assert only_q2["query"].tolist() == ["q2"]


def test_trec_run_from_stdin_with_format_and_collection(migrated_db_url: str) -> None:
    run = b"q1 Q0 d1 1 1.5 tag\nq1 Q0 d2 2 0.5 tag\nq2 Q0 d1 0 -2e3 tag\n"
    result = run_cli(
        migrated_db_url,
        "ingest", "run", "-", "--system", "bm25", "--format", "trec", "--collection", "web",
        stdin=run,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    with store_engine(migrated_db_url) as engine:
        frame = load_run(engine, "web", "bm25")
    expected = pd.DataFrame(
        {"query": ["q1", "q1", "q2"], "item": ["d1", "d2", "d1"], "rank": [1, 2, 0]}
    )
    pd.testing.assert_frame_equal(frame[["query", "item", "rank"]], expected)
    assert frame["score"].tolist() == [1.5, 0.5, -2000.0]
    assert set(store_counts(migrated_db_url)["collections"]) == {"web"}


def test_tabular_run_without_scores(migrated_db_url: str, write_file: Write) -> None:
    path = write_file("r.tsv", "query\titem\trank\nq1\td2\t1\nq1\td1\t2\n")
    assert run_cli(migrated_db_url, "ingest", "run", str(path), "-s", "x").exit_code == 0
    with store_engine(migrated_db_url) as engine:
        frame = load_run(engine, "default", "x")
    assert frame["item"].tolist() == ["d2", "d1"]
    assert frame["score"].isna().all()


def test_keep_first_keeps_the_best_ordered_duplicate(
    migrated_db_url: str, write_file: Write
) -> None:
    path = write_file("r.trec", "q1 Q0 d1 2 0.5 t\nq1 Q0 d2 1 0.9 t\nq1 Q0 d1 3 0.7 t\n")
    with store_engine(migrated_db_url) as engine:
        result = ingest_file(engine, "run", path, system="s", duplicates=DuplicatePolicy.keep_first)
        frame = load_run(engine, "default", "s")
    assert result.rows == 2 and result.dropped == 1
    assert dict(zip(frame["item"], frame["score"], strict=True)) == {"d1": 0.7, "d2": 0.9}
    cli = run_cli(
        migrated_db_url, "ingest", "run", str(path), "-s", "s", "--duplicates", "keep-first"
    )
    assert "already stored" in cli.output


def test_pairwise_item_a_item_b_and_optional_annotator(
    migrated_db_url: str, write_file: Write
) -> None:
    """``item_a``/``item_b`` are the arena shape: its ``winner`` says who won or ``tie``.

    Behaviour change (issue 12): ``item_a``/``item_b`` used to be aliases of
    ``winner``/``loser``, so an arena file had its first item stored as the
    winner whatever ``winner`` said; ``item_a, item_b, tie`` without
    ``winner`` is now refused as a mix of shapes.
    """
    path = write_file(
        "p.jsonl", '{"query": "q1", "item_a": "d1", "item_b": "d2", "winner": "tie"}\n'
    )
    ingested(migrated_db_url, "pairwise", path)
    assert _pairs(migrated_db_url) == [("q1", "_", "d1", "d2", True)]
    mixed = write_file("m.jsonl", '{"query": "q1", "item_a": "d1", "item_b": "d2", "tie": 1}\n')
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(mixed))
    assert result.exit_code == 1
    assert "mix the native and arena shapes" in result.output


def test_reingest_is_a_noop_that_says_so(seeded_db_url: str, tmp_path: Path) -> None:
    from tests.ingest.conftest import GOOD_PAIRWISE

    copy = tmp_path / "copy.tsv"
    copy.write_text(GOOD_PAIRWISE)
    before = store_counts(seeded_db_url)
    result = ingested(seeded_db_url, "pairwise", copy)
    assert "already stored as batch 1" in result.output
    assert "nothing to do" in result.output
    assert store_counts(seeded_db_url) == before
    # The same content in another collection is a different batch.
    other = ingested(seeded_db_url, "pairwise", copy, "--collection", "c2")
    assert "stored 3 pairwise rows" in other.output


def test_bad_last_row_after_thousands_of_good_rows_stores_nothing(
    migrated_db_url: str, write_file: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("orlbuild.ingest.rows.CHUNK_ROWS", 1000)  # many chunks
    good = "".join(f"q{i % 50}\ta{i % 7}\td{i}\td{i + 1}\t0\n" for i in range(5000))
    path = write_file(
        "p.tsv", "query\tannotator\twinner\tloser\ttie\n" + good + "q1\ta1\td9\td9\t0\n"
    )
    before = store_counts(migrated_db_url)
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 1
    assert "line 5002:" in result.output
    assert store_counts(migrated_db_url) == before
    # Without the bad row, all 5000 rows arrive, in one batch.
    path = write_file("ok.tsv", "query\tannotator\twinner\tloser\ttie\n" + good)
    ingested(migrated_db_url, "pairwise", path)
    counts = store_counts(migrated_db_url)["collections"]["default"]
    assert (counts["pairwise"], counts["queries"], counts["batches"]) == (5000, 50, 1)


@pytest.mark.parametrize("chunk_rows", [1, 2, 3])
def test_line_numbers_across_chunk_boundaries(
    migrated_db_url: str, write_file: Write, monkeypatch: pytest.MonkeyPatch, chunk_rows: int
) -> None:
    """Blank lines and quoted fields keep error lines exact whatever the chunking.

    (A quoted line break is an error since issue 23: one physical line, one row.)
    """
    monkeypatch.setattr("orlbuild.ingest.rows.CHUNK_ROWS", chunk_rows)
    content = 'query,winner,loser\n\n\nq1,"a\tb c",d2\n  \nq2,d1,d2\n\nq1,"x",d3\nq1,d3,d3\n\n'
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(write_file("p.csv", content)))
    assert result.exit_code == 1
    assert "line 9:" in result.output
    spanning = content.replace('"x"', '"x\r\n"')
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(write_file("s.csv", spanning)))
    assert result.exit_code == 1
    assert "line 8: a quoted field runs over the end of the line" in result.output
    fixed = content.replace("q1,d3,d3", "q1,d3,d4")
    ingested(migrated_db_url, "pairwise", write_file("ok.csv", fixed))
    assert sorted(_pairs(migrated_db_url)) == [
        ("q1", "_", "a\tb c", "d2", False),
        ("q1", "_", "d3", "d4", False),
        ("q1", "_", "x", "d3", False),
        ("q2", "_", "d1", "d2", False),
    ]
