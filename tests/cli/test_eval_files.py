"""``orlbuild eval`` on files as they come: odd names, compression, several runs, no overlap."""

from __future__ import annotations

import bz2
import gzip
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from orlbuild.cli.main import app
from orlbuild.ingest.source import sniff_trec
from orlbuild.vocabulary import InputFormat
from scoring import ORL, ScoringError, evaluate_run
from scoring.settings import TestSettings

runner = CliRunner()

QRELS = "q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\nq2 0 e1 1\nq3 0 f1 1\n"
RUN_A = "q1 Q0 d1 1 3.0 alpha\nq1 Q0 d2 2 2.0 alpha\nq2 Q0 e1 1 1.0 alpha\nq3 Q0 f1 1 1.0 alpha\n"
RUN_B = "q1 Q0 d3 1 3.0 beta\nq1 Q0 d1 2 2.0 beta\nq2 Q0 e9 1 1.0 beta\nq3 Q0 f1 1 1.0 beta\n"
MEASURES = ["AP", "nDCG@10"]


def _m(names: list[str]) -> list[str]:
    return [a for n in names for a in ("-m", n)]


def _ok(args: list[str]) -> dict:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _expected(run_text: str) -> pd.DataFrame:
    orls = {
        "q1": ORL.from_grades({"d1": 2, "d2": 1}),
        "q2": ORL.from_grades({"e1": 1}),
        "q3": ORL.from_grades({"f1": 1}),
    }
    rows = [line.split() for line in run_text.splitlines()]
    run = pd.DataFrame(
        {"query": [r[0] for r in rows], "item": [r[2] for r in rows], "score": [r[4] for r in rows]}
    ).astype({"score": float})
    return evaluate_run(orls, run, MEASURES).to_frame()


def _write(path: Path, text: str) -> Path:
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    elif path.suffix == ".bz2":
        path.write_bytes(bz2.compress(text.encode()))
    else:
        path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("qrels_name", "run_name"),
    [
        ("qrels.test", "run.1"),
        ("qrels-pass.txt", "input.bm25"),
        ("judgments", "run"),
        ("2021.qrels.pass.final.txt", "p_bm25.tsv"),
        ("qrels.dl21.gz", "run.1.gz"),
        ("qrels.bz2", "run.bz2"),
        ("no-extension-gz", "plain.json"),
    ],
)
def test_trec_files_recognised_by_content(tmp_path: Path, qrels_name: str, run_name: str) -> None:
    qrels = _write(tmp_path / qrels_name, QRELS)
    run = _write(tmp_path / run_name, RUN_A)
    doc = _ok(["eval", str(qrels), str(run), "--format", "json", *_m(MEASURES)])
    expected = _expected(RUN_A)
    for measure in MEASURES:
        assert doc["mean"][measure] == pytest.approx(expected[measure].mean())


def test_gzip_content_without_gz_name_is_decompressed(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(gzip.compress(QRELS.encode()))
    run = tmp_path / "run.txt"
    run.write_bytes(bz2.compress(RUN_B.encode()))
    doc = _ok(["eval", str(qrels), str(run), "--format", "json", "-m", "AP"])
    assert doc["mean"]["AP"] == pytest.approx(_expected(RUN_B)["AP"].mean())


def test_bad_line_in_compressed_file_is_named(tmp_path: Path) -> None:
    qrels = _write(tmp_path / "qrels.gz", QRELS)
    run = _write(tmp_path / "run.gz", RUN_A + "q3 Q0 f2 x 1.0 alpha\n")
    result = runner.invoke(app, ["eval", str(qrels), str(run), "-m", "AP"])
    assert result.exit_code == 1
    assert "run.gz, line 5: rank must be an integer (got 'x')" in result.output


def test_damaged_gzip_is_an_input_error(tmp_path: Path) -> None:
    qrels = _write(tmp_path / "qrels.txt", QRELS)
    run = tmp_path / "run.gz"
    run.write_bytes(gzip.compress(RUN_A.encode() * 50)[:60])
    result = runner.invoke(app, ["eval", str(qrels), str(run), "-m", "AP"])
    assert result.exit_code == 1
    assert "run.gz" in result.output and "decompress" in result.output
    assert "Traceback" not in result.output


def test_unknown_table_hint_names_orl_format(tmp_path: Path) -> None:
    orl = tmp_path / "labels.dat"
    orl.write_text("query\titem\tgrade\nq1\td1\t1\n")
    run = _write(tmp_path / "run.1", RUN_A)
    result = runner.invoke(app, ["eval", str(orl), str(run), "-m", "AP"])
    assert result.exit_code == 1
    assert "--orl-format" in result.output
    forced = runner.invoke(app, ["eval", str(orl), str(run), "-m", "AP", "--orl-format", "tsv"])
    assert forced.exit_code == 0, forced.output


def test_sniff_trec_rules() -> None:
    assert sniff_trec("301 0 FBIS3-10082 1\n") is InputFormat.qrels
    assert sniff_trec("301\t0\tFBIS3-10082\t-1\n") is InputFormat.qrels
    assert sniff_trec("1 Q0 d1 1 -3.5e2 run-tag\n") is InputFormat.trec
    assert sniff_trec("query\tannotator\titem\tgrade\n") is None  # a header
    assert sniff_trec("q1,0,d1,1\n") is None
    assert sniff_trec("1 Q0 d1 first 3.5 tag\n") is None  # rank not an integer
    assert sniff_trec("1 Q0 d1 1 high tag\n") is None  # score not a number
    assert sniff_trec('{"query": "q"}\n') is None
    assert sniff_trec(None) is None


def test_several_runs_table_json_and_per_query(tmp_path: Path) -> None:
    qrels = _write(tmp_path / "qrels.txt", QRELS)
    run_a = _write(tmp_path / "a.run.gz", RUN_A)
    run_b = _write(tmp_path / "b.run", RUN_B)
    args = ["eval", str(qrels), str(run_a), str(run_b), *_m(MEASURES)]
    doc = _ok([*args, "--format", "json"])
    assert set(doc) >= {"systems", "conventions"} and "pairs" not in doc and "settings" not in doc
    assert list(doc["systems"]) == ["alpha", "beta"]  # named by run tag
    for name, text in (("alpha", RUN_A), ("beta", RUN_B)):
        expected = _expected(text)
        for measure in MEASURES:
            assert doc["systems"][name]["mean"][measure] == pytest.approx(expected[measure].mean())
            for query in ("q1", "q2", "q3"):
                assert doc["systems"][name]["per_query"][query][measure] == pytest.approx(
                    expected.loc[query, measure]
                )
    table = runner.invoke(app, [*args, "--format", "csv"])
    frame = pd.read_csv(pd.io.common.StringIO(table.stdout))
    assert list(frame.columns) == ["system", *MEASURES]
    assert list(frame["system"]) == ["alpha", "beta"]
    per_query = runner.invoke(app, [*args, "--format", "csv", "--per-query"])
    frame = pd.read_csv(pd.io.common.StringIO(per_query.stdout))
    assert list(frame.columns[:2]) == ["system", "query"]
    assert list(frame["system"]) == ["alpha"] * 4 + ["beta"] * 4
    assert list(frame["query"]) == ["q1", "q2", "q3", "mean"] * 2


def test_names_fall_back_to_file_stems_when_tags_repeat(tmp_path: Path) -> None:
    qrels = _write(tmp_path / "qrels.txt", QRELS)
    one = _write(tmp_path / "first.txt.gz", RUN_A)
    two = _write(tmp_path / "second.txt", RUN_A)
    doc = _ok(["eval", str(qrels), str(one), str(two), "-m", "AP", "--format", "json"])
    assert list(doc["systems"]) == ["first", "second"]
    same = _ok(["eval", str(qrels), str(two), str(two), "-m", "AP", "--format", "json"])
    assert list(same["systems"]) == ["second", "second#2"]


def test_compare_tests_every_pair_with_the_defaults_of_compare(tmp_path: Path) -> None:
    qrels = _write(tmp_path / "qrels.txt", QRELS)
    runs = [
        _write(tmp_path / "a.run", RUN_A),
        _write(tmp_path / "b.run", RUN_B),
        _write(tmp_path / "c.run", RUN_B.replace("beta", "gamma").replace("e9", "e1")),
    ]
    args = ["eval", str(qrels), *map(str, runs), "-m", "AP", "--compare", "--format", "json"]
    doc = _ok([*args, "--permutations", "500", "--seed", "3"])
    pairs = doc["pairs"]
    assert {(p["a"], p["b"]) for p in pairs} == {
        ("alpha", "beta"),
        ("alpha", "gamma"),
        ("beta", "gamma"),
    }
    from scoring.statistics import system_comparison

    frames = {
        name: _expected(text)[["AP"]]
        for name, text in (("alpha", RUN_A), ("beta", RUN_B), ("gamma", RUN_B))
    }
    frames["gamma"] = _expected(RUN_B.replace("beta", "gamma").replace("e9", "e1"))[["AP"]]
    panel = pd.DataFrame({n: f["AP"] for n, f in frames.items()})
    # three runs: the default of `orlbuild compare`, max-t (family-wise, no correction)
    expected = system_comparison({"AP": panel}, TestSettings(permutations=500, seed=3))
    assert expected.plans["AP"].test.value == "max-t"
    for got, want in zip(pairs, expected.pairs.to_dict(orient="records"), strict=True):
        assert got["p_adjusted"] == pytest.approx(want["p_adjusted"])
        assert got["p_value"] == pytest.approx(want["p_value"])
        assert got["significant"] == want["significant"]
    one = runner.invoke(app, ["eval", str(qrels), str(runs[0]), "-m", "AP", "--compare"])
    assert one.exit_code != 0 and "at least two runs" in one.output


def test_shell_glob_style_many_gz_runs(tmp_path: Path) -> None:
    qrels = _write(tmp_path / "qrels.txt", QRELS)
    (tmp_path / "runs").mkdir()
    paths = [
        _write(tmp_path / "runs" / f"r{i}.gz", RUN_A.replace("alpha", f"t{i}")) for i in range(5)
    ]
    doc = _ok(["eval", str(qrels), *map(str, sorted(paths)), "-m", "AP", "--format", "json"])
    assert list(doc["systems"]) == [f"t{i}" for i in range(5)]


def test_no_shared_query_is_an_error_naming_ids(tmp_path: Path) -> None:
    qrels = _write(tmp_path / "qrels.txt", QRELS)
    run = _write(tmp_path / "upper.run", RUN_A.replace("q", "Q"))
    result = runner.invoke(app, ["eval", str(qrels), str(run), "-m", "AP"])
    assert result.exit_code == 1
    message = result.output
    assert message.startswith("Error: ") and message.count("\n") == 1
    assert "upper.run" in message and "share no query" in message
    assert "'Q1'" in message and "'q1'" in message


def test_no_shared_query_among_several_runs_names_that_run(tmp_path: Path) -> None:
    """Runs scored together: the failing run is found and named as when scored alone."""
    qrels = _write(tmp_path / "qrels.txt", QRELS)
    runs = [
        _write(tmp_path / "a.run", RUN_A),
        _write(tmp_path / "upper.run.gz", RUN_B.replace("q", "Q")),
        _write(tmp_path / "c.run", RUN_A.replace("alpha", "gamma")),
    ]
    result = runner.invoke(app, ["eval", str(qrels), *map(str, runs), "-m", "AP"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1
    assert "upper.run.gz" in result.output and "share no query" in result.output


def test_partial_overlap_warns_naming_missing_queries(tmp_path: Path) -> None:
    qrels = _write(tmp_path / "qrels.txt", QRELS)
    run = _write(tmp_path / "part.run", "".join(RUN_A.splitlines(True)[:2]))
    doc = _ok(["eval", str(qrels), str(run), "-m", "AP", "--format", "json"])
    assert any(
        "2 of 3 ORL queries are missing from the run: 'q2', 'q3'" in w for w in doc["warnings"]
    )
    table = runner.invoke(app, ["eval", str(qrels), str(run), "-m", "AP"])
    assert "Warning: 2 of 3 ORL queries are missing" in table.stderr


def test_scoring_layer_checks_overlap() -> None:
    orls = {"q01": {"d1": 1}, "q02": {"d1": 1}}
    with pytest.raises(ScoringError, match=r"share no query.*'Q01'.*'q01'"):
        evaluate_run(orls, {"Q01": ["d1"]}, ["AP"]).to_frame()
    frame = evaluate_run(orls, {"q01": ["d1"]}, ["AP"]).to_frame()
    assert frame.attrs["warnings"] == ["1 of 2 ORL queries are missing from the run: 'q02'"]
    assert (
        evaluate_run(orls, {"q01": ["d1"], "q02": ["d1"]}, ["AP"]).to_frame().attrs["warnings"]
        == []
    )


def test_score_precision_option(tmp_path: Path) -> None:
    qrels = _write(tmp_path / "qrels.txt", "q1 0 a1 1\n")
    run = _write(
        tmp_path / "run.txt",
        "q1 Q0 a1 1 67.62227973937988 t\nq1 Q0 b1 2 67.62227935791016 t\n",
    )
    base = ["eval", str(qrels), str(run), "-m", "AP", "--format", "json"]
    f32 = _ok(base)
    f64 = _ok([*base, "--score-precision", "float64"])
    assert f32["mean"]["AP"] == pytest.approx(0.5)  # pytrec_eval / trec_eval 9
    assert f64["mean"]["AP"] == pytest.approx(1.0)  # trec_eval 10
    assert f32["conventions"]["score_precision"].startswith("float32")
    assert f64["conventions"]["score_precision"].startswith("float64")


def test_swapped_arguments_are_named(tmp_path: Path) -> None:
    qrels = _write(tmp_path / "qrels.txt", QRELS)
    run = _write(tmp_path / "run.txt.gz", RUN_A)
    result = runner.invoke(app, ["eval", str(run), str(qrels), "-m", "AP"])
    assert result.exit_code == 1
    assert "run.txt.gz, line 1: this is a TREC run" in result.output
    assert "give the qrels" in result.output
    result = runner.invoke(app, ["eval", str(qrels), str(qrels), "-m", "AP"])
    assert result.exit_code == 1
    assert "qrels.txt, line 1: this is TREC qrels" in result.output


def test_compressed_orl_json_and_rank_table(tmp_path: Path) -> None:
    run = _write(tmp_path / "run.txt", RUN_B)
    export = (
        '{"build": {}, "queries": {"q1": {"d1": 1, "d2": 2}, "q2": {"e1": 1}, "q3": {"f1": 1}}}'
    )
    table = "query\titem\trank\nq1\td1\t1\nq1\td2\t2\nq2\te1\t1\nq3\tf1\t1\n"
    orl_runs = {
        "orl.json.gz": _write(tmp_path / "orl.json.gz", export),
        "orl.tsv.bz2": _write(tmp_path / "orl.tsv.bz2", table),
    }
    expected = evaluate_run(
        {"q1": ORL({"d1": 1, "d2": 2}), "q2": ORL({"e1": 1}), "q3": ORL({"f1": 1})},
        {"q1": ["d3", "d1"], "q2": ["e9"], "q3": ["f1"]},
        ["AP", "RDQm2-a1@5"],
    ).to_frame()
    for name, orl in orl_runs.items():
        doc = _ok(["eval", str(orl), str(run), "-m", "AP", "-m", "RDQm2-a1@5", "--format", "json"])
        for measure in ("AP", "RDQm2-a1@5"):
            assert doc["mean"][measure] == pytest.approx(expected[measure].mean()), name


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("q3 Q0 f2 x 1.0 beta\n", "b.run.gz, line 5: rank must be an integer (got 'x')"),
        ("q1 Q0 d3 5 0.5 beta\n", "b.run.gz, line 5"),
    ],
)
def test_several_runs_read_in_one_pass_still_name_the_bad_line(
    tmp_path: Path, bad: str, message: str
) -> None:
    """Runs are parsed together in one pass; an error still names the file and line."""
    qrels = _write(tmp_path / "qrels.txt", QRELS)
    runs = [
        _write(tmp_path / "a.run", RUN_A),
        _write(tmp_path / "b.run.gz", RUN_B + bad),
        _write(tmp_path / "c.run", RUN_A.replace("alpha", "gamma")),
    ]
    result = runner.invoke(app, ["eval", str(qrels), *map(str, runs), "-m", "AP"])
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output


def test_several_runs_warn_once_per_cause(tmp_path: Path) -> None:
    """Issue 24: not one identical warning per run, but one per cause naming its queries."""
    qrels = _write(tmp_path / "qrels.txt", QRELS + "q4 0 g1 1\n")
    extra = "".join(f"x{i} Q0 d1 1 1.0 TAG\n" for i in range(7))  # 7 queries without an ORL
    runs = []
    for r in range(5):
        text = (RUN_A + extra).replace("alpha", f"sys{r}").replace("TAG", f"sys{r}")
        runs.append(_write(tmp_path / f"r{r}.trec", text))
    runs.append(_write(tmp_path / "clean.trec", RUN_A.replace("alpha", "clean")))
    args = ["eval", str(qrels), *map(str, runs), "-m", "AP", "-m", "KendallTau"]
    doc = _ok([*args, "--format", "json"])
    warnings = doc["warnings"]
    ignored = [w for w in warnings if "have no ORL" in w]
    assert ignored == [
        "7 run queries have no ORL and were ignored, in 5 of 6 runs: "
        "'x0', 'x1', 'x2', 'x3', 'x4' and 2 more"
    ]
    assert [w for w in warnings if "missing from" in w] == [
        "1 ORL queries are missing from 6 of 6 runs: 'q4'"
    ]
    undefined = [w for w in warnings if "undefined" in w]
    assert len(undefined) == 1 and undefined[0].startswith("KendallTau is undefined")
    assert "in 6 of 6 runs" in undefined[0]
    assert len(warnings) == 3
    # Each run's own warnings stay with it.
    assert any("have no ORL" in w for w in doc["systems"]["sys0"]["warnings"])
    assert not any("have no ORL" in w for w in doc["systems"]["clean"]["warnings"])
    table = runner.invoke(app, args)
    assert table.exit_code == 0
    assert table.stderr.count("have no ORL") == 1
