"""The first hour with one's own data (issue 40): what a new user trips over, item by item.

Each test names its item of the issue and checks the exact message.
"""

from __future__ import annotations

import re
from pathlib import Path

from orlbuild.store.schema import head_revision
from tests.files import Write
from tests.store_cli import cli, cli_json, one_error_line

PAIRS = "query\twinner\tloser\nq1\td1\td2\nq1\td2\td3\n"


def test_ingest_creates_and_migrates_a_new_sqlite_store(write_file: Write, tmp_path: Path) -> None:
    """Item 2: ``ingest`` into a missing SQLite file creates it, saying so in one line."""
    data = write_file("prefs.tsv", PAIRS)
    store = tmp_path / "new.db"
    code, out, err = cli(str(store), "ingest", "pairwise", str(data))
    assert code == 0, err
    assert err == f"created a new SQLite store {store} (schema {head_revision()})\n"
    assert out.startswith(f"stored 2 pairwise rows from {data} as batch 1")
    code, out, err = cli(str(store), "ingest", "pairwise", str(data))
    assert code == 0 and err == "" and "already stored as batch 1" in out
    missing = tmp_path / "absent" / "new.db"
    one_error_line(
        *cli(str(missing), "ingest", "pairwise", str(data)),
        f"cannot create the store {missing}: there is no folder {missing.parent} (create it first)",
    )
    assert not missing.parent.exists()


def test_ingest_still_refuses_an_older_schema(migrated_db_url: str, write_file: Write) -> None:
    """Item 2: an existing store of an older schema still needs ``db upgrade``."""
    from orlbuild.store.schema import downgrade

    downgrade(migrated_db_url, "0010_bulk_load_keys")
    err = one_error_line(
        *cli(migrated_db_url, "ingest", "pairwise", str(write_file("p.tsv", PAIRS)))
    )
    assert "orlbuild db upgrade" in err


def test_ingest_names_the_shape_it_read(migrated_db_url: str, write_file: Write) -> None:
    """Item 4: the ingest message names the detected shape."""
    prefs = write_file("round1.txt", "q1 d1 d2 d1\nq1 d2 d3 d3\n")
    code, out, err = cli(migrated_db_url, "ingest", "pairwise", str(prefs))
    assert (code, err) == (0, "")
    assert out == (
        f"stored 2 pairwise rows from {prefs} as batch 1 (read as prefs-release: qid a b winner)\n"
    )
    arena = write_file("arena.csv", "qid,model_a,model_b,winner\nq,m1,m2,model_b\n")
    code, out, err = cli(migrated_db_url, "ingest", "pairwise", str(arena))
    assert out == (
        f"stored 1 pairwise rows from {arena} as batch 2 "
        "(read as arena csv: query item_a item_b winner)\n"
    )
    run = write_file("bm25.run", "q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\n")
    code, out, err = cli(migrated_db_url, "ingest", "run", str(run), "--system", "bm25")
    assert out == (
        f"stored 2 run rows from {run} as batch 3 "
        "(system 'bm25'; read as trec: query Q0 item rank score tag)\n"
    )
    listed = cli_json(migrated_db_url, "batches", "list")
    assert [row["reading"] for row in listed] == [
        "detected format, read as prefs-release: qid a b winner, --duplicates error",
        "detected format, read as arena csv: query item_a item_b winner, --duplicates error",
        "detected format, read as trec: query Q0 item rank score tag, --duplicates error, "
        "--score-precision float32",
    ]


PLAN = "query\titem_a\titem_b\twinner\nq1\td1\td2\ta\nq1\td2\td3\t\nq1\td1\td3\tb\nq2\td1\td2\t\n"


def test_partly_answered_plan_file_is_read_without_its_open_pairs(
    migrated_db_url: str, write_file: Write
) -> None:
    """Item 1: rows with an empty winner are skipped and counted; --require-answers refuses."""
    plan = write_file("round1-partial.tsv", PLAN)
    refused = one_error_line(
        *cli(migrated_db_url, "ingest", "pairwise", str(plan), "--require-answers")
    )
    assert refused == (
        f"Error: {plan}, line 3: winner is not answered (the cell is empty); fill winner in "
        "every row, or leave out --require-answers to skip the rows not answered"
    )
    code, out, err = cli(migrated_db_url, "ingest", "pairwise", str(plan))
    assert code == 0, err
    assert re.match(rf"stored 2 pairwise rows from {re.escape(str(plan))} as batch \d+ ", out), out
    assert err == (
        f"Warning: {plan}: skipped 2 row(s) not answered (empty winner, first at line 3); "
        "pass --require-answers to refuse such a file\n"
    )
    none = write_file("round0.tsv", "query\titem_a\titem_b\twinner\nq1\td1\td2\t\n")
    assert one_error_line(*cli(migrated_db_url, "ingest", "pairwise", str(none))) == (
        f"Error: {none}, line 2: no row is answered (every winner is empty); fill winner in "
        "the rows judged"
    )
    evalica = write_file("e.csv", "left,right,winner\nd1,d2,\n d1,d2,left\n")
    code, _, err = cli(migrated_db_url, "ingest", "pairwise", str(evalica), "--require-answers")
    assert "line 2: winner is not answered (the cell is empty)" in err


QRELS = "q1 0 d1 0\nq1 0 d2 0\nq1 0 d3 1\n"
RUN = "q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\n"


def test_wrong_kind_files_are_named_and_nothing_is_stored(
    migrated_db_url: str, write_file: Write
) -> None:
    """Item 3: the kind is recognised by content, and nothing of the file is stored."""
    qrels, run = write_file("qrels.txt", QRELS), write_file("run.trec", RUN)
    graded = write_file("labels.tsv", "query\titem\tgrade\nq1\td1\t2\n")
    cases = [
        (("run", str(qrels), "--system", "x"), qrels, "qrels", "graded", "run"),
        (("pairwise", str(qrels)), qrels, "qrels", "graded", "pairwise"),
        (("graded", str(run)), run, "run", "run", "graded"),
        (("listwise", str(run)), run, "run", "run", "listwise"),
    ]
    for args, path, name, command, kind in cases:
        fields = "query iteration item grade" if name == "qrels" else "query Q0 item rank score tag"
        first = path.read_text().splitlines()[0]
        assert one_error_line(*cli(migrated_db_url, "ingest", *args)) == (
            f"Error: {path}, line 1: this is a TREC {name} file; use `orlbuild ingest {command}` "
            f"(got {first!r}); its lines read as {fields}; if it really holds {kind} data, "
            "name its format with --format"
        )
    assert one_error_line(*cli(migrated_db_url, "ingest", "pairwise", str(graded))) == (
        f"Error: {graded}, line 1: this is a graded file; use `orlbuild ingest graded` "
        "(got 'query\\titem\\tgrade'); its columns are those of graded data, and fit no "
        "pairwise shape (--format does not change that)"
    )
    listwise = write_file("p.csv", "query,annotator,item,rank\nq1,d1,d2,1\n")
    assert one_error_line(*cli(migrated_db_url, "ingest", "pairwise", str(listwise))) == (
        f"Error: {listwise}, line 1: this is a listwise or run file; use `orlbuild ingest "
        "listwise` or `orlbuild ingest run` (got 'query,annotator,item,rank'); its columns are "
        "those of listwise or run data, and fit no pairwise shape (--format does not change that)"
    )
    code, out, _ = cli(migrated_db_url, "batches", "list", "--format", "json")
    assert code == 0 and out.strip() == "[]"  # not even lines 1-2 of the qrels
    # Preferences with numeric ids that also look like qrels are still preferences.
    numeric = write_file("prefs.txt", "1 100 200 100\n1 100 300 300\n")
    code, out, err = cli(migrated_db_url, "ingest", "pairwise", str(numeric))
    assert code == 0, err


def test_systems_and_collections_are_listed_with_counts(
    migrated_db_url: str, write_file: Write
) -> None:
    """Item 6: ``systems list [--collection C]`` and ``collections list``, text and JSON."""
    run = write_file("bm25.trec", "q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\nq2 Q0 d1 1 1 bm25\n")
    assert cli(migrated_db_url, "ingest", "run", str(run), "--system", "bm25")[0] == 0
    assert cli(migrated_db_url, "ingest", "run", str(run), "--system", "dense", "-c", "web")[0] == 0
    assert cli(migrated_db_url, "ingest", "pairwise", str(write_file("p.tsv", PAIRS)))[0] == 0
    assert cli_json(migrated_db_url, "systems", "list") == [
        {"collection": "default", "system": "bm25", "runs": 1, "queries": 2, "rows": 3},
        {"collection": "web", "system": "dense", "runs": 1, "queries": 2, "rows": 3},
    ]
    assert [s["system"] for s in cli_json(migrated_db_url, "systems", "list", "-c", "web")] == [
        "dense"
    ]
    assert cli_json(migrated_db_url, "collections", "list") == [
        {
            "collection": "default",
            "queries": 2,
            "items": 3,
            "annotators": 1,
            "listwise": 0,
            "pairwise": 2,
            "graded": 0,
            "systems": 1,
            "batches": 2,
            "builds": 0,
        },
        {
            "collection": "web",
            "queries": 2,
            "items": 2,
            "annotators": 0,
            "listwise": 0,
            "pairwise": 0,
            "graded": 0,
            "systems": 1,
            "batches": 1,
            "builds": 0,
        },
    ]
    code, out, _ = cli(migrated_db_url, "systems", "list")
    assert code == 0 and out.splitlines()[0] == "Systems" and "dense" in out
    one_error_line(*cli(migrated_db_url, "systems", "list", "-c", "nope"), "no collection 'nope'")


def _two_graded_builds(url: str, write_file: Write) -> None:
    """Builds ``a`` and ``b``: in q1, d1 moves down, d2 up, d3 is removed and d4 added."""
    for name, text in (
        ("c1", "q1 0 d1 3\nq1 0 d2 2\nq1 0 d3 1\nq2 0 d1 1\nq2 0 d2 2\n"),
        ("c2", "q1 0 d1 1\nq1 0 d2 2\nq1 0 d4 1\nq2 0 d1 1\nq2 0 d2 2\n"),
    ):
        assert (
            cli(url, "ingest", "graded", str(write_file(f"{name}.qrels", text)), "-c", name)[0] == 0
        )
        build = ("build", "--source", "graded", "-c", name, "--name", "ab"[name == "c2"])
        assert cli(url, *build)[0] == 0


def test_orl_diff_gives_a_summary_first_and_takes_query_and_limit(
    migrated_db_url: str, write_file: Write
) -> None:
    """Item 7: a summary (moved up, moved down, added, removed per query), --query, --limit."""
    _two_graded_builds(migrated_db_url, write_file)
    code, out, err = cli(migrated_db_url, "orl", "diff", "a", "b", "--limit", "1")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == (
        "build 1 -> build 2, items: 1 moved up, 1 moved down, 1 added, 1 removed, in 1 of 2 queries"
    )
    assert lines[1] == "per query (up, down, added, removed)"
    assert "moved items (the first 1 of 4; --limit 0 shows all)" in lines
    document = cli_json(migrated_db_url, "orl", "diff", "a", "b")
    assert document["totals"] == {
        "up": 1, "down": 1, "added": 1, "removed": 1, "queries_changed": 1, "queries": 2
    }  # fmt: skip
    assert document["summary"] == [{"query": "q1", "up": 1, "down": 1, "added": 1, "removed": 1}]
    assert [(m["item"], m["change"]) for m in document["moved"]] == [
        ("d1", "down"), ("d2", "up"), ("d3", "removed"), ("d4", "added")
    ]  # fmt: skip
    only = cli_json(migrated_db_url, "orl", "diff", "a", "b", "--query", "q2", "--limit", "1")
    assert only["totals"]["queries"] == 1 and only["moved"] == [] and only["summary"] == []
    assert one_error_line(*cli(migrated_db_url, "orl", "diff", "a", "b", "--query", "q9")) == (
        "Error: query 'q9' is in neither build 1 nor build 2; see `orlbuild orl show BUILD`"
    )


def test_a_run_whose_ranks_contradict_its_scores_is_warned_about_once_per_file(
    migrated_db_url: str, write_file: Write
) -> None:
    """Item 12: negated scores (rank 1 on the lowest score): one warning per file, in
    ``ingest run`` and ``eval`` (C-speed path and exact reader alike)."""
    from typer.testing import CliRunner

    from orlbuild.cli.main import app

    lines = [f"q{q} Q0 d{d} {d} {-(10.0 - d)} neg\n" for q in range(3) for d in range(1, 5)]
    run = write_file("neg.trec", "".join(lines))
    warning = (
        f"Warning: {run}: the rank column orders the documents opposite to the scores in 3 of "
        "3 queries (rank 1 has a low score: negated scores?); like trec_eval, orlbuild orders a "
        "run by its scores, not its ranks\n"
    )
    code, _, err = cli(migrated_db_url, "ingest", "run", str(run), "--system", "neg")
    assert code == 0 and err.startswith(warning) and err.count("rank column") == 1
    qrels = write_file("qrels.txt", "q0 0 d1 2\nq1 0 d2 1\nq2 0 d3 1\n")
    runner = CliRunner()
    for runs in ([run], [run, run]):
        result = runner.invoke(app, ["eval", str(qrels), *map(str, runs), "-m", "AP"])
        assert result.exit_code == 0
        assert result.stderr.count(warning) == len(runs)
    table = write_file("neg.tsv", "query\titem\trank\tscore\nq0\td1\t1\t-9\nq0\td2\t2\t-8\n")
    result = runner.invoke(app, ["eval", str(qrels), str(table), "-m", "AP"])
    assert f"Warning: {table}: the rank column orders the documents opposite" in result.stderr
    fine = write_file("ok.trec", "".join(f"q0 Q0 d{d} {d} {10 - d} ok\n" for d in range(1, 5)))
    result = runner.invoke(app, ["eval", str(qrels), str(fine), "-m", "AP"])
    assert "rank column" not in result.stderr


def test_columns_map_other_names_on_the_command_line_and_in_toml(
    migrated_db_url: str, write_file: Write, tmp_path: Path
) -> None:
    """Item 5: ``--columns preferred=winner,other=loser`` (and TOML ``columns``) read a file
    whose columns are named otherwise, without editing it."""
    from orlbuild.errors import ConfigError
    from orlbuild.pipeline.config import load_config
    from tests.pipeline_configs import pipeline_toml

    data = write_file("theirs.csv", "topic,preferred,other\nq1,d1,d2\nq1,d2,d3\n")
    mapping = "preferred=winner,other=loser,topic=query"
    code, out, err = cli(migrated_db_url, "ingest", "pairwise", str(data), "--columns", mapping)
    assert code == 0, err
    assert out == (
        f"stored 2 pairwise rows from {data} as batch 1 (read as native csv: query winner loser)\n"
    )
    batch = cli_json(migrated_db_url, "batches", "list")[0]
    assert batch["reading"].endswith(f"--columns {mapping}")
    jsonl = write_file("theirs.jsonl", '{"Topic": "q2", "preferred": "d1", "other": "d2"}\n')
    code, out, err = cli(migrated_db_url, "ingest", "pairwise", str(jsonl), "--columns", mapping)
    assert code == 0 and "stored 1 pairwise rows" in out, err
    assert one_error_line(
        *cli(migrated_db_url, "ingest", "pairwise", str(data), "--columns", "preferred=winer")
    ).startswith("Error: --columns: 'winer' is not a column of pairwise data; the columns are ")
    assert one_error_line(
        *cli(migrated_db_url, "ingest", "pairwise", str(data), "--columns", "nope=winner")
    ) == (
        f"Error: {data}, line 1: --columns names 'nope', which is not a column of the file "
        "(got 'topic,preferred,other'); name the file's own columns on the left of each '='"
    )
    write_file("a.trec", "q1 Q0 d1 1 2.5 a\n")
    text = pipeline_toml(judgments="theirs.csv").replace(
        'path = "theirs.csv"\n', 'path = "theirs.csv"\ncolumns = { preferred = "winner", '
        'other = "loser", topic = "query" }\n'
    )  # fmt: skip
    config = load_config(write_file("pipeline.toml", text))
    assert dict(config.inputs[0].columns) == {
        "preferred": "winner", "other": "loser", "topic": "query"
    }  # fmt: skip
    bad = write_file("bad.toml", text.replace('"loser"', '"losr"'))
    try:
        load_config(bad)
    except ConfigError as exc:
        assert "inputs[0].columns" in str(exc) and "'losr' is not a column" in str(exc)
    else:  # pragma: no cover - the assertion above must run
        raise AssertionError("a bad columns table was accepted")


def test_columns_with_system_from_name_and_read_every_run(
    migrated_db_url: str, write_file: Write, tmp_path: Path
) -> None:
    """Item 5 for several runs: ``--columns`` applies to every file of ``ingest run
    --system-from``, and under ``tag`` the system is read from the column mapped onto ``tag``;
    the TOML glob with ``system_from`` and ``columns`` reads the same."""
    from orlbuild.pipeline.config import load_config
    from tests.pipeline_configs import pipeline_toml

    header = "qid\tdocid\trank\tscore\tmodel\n"
    (tmp_path / "runs").mkdir()
    first = write_file("runs/one.tsv", header + "q1\td1\t1\t3.0\tbm25\nq1\td2\t2\t2.0\tbm25\n")
    second = write_file("runs/two.tsv", header + "q1\td2\t1\t9.0\tdense\n")
    mapping = "qid=query,docid=item,model=tag"
    code, out, err = cli(
        migrated_db_url, "ingest", "run", str(first), str(second), "--system-from", "tag",
        "--columns", mapping,
    )  # fmt: skip
    assert code == 0, err
    assert "system 'bm25'" in out and "system 'dense'" in out
    systems = {row["system"]: row["rows"] for row in cli_json(migrated_db_url, "systems", "list")}
    assert systems == {"bm25": 2, "dense": 1}
    code, out, err = cli(
        migrated_db_url, "ingest", "run", str(first), str(second), "--system-from", "stem",
        "--columns", "qid=query,docid=item",
    )  # fmt: skip
    assert code == 0 and "system 'one'" in out and "system 'two'" in out, err
    # without the tag mapped, there is no tag to name the systems by: nothing stored
    assert "has no tag column" in one_error_line(
        *cli(
            migrated_db_url, "ingest", "run", str(first), str(second), "--system-from", "tag",
            "--columns", "qid=query,docid=item",
        )
    )  # fmt: skip
    bad = write_file("runs/bad.tsv", header + "q1\td1\t1\tnot-a-score\tother\n")
    before = cli_json(migrated_db_url, "batches", "list")
    assert "line 2" in one_error_line(
        *cli(
            migrated_db_url, "ingest", "run", str(first), str(bad), "--system-from", "tag",
            "--columns", mapping,
        )
    )  # fmt: skip
    assert cli_json(migrated_db_url, "batches", "list") == before
    text = pipeline_toml(judgments="theirs.csv")
    text += (
        '\n[[inputs]]\nkind = "run"\npath = "runs/[ot]*.tsv"\nsystem_from = "tag"\n'
        'columns = "qid=query,docid=item,model=tag"\n'
    )
    write_file("theirs.csv", "query,winner,loser\nq1,d1,d2\n")
    write_file("a.trec", "q1 Q0 d1 1 2.5 a\n")
    config = load_config(write_file("pipeline.toml", text))
    runs = [spec for spec in config.inputs if spec.path.parent.name == "runs"]
    assert [(spec.path.name, spec.system) for spec in runs] == [
        ("one.tsv", "bm25"), ("two.tsv", "dense")
    ]  # fmt: skip


def test_undefined_measures_say_why_with_counts(migrated_db_url: str, write_file: Write) -> None:
    """Item 8: ``score ... -m KendallTau`` names each reason (one tier in the ORL) and its
    count, in ``score`` and ``eval``, in the warning and in JSON."""
    from typer.testing import CliRunner

    from orlbuild.cli.main import app

    qrels = write_file(
        "u.qrels", "q1 0 d1 1\nq1 0 d2 1\nq2 0 d1 2\nq2 0 d2 1\nq3 0 d1 2\nq3 0 d2 1\n"
    )
    run = write_file("u.trec", "q1 Q0 d1 1 2 r\nq1 Q0 d2 2 1 r\nq2 Q0 d1 1 2 r\nq2 Q0 d2 2 1 r\n")
    for args in (("graded", str(qrels)), ("run", str(run), "--system", "r")):
        assert cli(migrated_db_url, "ingest", *args)[0] == 0
    assert cli(migrated_db_url, "build", "--source", "graded", "--name", "g")[0] == 0
    warning = (
        "Warning: KendallTau is undefined for 2 queries (left out of its mean): one tier in the "
        "ORL (1), the run has no results for the query (1)\n"
    )
    code, _, err = cli(
        migrated_db_url, "score", "--build", "g", "--system", "r", "-m", "KendallTau"
    )
    assert code == 0 and warning in err
    document = cli_json(
        migrated_db_url, "score", "--build", "g", "--system", "r", "-m", "KendallTau"
    )
    assert document["undefined_reasons"] == {
        "KendallTau": {"one tier in the ORL": 1, "the run has no results for the query": 1}
    }
    runner = CliRunner()
    result = runner.invoke(app, ["eval", str(qrels), str(run), "-m", "KendallTau", "-m", "AP"])
    assert result.exit_code == 0 and warning in result.stderr
    result = runner.invoke(app, ["eval", str(qrels), str(run), str(run), "-m", "KendallTau"])
    assert (
        "KendallTau is undefined for some queries in 2 of 2 runs (left out of their means): "
        "u (2), u#2 (2); one tier in the ORL (2); the run has no results for the query (2)"
    ) in result.stderr


def test_queries_left_out_of_a_comparison_say_why_with_counts(
    migrated_db_url: str, write_file: Write, tmp_path: Path
) -> None:
    """Item 8: ``compare``, ``eval --compare`` and ``report`` name why queries were left out
    of a measure's paired panel, with counts (q1 is one tier; the runs hold q3's d3, graded
    0, which its ORL leaves out)."""
    from typer.testing import CliRunner

    from orlbuild.cli.main import app

    qrels = write_file(
        "u.qrels", "q1 0 d1 1\nq1 0 d2 1\nq2 0 d1 2\nq2 0 d2 1\nq3 0 d1 2\nq3 0 d2 1\nq3 0 d3 0\n"
    )
    lines = "q1 d1 d2\nq2 d1 d2\nq3 d1 d2 d3\n".splitlines()
    runs = {}
    for name in ("r", "s"):
        body = "".join(
            f"{q} Q0 {doc} {rank} {10 - rank} {name}\n"
            for q, *docs in (line.split() for line in lines)
            for rank, doc in enumerate(docs if name == "r" else docs[::-1], start=1)
        )
        runs[name] = write_file(f"{name}.trec", body)
    assert cli(migrated_db_url, "ingest", "graded", str(qrels))[0] == 0
    for name, path in runs.items():
        assert cli(migrated_db_url, "ingest", "run", str(path), "--system", name)[0] == 0
    assert cli(migrated_db_url, "build", "--source", "graded", "--name", "g")[0] == 0
    note = (
        "KendallTau: 2 queries left out (one tier in the ORL (1), undefined or not scored for "
        "some system (1)); paired tests use the other 1"
    )
    systems = ("--system", "r", "--system", "s")
    code, _, err = cli(migrated_db_url, "compare", "--build", "g", *systems, "-m", "KendallTau")
    assert code == 0 and f"Warning: {note}\n" in err
    result = CliRunner().invoke(
        app, ["eval", str(qrels), str(runs["r"]), str(runs["s"]), "-m", "KendallTau", "--compare"]
    )
    assert result.exit_code == 0 and f"Warning: {note}\n" in result.stderr
    report = tmp_path / "rep.html"
    code, _, err = cli(
        migrated_db_url, "report", "-b", "g", "-m", "KendallTau", "-m", "KendallTau@1",
        "-o", str(report),
    )  # fmt: skip
    assert code == 0 and f"Warning: {note}\n" in err
    assert (
        "KendallTau@1 is undefined on every query: not compared (undefined or not scored for "
        "some system (2), one tier in the ORL (1))"
    ) in report.read_text()
