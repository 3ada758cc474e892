"""The catalogue of bad inputs: each exits 1, names the file and line, and stores nothing.

The second part holds the commands that used to show a traceback, mislead, or
lose data without a word (issue 12): each now stops with one line that says
what to do, and changes nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from orlbuild.errors import StoreError
from orlbuild.store import current_revision, head_revision
from orlbuild.store.engine import create_store_engine
from tests.files import Write
from tests.ingest.conftest import ingested, run_cli, store_counts
from tests.stores import disposed


@dataclass(frozen=True)
class BadInput:
    """One bad file: which command reads it, its content, and what the error must say."""

    kind: str
    name: str
    content: str | bytes
    line: int
    fragment: str
    options: tuple[str, ...] = ()


H_LIST = "query,annotator,item,rank\n"
H_PAIR = "query\tannotator\twinner\tloser\ttie\n"
H_GRADE = "query,annotator,item,grade\n"
H_RUN = "query,item,rank,score\n"
RUN = ("--system", "bm25")

CASES = {
    "missing required column": BadInput(
        "listwise", "l.csv", "query,annotator,item\nq1,a1,d1\n", 1, "missing required column 'rank'"
    ),
    "missing required JSON field": BadInput(
        "listwise",
        "l.jsonl",
        '{"query": "q1", "item": "d1", "rank": 1}\n{"query": "q1", "item": "d2"}\n',
        2,
        "missing required field 'rank'",
    ),
    "non-integer rank": BadInput(
        "listwise", "l.csv", H_LIST + "q1,a1,d1,1\nq1,a1,d2,2.5\n", 3, "rank must be an integer"
    ),
    "rank below 1": BadInput(
        "listwise", "l.csv", H_LIST + "q1,a1,d1,1\nq1,a1,d2,0\n", 3, "rank must be >= 1"
    ),
    "ranks not consecutive": BadInput(
        "listwise", "l.csv", H_LIST + "q1,a1,d1,1\nq1,a1,d2,3\nq1,a1,d3,3\n", 3, "rank 2 is missing"
    ),
    "item twice in one list": BadInput(
        "listwise", "l.csv", H_LIST + "q1,a1,d1,1\nq1,a1,d2,2\nq1,a1,d1,3\n", 4, "item listed twice"
    ),
    "item twice in one nested JSONL list": BadInput(
        "listwise",
        "l.jsonl",
        '{"query": "q1", "ranking": ["d1", ["d2", "d1"]]}\n',
        1,
        "item listed twice",
    ),
    "non-integer grade": BadInput(
        "graded", "g.csv", H_GRADE + "q1,a1,d1,high\n", 2, "grade must be an integer"
    ),
    "negative grade": BadInput(
        "graded", "g.qrels", "q1 0 d1 1\nq1 0 d2 -1\n", 2, "grade must be >= 0"
    ),
    "conflicting grades": BadInput(
        "graded", "g.csv", H_GRADE + "q1,a1,d1,2\nq1,a1,d2,1\nq1,a1,d1,0\n", 4, "conflicting grades"
    ),
    "winner equals loser": BadInput(
        "pairwise",
        "p.tsv",
        H_PAIR + "q1\ta1\td1\td2\t0\nq1\ta1\td3\td3\t0\n",
        3,
        "winner and loser are the same item",
    ),
    "tie flag not 0/1": BadInput(
        "pairwise", "p.tsv", H_PAIR + "q1\ta1\td1\td2\tmaybe\n", 2, "tie must be 0 or 1"
    ),
    "empty identifier": BadInput(
        "pairwise", "p.tsv", H_PAIR + "q1\ta1\td1\td2\t0\n \ta1\td1\td2\t0\n", 3, "empty query"
    ),
    "empty loser": BadInput(
        "pairwise", "p.tsv", H_PAIR + "q1\ta1\td1\td2\t0\nq1\ta1\td1\t \t0\n", 3, "empty loser"
    ),
    "row with too many fields": BadInput(
        "pairwise", "p.csv", "query,winner,loser\nq1,d1,d2\nq1,d1,d2,d3\n", 3, "expected 3 fields"
    ),
    "TREC run line with wrong number of fields": BadInput(
        "run", "r.trec", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 t\n", 2, "needs 6 fields", RUN
    ),
    "qrels line with wrong number of fields": BadInput(
        "graded", "g.qrels", "q1 0 d1 1\nq1 d2 1\n", 2, "needs 4 fields"
    ),
    "non-numeric score": BadInput(
        "run", "r.trec", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 high t\n", 2, "score must be a number", RUN
    ),
    "NaN score": BadInput(
        "run", "r.trec", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 NaN t\n", 2, "score must be finite", RUN
    ),
    "infinite score": BadInput(
        "run", "r.csv", H_RUN + "q1,d1,1,2.0\nq1,d2,2,-inf\n", 3, "score must be finite", RUN
    ),
    "non-integer run rank": BadInput(
        "run", "r.trec", "q1 Q0 d1 one 2.0 t\n", 1, "rank must be an integer", RUN
    ),
    "repeated (query, document) in a run": BadInput(
        "run",
        "r.trec",
        "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq1 Q0 d1 3 0.5 t\n",
        3,
        "item repeated in the run",
        RUN,
    ),
    "non-UTF-8 bytes": BadInput(
        "pairwise",
        "p.tsv",
        H_PAIR.encode() + b"q1\ta1\td1\td2\t0\nq\xe9\ta1\td1\td2\t0\n",
        3,
        "not valid UTF-8",
    ),
    "empty file": BadInput("pairwise", "p.tsv", b"", 1, "the file is empty"),
    "header only": BadInput("pairwise", "p.tsv", H_PAIR, 1, "no data rows"),
    "invalid JSON": BadInput(
        "pairwise",
        "p.jsonl",
        '{"query": "q1", "winner": "d1", "loser": "d2"}\n{"query": \n',
        2,
        "not valid JSON",
    ),
    "malformed nested tier": BadInput(
        "listwise",
        "l.jsonl",
        '{"query": "q1", "ranking": ["d1", [["d2"]]]}\n',
        1,
        "a tier must be an item",
    ),
    # --- issue 12: pairwise shapes, column audit, separators -----------------------------
    "header mixing pairwise shapes": BadInput(
        "pairwise",
        "p.csv",
        "query,item_a,item_b,winner,loser\nq1,d1,d2,d1,d2\n",
        1,
        "mix the native and arena shapes",
    ),
    "arena winner that is none of the two items": BadInput(
        "pairwise",
        "p.csv",
        "query,item_a,item_b,winner\nq1,d1,d2,model_a\nq1,d1,d2,d9\n",
        3,
        "winner is not one of the two items",
    ),
    "arena items that are the same": BadInput(
        "pairwise",
        "p.csv",
        "query,item_a,item_b,winner\nq1,d1,d2,a\nq1,d3,d3,tie\n",
        3,
        "winner and loser are the same item",
    ),
    "prefs-release winner that is neither a nor b": BadInput(
        "pairwise", "p.txt", "q1 d1 d2 d1\nq1 d1 d2 d3\n", 2, "winner is not one of the two items"
    ),
    "prefs-release line with wrong number of fields": BadInput(
        "pairwise", "p.txt", "q1 d1 d2 d1\nq1 d1 d2\n", 2, "needs 4 fields"
    ),
    "trec-prefs document twice in one sub-group": BadInput(
        "pairwise", "p.txt", "q1 u1 s1 d1 2\nq1 u1 s1 d2 1\nq1 u1 s1 d1 1\n", 3, "listed twice"
    ),
    "trec-prefs without any preference": BadInput(
        "pairwise", "p.txt", "q1 u1 s1 d1 1\nq1 u1 s1 d2 1\n", 1, "expresses no preference"
    ),
    "trec-prefs rel_level not a number": BadInput(
        "pairwise",
        "p.txt",
        "q1 u1 s1 d1 1\nq1 u1 s1 d2 high\n",
        2,
        "rel_level must be a number",
        ("--format", "trec-prefs"),
    ),
    "misspelt optional column (listwise)": BadInput(
        "listwise",
        "l.csv",
        "query,anotator,item,rank\nq1,a1,d1,1\n",
        1,
        "unknown column 'anotator'",
    ),
    "misspelt optional column (run)": BadInput(
        "run", "r.csv", "query,item,rank,scores\nq1,d1,1,2.0\n", 1, "unknown column 'scores'", RUN
    ),
    "misspelt optional JSONL key (pairwise)": BadInput(
        "pairwise",
        "p.jsonl",
        '{"query": "q1", "winner": "d1", "loser": "d2"}\n'
        '{"query": "q1", "winner": "d1", "loser": "d3", "ties": 1}\n',
        2,
        "unknown column 'ties'",
    ),
    "comma-separated file named .tsv": BadInput(
        "pairwise", "p.tsv", "query,winner,loser\nq1,d1,d2\n", 1, "looks comma-separated"
    ),
    "tab-separated file named .csv": BadInput(
        "graded", "g.csv", "query\titem\tgrade\nq1\td1\t1\n", 1, "looks tab-separated"
    ),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_bad_input_is_rejected_and_stores_nothing(
    case: BadInput, seeded_db_url: str, write_file: Callable[[str, str | bytes], Path]
) -> None:
    path = write_file(case.name, case.content)
    before = store_counts(seeded_db_url)

    result = run_cli(seeded_db_url, "ingest", case.kind, str(path), *case.options)

    assert result.exit_code == 1, result.output
    message = result.output.strip().splitlines()[-1]
    assert message.startswith("Error: ")
    assert f"{path}, line {case.line}:" in message
    assert case.fragment in message
    assert "Traceback" not in result.output
    assert store_counts(seeded_db_url) == before


def test_unknown_extension_asks_for_format(
    seeded_db_url: str, write_file: Callable[[str, str | bytes], Path]
) -> None:
    path = write_file("p.dat", "query,winner,loser\nq1,d1,d2\n")
    result = run_cli(seeded_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 1
    assert "--format" in result.output
    ingested(seeded_db_url, "pairwise", path, "--format", "csv")


def test_missing_file_is_an_error(seeded_db_url: str, tmp_path: Path) -> None:
    result = run_cli(seeded_db_url, "ingest", "pairwise", str(tmp_path / "nope.tsv"))
    assert result.exit_code == 1
    assert "no such file" in result.output


def test_run_needs_consistent_system_entries(
    seeded_db_url: str, write_file: Callable[[str, str | bytes], Path]
) -> None:
    """A failure while writing (not parsing) also rolls the whole file back."""
    first = write_file("a.trec", "q1 Q0 d1 1 2.0 t\n")
    second = write_file("b.trec", "q9 Q0 d9 1 3.0 t\nq1 Q0 d1 1 1.0 t\n")
    ingested(seeded_db_url, "run", first)
    before = store_counts(seeded_db_url)
    result = run_cli(seeded_db_url, "ingest", "run", str(second), "--system", "s")
    assert result.exit_code == 1
    assert "already has entries" in result.output
    assert store_counts(seeded_db_url) == before  # q9 and d9 were not created either


# --- commands that used to traceback, mislead or lose data (issue 12) -------------------

PAIRS = "query,winner,loser\n" + "".join(f"q{i % 7},d{i},d{i + 1}\n" for i in range(2500))
MEASURES = ("-m", "RDQm2-a1@10", "-m", "nDCG@10")


def _graded_build(url: str, tmp_path: Path, runs: dict[str, str]) -> None:
    """Graded labels for q1..q3, a graded build ``g``, and the given runs (system -> CSV)."""
    qrels = tmp_path / "g.qrels"
    qrels.write_text("q1 0 d1 2\nq1 0 d2 1\nq2 0 e1 1\nq3 0 f1 1\n")
    steps = [("ingest", "graded", str(qrels)), ("build", "--source", "graded", "--name", "g")]
    for system, content in runs.items():
        (tmp_path / f"{system}.csv").write_text(content)
        steps.append(("ingest", "run", str(tmp_path / f"{system}.csv"), "--system", system))
    for step in steps:
        assert run_cli(url, *step).exit_code == 0, step


def test_run_sharing_no_query_with_the_orls(
    seeded_db_url: str, tmp_path: Path, write_file: Write
) -> None:
    """Regression: run ids ``Q1`` against ORLs of ``q1`` gave a mean of 0.0000, exit 0."""
    upper = "query,item,rank,score\nQ1,d1,1,2.0\nQ2,e1,1,1.0\n"
    _graded_build(seeded_db_url, tmp_path, {"upper": upper, "upper2": upper})
    trec = write_file("upper.trec", "Q1 Q0 d1 1 2.0 t\n")
    for command in (
        ("score", "--build", "g", "--system", "upper", *MEASURES),
        ("score", "--build", "g", "--run", str(trec), *MEASURES),
        ("compare", "--build", "g", "--system", "upper", "--system", "upper2", *MEASURES),
        ("report", "--build", "g", "-o", str(tmp_path / "r.html")),
    ):
        result = run_cli(seeded_db_url, *command)
        assert result.exit_code == 1, command
        message = result.output.strip().splitlines()[-1]
        assert "the run and the ORLs share no query" in message
        assert "run queries 'Q1'" in message  # the run's side
        assert "ORL queries 'q1', 'q2', 'q3'" in message  # the ORLs' side
        assert "Traceback" not in result.output
    assert not (tmp_path / "r.html").exists()


def test_scoring_a_deleted_runs_system(seeded_db_url: str, tmp_path: Path) -> None:
    """Regression: ``score --system`` printed 0.0000 with exit 0 after its batch was deleted."""
    run = "query,item,rank,score\nq1,d1,1,2.0\n"
    _graded_build(seeded_db_url, tmp_path, {"keep": run, "ghost": run.replace("d1", "d2")})
    listing = run_cli(seeded_db_url, "batches", "list", "--format", "csv").stdout.splitlines()
    ghost_batch = next(line.split(",")[0] for line in listing if line.endswith(",ghost"))
    assert run_cli(seeded_db_url, "batches", "delete", ghost_batch).exit_code == 0
    for command in (
        ("score", "--build", "g", "--system", "ghost", *MEASURES),
        ("compare", "--build", "g", "--system", "keep", "--system", "ghost", *MEASURES),
        ("report", "--build", "g", "--system", "ghost", "-o", str(tmp_path / "r.html")),
    ):
        result = run_cli(seeded_db_url, *command)
        assert result.exit_code == 1, command
        assert "no system 'ghost'" in result.output and "known: keep" in result.output


def test_postgresql_url_without_psycopg_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression: printed a ModuleNotFoundError traceback."""
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(StoreError, match=r"pip install 'orlbuild\[postgres\]'"):
        create_store_engine("postgresql://user@localhost/db")
    result = run_cli("postgresql://user@localhost/db", "status")
    assert result.exit_code == 1
    assert "orlbuild[postgres]" in result.output
    assert "Traceback" not in result.output


def test_downgrade_dropping_rows_is_refused_without_yes(
    migrated_db_url: str, write_file: Write
) -> None:
    """Regression: ``db downgrade 0002_builds`` silently deleted every saved evaluation."""
    path = write_file("g.qrels", "q1 0 d1 2\nq1 0 d2 1\n")
    run = write_file("r.trec", "q1 Q0 d1 1 2.0 t\n")
    for args in (
        ("ingest", "graded", str(path)),
        ("ingest", "run", str(run), "--system", "s"),
        ("build", "--source", "graded", "--name", "g"),
        ("score", "--build", "g", "--system", "s", "-m", "nDCG@10", "--save"),
    ):
        assert run_cli(migrated_db_url, *args).exit_code == 0, args
    refused = run_cli(migrated_db_url, "db", "downgrade", "0002_builds")
    assert refused.exit_code == 1
    message = refused.output.strip().splitlines()[-1]
    assert "evaluations (1 rows)" in message and "evaluation_values (1 rows)" in message
    assert "--yes" in message
    with disposed(create_store_engine(migrated_db_url)) as engine:
        assert current_revision(engine) == head_revision()  # nothing changed
    saved = run_cli(migrated_db_url, "results", "list", "--format", "json")
    assert saved.exit_code == 0 and "nDCG(grade=native,gain=linear)@10" in saved.output  # saved

    assert run_cli(migrated_db_url, "db", "downgrade", "0002_builds", "--yes").exit_code == 0
    with disposed(create_store_engine(migrated_db_url)) as engine:
        assert current_revision(engine) == "0002_builds"


def test_grade_agg_typo_in_eval_is_a_one_line_error(tmp_path: Path, write_file: Write) -> None:
    """Regression: ``orlbuild eval --grade-agg foo`` printed a ValueError traceback."""
    orl = write_file("o.qrels", "q1 0 d1 1\n")
    run = write_file("r.trec", "q1 Q0 d1 1 1.0 t\n")
    result = run_cli(
        f"sqlite:///{tmp_path / 'unused.db'}",
        "eval",
        str(orl),
        str(run),
        "-m",
        "nDCG@10",
        "--grade-agg",
        "foo",
    )
    assert result.exit_code == 2
    assert "median, mean, max, majority" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("phase", ["read", "write"])
def test_ctrl_c_says_nothing_was_stored(
    phase: str,
    seeded_db_url: str,
    write_file: Callable[[str, str | bytes], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def interrupt(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    target = (
        "orlbuild.ingest.source.Source._advance"
        if phase == "read"
        else "orlbuild.store.batches.insert_rows"
    )
    monkeypatch.setattr(target, interrupt)
    path = write_file("p.csv", PAIRS)
    before = store_counts(seeded_db_url)
    result = run_cli(seeded_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 130
    assert f"interrupted: nothing from {path} was stored" in result.stderr
    assert "Traceback" not in result.output
    assert store_counts(seeded_db_url) == before
