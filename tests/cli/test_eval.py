"""``orlbuild eval``, ``orlbuild measures`` and ``--version`` through Typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from orlbuild import __version__
from orlbuild.cli.main import app
from scoring import ORL, evaluate_run

runner = CliRunner()

QRELS = "q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\nq2 0 e1 1\nq3 0 f1 0\n"
RUN = (
    "q1 Q0 d2 1 3.0 sys\n"
    "q1 Q0 d1 2 2.0 sys\n"
    "q1 Q0 x9 3 2.0 sys\n"
    "q2 Q0 e9 1 1.0 sys\n"
    "q2 Q0 e1 2 0.5 sys\n"
    "q9 Q0 z1 1 1.0 sys\n"
)


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "orl.qrels").write_text(QRELS)
    (tmp_path / "run.trec").write_text(RUN)
    return tmp_path / "orl.qrels", tmp_path / "run.trec"


def _json(args: list[str]) -> dict:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_json_matches_scoring_evaluate(files: tuple[Path, Path]) -> None:
    orl_file, run_file = files
    names = ["RDQm2-a1@3", "nDCG(grade=native,gain=linear)@3", "P@2"]
    args = ["eval", str(orl_file), str(run_file), "--format", "json"]
    doc = _json(args + [a for n in names for a in ("-m", n)])
    assert set(doc) >= {"mean", "per_query", "conventions"}
    orls = {"q1": ORL.from_grades({"d1": 2, "d2": 1}), "q2": ORL.from_grades({"e1": 1})}
    run = {"q1": ["d2", "x9", "d1"], "q2": ["e9", "e1"]}  # score ties: item id descending
    expected = evaluate_run(orls, run, names).to_frame()
    for query in ("q1", "q2"):
        for name in names:
            assert doc["per_query"][query][name] == pytest.approx(expected.loc[query, name])
    assert doc["mean"]["P@2"] == pytest.approx(expected["P@2"].mean())
    assert any("no positive grade" in w for w in doc["warnings"])  # q3
    assert any("have no ORL" in w for w in doc["warnings"])  # q9
    assert doc["conventions"]["missing"].startswith("zero")


def test_table_csv_and_per_query(files: tuple[Path, Path]) -> None:
    orl_file, run_file = files
    table = runner.invoke(app, ["eval", str(orl_file), str(run_file), "-m", "RR"])
    assert table.exit_code == 0 and "RR" in table.stdout and "mean" in table.stdout
    csv = runner.invoke(
        app, ["eval", str(orl_file), str(run_file), "-m", "RR", "--per-query", "--format", "csv"]
    )
    frame = pd.read_csv(pd.io.common.StringIO(csv.stdout))
    assert list(frame["query"]) == ["q1", "q2", "mean"]
    assert list(frame["RR"]) == pytest.approx([1.0, 0.5, 0.75])


def test_missing_skip_and_zero(files: tuple[Path, Path], tmp_path: Path) -> None:
    _, run_file = files
    with_extra = tmp_path / "more.qrels"
    with_extra.write_text(QRELS + "q4 0 g1 1\n")
    zero = _json(["eval", str(with_extra), str(run_file), "-m", "RR", "--format", "json"])
    skip = _json(
        [
            "eval",
            str(with_extra),
            str(run_file),
            "-m",
            "RR",
            "--missing",
            "skip",
            "--format",
            "json",
        ]
    )
    assert zero["per_query"]["q4"]["RR"] == 0.0 and "q4" not in skip["per_query"]
    assert skip["conventions"]["missing"].startswith("skip")


def test_tsv_and_json_orl_files(files: tuple[Path, Path], tmp_path: Path) -> None:
    _, run_file = files
    tsv = tmp_path / "orl.tsv"
    tsv.write_text("query\titem\trank\nq1\td1\t1\nq1\td2\t2\nq2\te1\t1\n")
    export = tmp_path / "orl.json"
    export.write_text(
        json.dumps({"build": {}, "queries": {"q1": {"d1": 1, "d2": 2}, "q2": {"e1": 1}}})
    )
    a = _json(["eval", str(tsv), str(run_file), "-m", "RDQm1@3", "--format", "json"])
    b = _json(["eval", str(export), str(run_file), "-m", "RDQm1@3", "--format", "json"])
    assert a["per_query"] == b["per_query"]


@pytest.mark.parametrize(
    ("which", "content", "fragment"),
    [
        ("orl", "q1 0 d1 2\nq1 0 d2 x\n", "line 2"),
        ("orl", "q1 0 d1\n", "line 1"),
        ("orl", "q1 0 d1 -1\n", "line 1"),
        ("run", "q1 Q0 d1 1 1.0 s\nq1 Q0 d1 2 0.5 s\n", "line 2"),
        ("run", "q1 Q0 d1 1 nan s\n", "line 1"),
        ("run", "q1 Q0 d1 1 1.0\n", "line 1"),
        ("run", "", "empty"),
    ],
)
def test_bad_files_give_one_line_errors(
    files: tuple[Path, Path], tmp_path: Path, which: str, content: str, fragment: str
) -> None:
    orl_file, run_file = files
    bad = tmp_path / ("bad.qrels" if which == "orl" else "bad.trec")
    bad.write_text(content)
    args = [str(bad), str(run_file)] if which == "orl" else [str(orl_file), str(bad)]
    result = runner.invoke(app, ["eval", *args, "-m", "RR"])
    assert result.exit_code == 1
    assert fragment in result.stderr and str(bad) in result.stderr
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.output


def test_bad_orl_json(files: tuple[Path, Path], tmp_path: Path) -> None:
    _, run_file = files
    bad = tmp_path / "orl.json"
    bad.write_text(json.dumps({"queries": {"q1": {"d1": 1, "d2": 3}}}))
    result = runner.invoke(app, ["eval", str(bad), str(run_file), "-m", "RR"])
    assert result.exit_code == 1 and "'d2' has rank 3" in result.stderr


def test_bad_measures_are_all_reported(files: tuple[Path, Path]) -> None:
    orl_file, run_file = files
    result = runner.invoke(app, ["eval", str(orl_file), str(run_file), "-m", "Foo", "-m", "P"])
    assert result.exit_code == 1
    assert "'Foo'" in result.stderr and "'P'" in result.stderr


def test_measures_command_lists_everything() -> None:
    doc = _json(["measures", "--format", "json"])
    names = [row["measure"] for row in doc["measures"]]
    for expected in ("RDQm1@k", "RDQm2-a1@k", "RDQm2-a4@k", "nDCG[@k]", "CMP@k", "SpearmanRho[@k]"):
        assert expected in names
    for expected in ("R[@k]", "Rprec", "Bpref", "infAP", "IPrec@r", "Success[@k]", "NumRet"):
        assert expected in names
    assert {"NumRel", "NumRelRet", "ERR[@k]", "Judged[@k]"} <= set(names)
    assert doc["weight_presets"]["carousel3"] == [1, 1, 1, 0.1]
    assert {"m1", "m2"} <= set(doc["penalties"])
    table = runner.invoke(app, ["measures"])
    assert table.exit_code == 0 and "vertical-short" in table.stdout


def test_measures_table_shows_the_optional_cutoff() -> None:
    """Regression: rich read ``[@k]`` as markup and printed ``nDCG`` for ``nDCG[@k]``."""
    table = runner.invoke(app, ["measures"])
    assert table.exit_code == 0
    cells = {line.split("│")[1].strip() for line in table.stdout.splitlines() if "│" in line}
    assert {"nDCG[@k]", "AP[@k]", "ERR[@k]", "Judged[@k]", "P@k", "Rprec"} <= cells


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"orlbuild {__version__}"


def test_version_is_the_installed_distributions() -> None:
    """``orlbuild.__version__`` is what pyproject.toml builds the distribution with."""
    from importlib.metadata import version

    assert __version__ == version("orlbuild")
