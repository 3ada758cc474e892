"""``#`` comment lines in whitespace-separated TREC files (issue 21): skipped, counted in one note.

Golden files under ``tests/data/trec_comments`` (an ir_metadata run header, a
qrels file with comments); plain, gzip and bz2; the line-exact ingest reader
and the C-speed reader of ``orlbuild eval`` agree on the rows and the note.
"""

from __future__ import annotations

import bz2
import gzip
import json
from pathlib import Path

import pytest

from orlbuild.ingest import read_input
from orlbuild.ingest.trec_reader import fast_trec_frame
from orlbuild.orl_io.eval_files import read_orl_file, read_run_file
from orlbuild.store import load_graded, load_run
from orlbuild.vocabulary import InputFormat
from tests.files import Write
from tests.ingest.conftest import run_cli
from tests.stores import store_engine

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "trec_comments"
EXPECTED = json.loads((GOLDEN / "expected.json").read_text())
COMPRESS = {"": lambda b: b, ".gz": gzip.compress, ".bz2": bz2.compress}


def _golden(name: str, suffix: str, write_file: Write) -> Path:
    """The golden file, compressed as ``suffix`` says (content sniffing must still work)."""
    return write_file(name + suffix, COMPRESS[suffix]((GOLDEN / name).read_bytes()))


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2"])
def test_golden_run_and_qrels_with_comments_ingest(
    suffix: str, migrated_db_url: str, write_file: Write
) -> None:
    qrels = _golden("qrels.txt", suffix, write_file)
    run = _golden("run.trec", suffix, write_file)
    graded = run_cli(migrated_db_url, "ingest", "graded", str(qrels))
    assert graded.exit_code == 0, graded.output
    stored = run_cli(migrated_db_url, "ingest", "run", str(run), "--system", "bm25")
    assert stored.exit_code == 0, stored.output
    for result, name in ((graded, "qrels.txt"), (stored, "run.trec")):
        count = EXPECTED[name]["comments"]
        notes = [line for line in result.output.splitlines() if "comment line" in line]
        assert notes == [
            f"Warning: {qrels if name == 'qrels.txt' else run}: skipped {count} "
            "comment line(s) starting with '#'"
        ]
    with store_engine(migrated_db_url) as engine:
        grades = load_graded(engine)
        entries = load_run(engine, "default", "bm25")
    assert (
        sorted(map(list, grades[["query", "annotator", "item", "grade"]].itertuples(index=False)))
        == EXPECTED["qrels.txt"]["rows"]
    )
    assert (
        sorted(map(list, entries[["query", "item", "rank", "score"]].itertuples(index=False)))
        == EXPECTED["run.trec"]["rows"]
    )


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_fast_reader_of_eval_skips_the_same_comments(suffix: str, write_file: Write) -> None:
    run = _golden("run.trec", suffix, write_file)
    qrels = _golden("qrels.txt", suffix, write_file)
    fast = fast_trec_frame(run, InputFormat.trec)
    assert fast is not None  # the C path is taken, not the fallback
    assert fast.attrs["comment_lines"] == EXPECTED["run.trec"]["comments"]
    exact = read_input("run", run).decoded()
    assert fast["item"].astype(str).tolist() == exact["item"].tolist()
    assert fast["score"].tolist() == exact["score"].tolist()
    notes: list[str] = []
    frame = read_run_file(run, notes=notes)
    assert len(frame) == 4
    assert notes == [f"{run}: skipped 4 comment line(s) starting with '#'"]
    orls, warnings = read_orl_file(qrels)
    assert sorted(orls) == ["301", "302"]
    assert f"{qrels}: skipped 2 comment line(s) starting with '#'" in warnings


def test_eval_command_notes_comments_and_scores_as_without_them(write_file: Write) -> None:
    run = _golden("run.trec", "", write_file)
    qrels = _golden("qrels.txt", "", write_file)
    bare_run = write_file(
        "bare.trec",
        "".join(
            line + "\n"
            for line in run.read_text().splitlines()
            if not line.lstrip().startswith("#")
        ),
    )
    args = ["eval", str(qrels), "-m", "nDCG@10", "--format", "json"]
    with_comments = run_cli("sqlite:///unused.db", *args[:2], str(run), *args[2:])
    without = run_cli("sqlite:///unused.db", *args[:2], str(bare_run), *args[2:])
    assert with_comments.exit_code == 0, with_comments.output
    assert "skipped 4 comment line(s)" in with_comments.output
    assert json.loads(with_comments.stdout)["per_query"] == json.loads(without.stdout)["per_query"]


def test_comment_only_file_has_no_data_rows(migrated_db_url: str, write_file: Write) -> None:
    path = write_file("c.qrels", "# nothing but a header\n# and more\n")
    result = run_cli(migrated_db_url, "ingest", "graded", str(path))
    assert result.exit_code == 1
    assert "no data rows" in result.output


def test_hash_inside_an_id_is_data(migrated_db_url: str, write_file: Write) -> None:
    """Only a line whose first non-blank character is ``#`` is a comment."""
    path = write_file("r.trec", "q1 Q0 doc#1 1 2.0 tag#x\nq1 Q0 d2 2 1.0 t\n")
    result = run_cli(migrated_db_url, "ingest", "run", str(path), "--system", "s")
    assert result.exit_code == 0, result.output
    assert "comment" not in result.output
    with store_engine(migrated_db_url) as engine:
        assert sorted(load_run(engine, "default", "s")["item"]) == ["d2", "doc#1"]
