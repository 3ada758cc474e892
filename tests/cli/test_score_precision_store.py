"""`--score-precision` where stored runs are scored: `score`, `compare`, the pipeline config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from orlbuild.cli.main import app
from orlbuild.errors import ConfigError
from orlbuild.pipeline.config import load_config
from tests.pipeline_configs import pipeline_toml
from tests.stores import store_engine

# a1 (relevant) and b1 tie in float32 only: float32 puts b1 first (id descending).
QRELS = "q1 0 a1 1\nq2 0 c1 1\n"
RUN = "q1 Q0 a1 1 67.62227973937988 s\nq1 Q0 b1 2 67.62227935791016 s\nq2 Q0 c1 1 1.0 s\n"


def _cli(url: str, *args: str) -> Result:
    result = CliRunner().invoke(app, ["--db", url, "--quiet", *args])
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def scored_store(migrated_db_url: str, tmp_path: Path) -> str:
    (tmp_path / "labels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "other.txt").write_text(RUN.replace("c1 1 1.0", "x1 1 1.0"))
    _cli(migrated_db_url, "ingest", "graded", str(tmp_path / "labels.txt"))
    _cli(migrated_db_url, "ingest", "run", str(tmp_path / "run.txt"), "--system", "s")
    _cli(migrated_db_url, "ingest", "run", str(tmp_path / "other.txt"), "--system", "o")
    _cli(migrated_db_url, "build", "--source", "graded", "--name", "g")
    return migrated_db_url


def test_score_stored_run_in_both_precisions(scored_store: str) -> None:
    base = ["score", "--build", "g", "--system", "s", "-m", "AP", "--format", "json"]
    f32 = json.loads(_cli(scored_store, *base).stdout)
    f64 = json.loads(_cli(scored_store, *base, "--score-precision", "float64").stdout)
    assert f32["per_query"]["q1"]["AP"] == pytest.approx(0.5)
    assert f64["per_query"]["q1"]["AP"] == pytest.approx(1.0)
    assert f32["conventions"]["score_precision"].startswith("float32")
    assert f64["conventions"]["score_precision"].startswith("float64")


def test_compare_uses_the_precision(scored_store: str) -> None:
    base = ["compare", "--build", "g", "-s", "s", "-s", "o", "-m", "AP", "--format", "json"]
    f32 = json.loads(_cli(scored_store, *base).stdout)["pairs"][0]
    f64 = json.loads(_cli(scored_store, *base, "--score-precision", "float64").stdout)["pairs"][0]
    assert f32["mean_a"] == pytest.approx(0.75)  # (0.5 + 1) / 2
    assert f64["mean_a"] == pytest.approx(1.0)


CONFIG = (
    pipeline_toml(
        measure="AP", kind="graded", judgments="labels.txt", runs=[("run.txt", "s")], build="g"
    )
    + "{extra}\n"
)


def test_pipeline_config_score_precision(tmp_path: Path) -> None:
    (tmp_path / "labels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    path = tmp_path / "pipeline.toml"
    path.write_text(CONFIG.format(extra=""))
    assert load_config(path).scoring.score_precision == "float32"
    path.write_text(CONFIG.format(extra='score_precision = "float64"'))
    assert load_config(path).scoring.score_precision == "float64"
    path.write_text(CONFIG.format(extra='score_precision = "float16"'))
    with pytest.raises(ConfigError, match="score_precision"):
        load_config(path)


def test_report_states_the_precision(scored_store: str, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    _cli(scored_store, "report", "--build", "g", "-m", "AP", "-o", str(out))
    assert "score_precision: float32" in out.read_text(encoding="utf-8")
    _cli(
        scored_store,
        "report",
        "--build",
        "g",
        "-m",
        "AP",
        "-o",
        str(out),
        "--score-precision",
        "float64",
    )
    assert "score_precision: float64" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("precision", "kept"), [(None, 67.62227935791016), ("float64", 67.62227973937988)]
)
def test_ingest_keep_first_compares_at_the_score_precision(
    migrated_db_url: str, tmp_path: Path, precision: str | None, kept: float
) -> None:
    """Equal in float32: the earlier line wins (the default); float64 keeps the higher score."""
    from orlbuild.store.read import load_run

    path = tmp_path / "dup.txt"
    path.write_text("q1 Q0 d1 1 67.62227935791016 s\nq1 Q0 d1 2 67.62227973937988 s\n")
    option = [] if precision is None else ["--score-precision", precision]
    args = ["ingest", "run", str(path), "--system", "s", "--duplicates", "keep-first", *option]
    result = _cli(migrated_db_url, *args)
    assert (
        f"skipped 1 repeated rows (kept the best-ordered line, scores as {precision or 'float32'})"
        in result.stdout
    )
    with store_engine(migrated_db_url) as engine:
        run = load_run(engine, "default", "s")
    assert run["score"].tolist() == [kept]  # stored at full precision


@pytest.mark.parametrize(("precision", "rr"), [("float32", 0.5), ("float64", 1.0)])
def test_eval_keep_first_compares_at_the_score_precision(
    tmp_path: Path, precision: str, rr: float
) -> None:
    """d1 is repeated; d2's score lies between d1's two, all three equal in float32.

    float32: d1's lines tie (line 1 kept) and d2 goes first (ties by id descending), RR 0.5.
    float64: line 2 is kept, so d1 (relevant) is above d2, RR 1 - it would be 0.5 had
    keep-first chosen line 1 by float32.
    """
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "run.txt"
    run.write_text(
        "q1 Q0 d1 1 67.62227935791016 s\nq1 Q0 d1 2 67.62227973937988 s\nq1 Q0 d2 3 67.6222795 s\n"
    )
    args = ["eval", str(qrels), str(run), "-m", "RR", "--duplicates", "keep-first"]
    result = CliRunner().invoke(app, [*args, "--score-precision", precision, "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["per_query"]["q1"]["RR"] == pytest.approx(rr)


def test_score_run_file_sharing_no_query_names_the_file(scored_store: str, tmp_path: Path) -> None:
    path = tmp_path / "upper.txt"
    path.write_text(RUN.replace("q", "Q"))
    result = CliRunner().invoke(
        app, ["--db", scored_store, "score", "--build", "g", "--run", str(path), "-m", "AP"]
    )
    assert result.exit_code == 1
    assert "upper.txt" in result.output and "the run and the ORLs share no query" in result.output
    assert "'Q1'" in result.output and "'q1'" in result.output
