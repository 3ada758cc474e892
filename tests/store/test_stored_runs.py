"""Stored runs as score, compare, report and the pipeline use them (issue 12, items 2-4).

Runs without scores are ordered by rank; a deleted run leaves no ghost system; a
run sharing no query with the ORLs is an error; missing queries are named.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orlbuild.errors import InputError, StoreError
from orlbuild.services.build_evaluation import evaluate_stored_build
from orlbuild.store import list_systems
from scoring import ORL, evaluate_run
from tests.ingest.conftest import run_cli, store_counts
from tests.stores import store_engine

QRELS = "q1 0 d1 2\nq1 0 d2 1\nq2 0 e1 1\nq2 0 e2 1\nq3 0 f1 1\n"
MEASURES = ("-m", "RDQm2-a1@10", "-m", "nDCG@10")


def _ok(url: str, *args: str) -> str:
    result = run_cli(url, *args)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def built(migrated_db_url: str, tmp_path: Path) -> str:
    """A store with graded labels for q1..q3 and a graded build ``g``."""
    qrels = tmp_path / "g.qrels"
    qrels.write_text(QRELS)
    _ok(migrated_db_url, "ingest", "graded", str(qrels))
    _ok(migrated_db_url, "build", "--source", "graded", "--name", "g")
    return migrated_db_url


def _run(url: str, tmp_path: Path, system: str, content: str, name: str | None = None) -> str:
    path = tmp_path / (name or f"{system}.csv")
    path.write_text(content)
    return _ok(url, "ingest", "run", str(path), "--system", system)


def _score(url: str, system: str) -> dict:
    result = run_cli(
        url, "score", "--build", "g", "--system", system, *MEASURES, "--format", "json"
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# --- item 2: runs without scores --------------------------------------------------------


RANK_ONLY = "query,item,rank\nq1,d2,1\nq1,d1,2\nq2,e1,1\nq2,e2,2\nq3,x9,1\nq3,f1,2\n"


def test_run_without_scores_is_ordered_by_rank(built: str, tmp_path: Path) -> None:
    """Regression: used to fail with "run column 'score' holds a non-finite ... nan"."""
    _run(built, tmp_path, "ranked", RANK_ONLY)
    payload = _score(built, "ranked")
    orls = {"q1": ORL({"d1": 1, "d2": 2}), "q2": ORL({"e1": 1, "e2": 1}), "q3": ORL({"f1": 1})}
    lists = {"q1": ["d2", "d1"], "q2": ["e1", "e2"], "q3": ["x9", "f1"]}
    expected = evaluate_run(orls, lists, ["RDQm2-a1@10", "nDCG@10"]).to_frame().mean()
    assert payload["mean"]["RDQm2-a1@10"] == pytest.approx(expected["RDQm2-a1@10"])
    assert payload["mean"]["nDCG@10"] == pytest.approx(expected["nDCG@10"])
    assert payload["conventions"]["run_order"] == "rank column ascending"
    # Reversing the ranks must change the score (the order is really read).
    reversed_run = "query,item,rank\nq1,d1,1\nq1,d2,2\nq2,e1,1\nq2,e2,2\nq3,f1,1\nq3,x9,2\n"
    _run(built, tmp_path, "reversed", reversed_run)
    assert _score(built, "reversed")["mean"]["RDQm2-a1@10"] > payload["mean"]["RDQm2-a1@10"]


def test_runs_without_scores_in_compare_report_and_pipeline(built: str, tmp_path: Path) -> None:
    _run(built, tmp_path, "a", RANK_ONLY)
    _run(built, tmp_path, "b", "query,item,rank\nq1,d1,1\nq2,e2,1\nq3,f1,1\n")
    _ok(built, "compare", "--build", "g", "--system", "a", "--system", "b", *MEASURES)
    _ok(built, "report", "--build", "g", "-o", str(tmp_path / "r.html"))
    with store_engine(built) as engine:
        evaluation = evaluate_stored_build(engine, "g", ["RDQm2-a1@10"])
    assert set(evaluation.per_query) == {"a", "b"}


# --- item 3: ghost systems ----------------------------------------------------------------


def _batch_of(url: str, system: str) -> int:
    listing = json.loads(run_cli(url, "batches", "list", "--format", "json").stdout)
    rows = listing if isinstance(listing, list) else listing.get("batches", listing)
    return next(int(b["id"]) for b in rows if b["system"] == system)


def test_deleting_a_runs_last_batch_leaves_no_ghost_system(built: str, tmp_path: Path) -> None:
    """Regression: status counted the system, score printed 0.0000, the report showed it."""
    _run(built, tmp_path, "keep", "query,item,rank,score\nq1,d1,1,2.0\nq2,e1,1,1.0\n")
    _run(built, tmp_path, "ghost", "query,item,rank,score\nq1,d2,1,2.0\nq2,e2,1,1.0\n")
    deleted = run_cli(built, "batches", "delete", str(_batch_of(built, "ghost")))
    assert deleted.exit_code == 0
    assert "system 'ghost' has no run left and was removed" in deleted.stderr

    runs = store_counts(built)["collections"]["default"]["runs"]
    assert list(runs) == ["keep"]
    with store_engine(built) as engine:
        assert list_systems(engine) == ["keep"]
        evaluation = evaluate_stored_build(engine, "g", ["RDQm2-a1@10"])
        with pytest.raises(StoreError, match="no system 'ghost'"):
            evaluate_stored_build(engine, "g", ["RDQm2-a1@10"], systems=["keep", "ghost"])
    assert list(evaluation.per_query) == ["keep"]

    # score/compare/report refusing it: tests/ingest/test_bad_inputs.py
    # Ingesting the run again brings the system back.
    _run(built, tmp_path, "ghost", "query,item,rank,score\nq1,d2,1,2.0\nq2,e2,1,1.0\n", "again.csv")
    assert _score(built, "ghost")["queries"] == 3


# --- item 4: query overlap ------------------------------------------------------------------


def test_partial_overlap_names_the_missing_queries(built: str, tmp_path: Path) -> None:
    """Regression: the report said "has no results for 1 ORL queries" without naming it."""
    _run(built, tmp_path, "part", "query,item,rank,score\nq1,d1,1,2.0\nq2,e1,1,1.0\n")
    _run(built, tmp_path, "full", "query,item,rank,score\nq1,d1,1,2.0\nq2,e1,1,1.0\nq3,f1,1,1\n")
    score = run_cli(built, "score", "--build", "g", "--system", "part", *MEASURES)
    assert score.exit_code == 0
    # The scoring core's overlap warning: how many of how many, and which.
    assert "1 of 3 ORL queries are missing from the run: 'q3'" in score.stderr
    compare = run_cli(
        built, "compare", "--build", "g", "--system", "part", "--system", "full", *MEASURES
    )
    assert compare.exit_code == 0
    assert "part: 1 ORL queries are missing from the run (scored 0): 'q3'" in compare.output
    with store_engine(built) as engine:
        evaluation = evaluate_stored_build(engine, "g", ["RDQm2-a1@10"])
    notes = evaluation.report_data("t").notes
    assert "part: 1 ORL queries are missing from the run (scored 0): 'q3'" in notes
    report = run_cli(built, "report", "--build", "g", "-o", str(tmp_path / "r.html"))
    assert report.exit_code == 0
    assert "part: 1 ORL queries are missing from the run (scored 0): 'q3'" in report.stderr
    html = (tmp_path / "r.html").read_text()
    assert "part: 1 ORL queries are missing from the run (scored 0): &#x27;q3&#x27;" in html


def test_many_missing_queries_are_summarised(built: str, tmp_path: Path) -> None:
    from orlbuild.services.evaluations import missing_queries_note

    note = missing_queries_note("s", [f"q{i}" for i in range(8)], "skip")
    assert note == (
        "s: 8 ORL queries are missing from the run (left out): "
        "'q0', 'q1', 'q2', 'q3', 'q4' and 3 more"
    )


def test_ingest_run_names_queries_new_to_the_collection(built: str, tmp_path: Path) -> None:
    """Regression: ``ingest run`` silently added the run's unknown queries to the collection."""
    path = tmp_path / "r.csv"
    path.write_text("query,item,rank,score\nq1,d1,1,2.0\nQ7,d1,1,1.0\nQ8,d2,1,1.0\n")
    result = run_cli(built, "ingest", "run", str(path), "--system", "s")
    assert result.exit_code == 0
    assert "2 queries of this run are new to the collection: 'Q7', 'Q8'" in result.stderr
    again = tmp_path / "r2.csv"
    again.write_text("query,item,rank,score\nq1,d2,1,2.0\n")
    quiet = run_cli(built, "ingest", "run", str(again), "--system", "t")
    assert "new to the collection" not in quiet.output


def test_overlap_check_is_a_library_error(built: str) -> None:
    import pandas as pd

    from orlbuild.services.evaluations import score_run

    with store_engine(built) as engine:
        run = pd.DataFrame({"query": ["x"], "item": ["d1"], "score": [1.0]})
        with pytest.raises(InputError, match="share no query"):
            score_run(engine, "g", run, system="x", measures=["nDCG@10"])


def test_system_left_without_run_by_an_older_store_is_noted(built: str, tmp_path: Path) -> None:
    """A system row without batches (left by deletes before this rule) is reported, not scored."""
    from sqlalchemy import insert, select

    from orlbuild.store.models import Collection, System

    _run(built, tmp_path, "real", "query,item,rank,score\nq1,d1,1,2.0\n")
    with store_engine(built) as engine:
        with engine.begin() as connection:
            cid = connection.scalar(select(Collection.id).where(Collection.name == "default"))
            connection.execute(insert(System).values(collection_id=cid, name="old-ghost"))
        evaluation = evaluate_stored_build(engine, "g", ["RDQm2-a1@10"])
    assert list(evaluation.per_query) == ["real"]
    assert (
        "old-ghost has no run (its batches were deleted): left out"
        in evaluation.report_data("t").notes
    )
    assert list(store_counts(built)["collections"]["default"]["runs"]) == ["real"]


def test_pipeline_prints_its_database_and_names_missing_queries(tmp_path: Path) -> None:
    """The summary says which database to give follow-up commands and what a run misses."""
    (tmp_path / "g.qrels").write_text(QRELS)
    (tmp_path / "part.csv").write_text("query,item,rank\nq1,d1,1\nq2,e1,1\n")
    config = tmp_path / "pipeline.toml"
    config.write_text(
        'measures = ["RDQm2-a1@10"]\n'
        '[[inputs]]\nkind = "graded"\npath = "g.qrels"\n'
        '[[inputs]]\nkind = "run"\npath = "part.csv"\nsystem = "part"\n'
        '[[builds]]\nname = "g"\nsource = "graded"\n'
        '[scoring]\nbuild = "g"\n'
    )
    result = run_cli(
        f"sqlite:///{tmp_path / 'unused.db'}", "pipeline", str(config), "--format", "json"
    )
    assert result.exit_code == 0, result.output
    url = f"sqlite:///{tmp_path / 'unused.db'}"
    assert f"database: {url}" in result.stderr
    warning = "part: 1 ORL queries are missing from the run (scored 0): 'q3'"
    assert f"warning: {warning}" in result.stderr
    assert json.loads(result.stdout)["warnings"] == [warning]
