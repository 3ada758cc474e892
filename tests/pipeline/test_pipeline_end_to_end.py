"""``orlbuild pipeline`` on the sample collection, end to end, and ``orlbuild report``."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from typer.testing import CliRunner

from orlbuild.cli.main import app
from orlbuild.store import upgrade
from tests.report.html_page import Page
from tests.stores import disposed

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
SYSTEMS = ["hybrid", "dense", "bm25", "tfidf"]


def copy_sample(target: Path, *, power: bool = True) -> Path:
    """The sample collection in ``target`` (no database, no report); returns the config."""
    shutil.copytree(SAMPLE, target, ignore=shutil.ignore_patterns("*.db*", "*.html", "*.png"))
    config = target / "pipeline.toml"
    if not power:
        text_ = config.read_text(encoding="utf-8")
        start = text_.index("[power]")
        end = text_.index("[report]")
        config.write_text(text_[:start] + text_[end:], encoding="utf-8")
    return config


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def count(url: str, table: str) -> int:
    with disposed(create_engine(url)) as engine, engine.connect() as connection:
        return int(connection.execute(text(f"SELECT COUNT(*) FROM {table}")).scalar_one())


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, float]:
    """The sample pipeline run once, as the README's quick start does (JSON summary)."""
    config = copy_sample(tmp_path_factory.mktemp("e2e") / "sample")
    started = time.perf_counter()
    code, out, err = invoke("pipeline", str(config), "--format", "json")
    elapsed = time.perf_counter() - started
    assert code == 0, err
    return config, json.loads(out), elapsed


def test_sample_pipeline_builds_scores_and_compares(first_run: tuple[Path, dict, float]) -> None:
    config, summary, elapsed = first_run
    assert elapsed < 60
    assert (config.parent / "orlbuild.db").is_file()
    assert [i["stored"] for i in summary["inputs"]] == [True] * 7
    builds = {b["name"]: b for b in summary["builds"]}
    assert {n: b["queries"] for n, b in builds.items()} == {
        "sample-pairwise": 36,
        "sample-listwise": 12,
        "sample-graded": 14,
    }
    assert all(b["tiers"] > b["queries"] and b["items"] > b["tiers"] for b in builds.values())
    assert all(not b["failures"] and not b["reused"] for b in builds.values())
    means = summary["mean"]
    assert list(means) == SYSTEMS  # best first; the generator's order of quality
    order = sorted(SYSTEMS, key=lambda s: -means[s]["RDQm2-a1@10"])
    assert order == SYSTEMS
    significant = {(p["measure"], p["better"], p["worse"]) for p in summary["significant"]}
    assert ("RDQm2-a1@10", "hybrid", "tfidf") in significant
    assert len(summary["pairs"]) == 6 * 4
    assert set(summary["power"]) == {"RDQm2-a1@10", "RDQm1@10", "nDCG@10", "AP@10"}
    assert "zero" in summary["conventions"]["missing"]


def test_sample_report_is_complete(first_run: tuple[Path, dict, float]) -> None:
    config, summary, _ = first_run
    report = Path(summary["report"])
    assert report == config.parent / "report.html"
    page = Page(report.read_text(encoding="utf-8"))
    rows = page.table(id="systems-table")
    assert [r[1] for r in rows[1:]] == SYSTEMS
    assert len(page.with_class("details", "orl")) == 36
    assert len(page.with_class("table", "matrix")) == 4
    assert page.table(id="power-table")[0][0] == "measure"
    assert len(page.table(**{"class": "heatmap"})) == 2 + 36


def test_second_run_skips_inputs_and_reuses_builds(first_run: tuple[Path, dict, float]) -> None:
    config, summary, _ = first_run
    url = f"sqlite:///{config.parent / 'orlbuild.db'}"
    batches, builds = count(url, "ingest_batches"), count(url, "builds")
    code, out, err = invoke("pipeline", str(config), "--format", "json")
    assert code == 0, err
    again = json.loads(out)
    assert [i["stored"] for i in again["inputs"]] == [False] * 7
    assert "skipped pairwise pairwise.tsv: already stored as batch" in err
    assert all(b["reused"] for b in again["builds"])
    assert [b["build"] for b in again["builds"]] == [b["build"] for b in summary["builds"]]
    assert again["mean"] == summary["mean"]
    assert (count(url, "ingest_batches"), count(url, "builds")) == (batches, builds)


def test_table_summary(tmp_path: Path) -> None:
    config = copy_sample(tmp_path / "sample", power=False)
    code, out, err = invoke("pipeline", str(config))
    assert code == 0, err
    for expected in (
        "ORLs built",
        "sample-pairwise",
        "Mean scores against sample-pairwise",
        "hybrid",
    ):
        assert expected in out
    # 4 systems: Holm over 6 pairs needs 1,200 flips to reach alpha/10, raised from 1,000
    assert (
        "Differences between systems (paired randomization test, 1,200 sign flips, holm "
        "correction, alpha 0.05)"
    ) in out
    assert f"Report: {config.parent / 'report.html'}" in out
    assert (
        "ingested pairwise pairwise.tsv: 6672 rows as batch 1 "
        "(read as native tsv: query annotator winner loser tie)"
    ) in err


def test_db_option_overrides_the_config(tmp_path: Path, db_url: str) -> None:
    config = copy_sample(tmp_path / "sample", power=False)
    code, out, err = invoke("--db", db_url, "pipeline", str(config), "--format", "csv")
    assert code == 0, err
    assert out.splitlines()[0] == "system,RDQm2-a1@10,RDQm1@10,nDCG@10,AP@10"
    assert not (config.parent / "orlbuild.db").exists()
    assert count(db_url, "builds") == 3
    code, again, err = invoke("pipeline", str(config), "--db", db_url, "--format", "csv")
    assert code == 0, err
    assert again == out and "reused sample-pairwise (build 1" in err
    assert not (config.parent / "orlbuild.db").exists()


def test_invalid_config_stores_nothing(tmp_path: Path) -> None:
    config = copy_sample(tmp_path / "sample", power=False)
    text_ = config.read_text(encoding="utf-8")
    config.write_text(text_.replace('kind = "listwise"', 'kind = "listwize"'), encoding="utf-8")
    code, out, err = invoke("pipeline", str(config))
    assert code == 1 and out == ""
    assert err.startswith("Error: ") and "inputs[1].kind: must be one of listwise" in err
    assert "Traceback" not in err
    assert not (config.parent / "orlbuild.db").exists()


def test_bad_input_file_names_the_line_and_a_rerun_resumes(tmp_path: Path) -> None:
    config = copy_sample(tmp_path / "sample", power=False)
    listwise = config.parent / "listwise.tsv"
    good = listwise.read_text(encoding="utf-8")
    listwise.write_text(good + "q06\tann01\tD99999\tfirst\n", encoding="utf-8")
    code, _, err = invoke("pipeline", str(config))
    assert code == 1
    assert "listwise.tsv, line 335" in err and "'first'" in err
    url = f"sqlite:///{config.parent / 'orlbuild.db'}"
    assert count(url, "ingest_batches") == 1  # the pairwise file before it; nothing of this one
    listwise.write_text(good, encoding="utf-8")
    code, _, err = invoke("pipeline", str(config))
    assert code == 0, err
    assert "skipped pairwise" in err and "ingested listwise" in err


def test_failing_queries_stop_the_build_unless_skipped(tmp_path: Path) -> None:
    (tmp_path / "pairs.tsv").write_text(
        "query\tannotator\twinner\tloser\n"
        "q1\ta\td1\td2\nq1\ta\td2\td3\nq1\tb\td1\td3\n"
        "q2\ta\te1\te2\nq2\ta\te3\te4\n",  # q2: two components, no order between them
        encoding="utf-8",
    )
    # A run of the ORL's query (a run sharing no query with the ORLs is an error since
    # issue 12); the format is given in the config.
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 3.0 t\nq1 Q0 d3 2 2.0 t\n", encoding="utf-8")
    config = tmp_path / "pipeline.toml"
    body = (
        'measures = ["RDQm2-a1@10"]\n[[inputs]]\nkind = "pairwise"\npath = "pairs.tsv"\n'
        '[[inputs]]\nkind = "run"\npath = "run.txt"\nformat = "trec"\nsystem = "bm25"\n'
        '[[builds]]\nname = "tricky"\nsource = "pairwise"\n{params}'
        '[scoring]\nbuild = "tricky"\n[report]\npath = "tricky.html"\n'
    )
    config.write_text(body.format(params=""), encoding="utf-8")
    code, _, err = invoke("pipeline", str(config))
    assert code == 1 and "q2" in err
    url = f"sqlite:///{tmp_path / 'orlbuild.db'}"
    assert count(url, "builds") == 0
    config.write_text(
        body.format(params='[builds.parameters]\non_error = "skip"\n'), encoding="utf-8"
    )
    code, out, err = invoke("pipeline", str(config), "--format", "json")
    assert code == 0, err
    (build,) = json.loads(out)["builds"]
    assert build["queries"] == 1 and len(build["failures"]) == 1
    assert build["failures"][0].startswith("q2: ")
    assert "no ORL for q2: " in (tmp_path / "tricky.html").read_text(encoding="utf-8")
    config.write_text(body.format(params=""), encoding="utf-8")  # stop on failures again
    code, _, err = invoke("pipeline", str(config))
    assert code == 1 and "q2" in err  # the skipping build is not reused


def test_report_command_on_the_stored_build(
    first_run: tuple[Path, dict, float], tmp_path: Path
) -> None:
    config, _, _ = first_run
    url = f"sqlite:///{config.parent / 'orlbuild.db'}"
    target = tmp_path / "out" / "two.html"
    code, _, err = invoke(
        "--db", url, "report", "--build", "sample-pairwise", "--system", "hybrid",
        "--system", "bm25", "-m", "RDQm1@10", "-o", str(target), "--budgets", "5,10",
        "--subsamples", "20", "--permutations", "200",
    )  # fmt: skip
    assert code == 0, err
    assert f"wrote {target}" in err
    html = target.read_text(encoding="utf-8")
    assert "<title>orlbuild report: build sample-pairwise</title>" in html
    page = Page(html)
    assert [r[1] for r in page.table(id="systems-table")[1:]] == ["hybrid", "bm25"]
    assert page.table(id="systems-table")[0][2:] == ["RDQm1@10", "tier", "letters"]
    assert [r[0] for r in page.table(id="power-table")[1:]] == ["RDQm1@10"]
    code, _, err = invoke("--db", url, "report", "--build", "nope", "-o", str(target))
    assert code == 1 and "no build 'nope'" in err
    code, _, err = invoke("--db", url, "report", "--build", "1", "-m", "RDQm9@10")
    assert code == 1 and "RDQm9@10" in err


def test_config_database_is_migrated_but_a_db_option_is_not(tmp_path: Path) -> None:
    config = copy_sample(tmp_path / "sample", power=False)
    own = f"sqlite:///{config.parent / 'orlbuild.db'}"
    upgrade(own, "0001")  # a store left behind by an older orlbuild
    code, _, err = invoke("pipeline", str(config))
    assert code == 0, err
    other = f"sqlite:///{tmp_path / 'other.db'}"
    upgrade(other, "0001")
    code, _, err = invoke("--db", other, "pipeline", str(config))
    assert code == 1 and "orlbuild db upgrade" in err
