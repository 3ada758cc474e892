"""A second ``build --name X`` is a new version, never silent (issue 21).

docs/tiers-and-audit.md, "Build names".

``X`` means the newest build named X, ``X@N`` the N-th; names that read as an
id or a version are refused; the pipeline still reuses an identical rebuild
and says so when it stores a new version.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orlbuild.cli.main import app
from orlbuild.errors import ConfigError
from orlbuild.pipeline.config import load_config
from tests.store_cli import cli, cli_json

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "pairwise_shapes"


@pytest.fixture
def store_with_pairs(migrated_db_url: str, tmp_path: Path) -> str:
    path = tmp_path / "arena.csv"
    shutil.copy(GOLDEN / "arena.csv", path)
    code, _, err = cli(migrated_db_url, "ingest", "pairwise", str(path))
    assert code == 0, err
    return migrated_db_url


def test_second_build_of_a_name_is_a_new_version(store_with_pairs: str, tmp_path: Path) -> None:
    url = store_with_pairs
    first = cli_json(url, "build", "--source", "pairwise", "--name", "X")
    assert first["new_version"] is None
    code, out, err = cli(url, "build", "--source", "pairwise", "--name", "X", "--format", "json")
    assert code == 0, err
    second = json.loads(out)
    assert f"note: 'X' already named 1 build(s): this build ({second['build']}) is X@2" in err
    assert f"X@1 = build {first['build']}" in err and second["new_version"]
    shown = {ref: cli_json(url, "orl", "show", ref)["build"]["id"] for ref in ("X", "X@1", "X@2")}
    assert shown == {"X": second["build"], "X@1": first["build"], "X@2": second["build"]}
    code, _, err = cli(url, "orl", "show", "X@3")
    assert code == 1 and "build 'X' has 2 version(s); no 'X@3'" in err
    listed = {b["id"]: b["version"] for b in cli_json(url, "orl", "list")}
    assert listed == {first["build"]: 1, second["build"]: 2}
    run = (
        Path(url.removeprefix("sqlite:///")).parent / "s.trec" if url.startswith("sqlite") else None
    )
    if run is not None:  # scoring reads the same name resolution (run files live next to SQLite)
        run.write_text("q1 Q0 d1 1 3 s\nq1 Q0 d3 2 2 s\nq2 Q0 d6 1 1 s\n")
        scored = cli_json(url, "score", "--build", "X@1", "--run", str(run), "-m", "P@1")
        assert scored["build"]["id"] == first["build"]
    audit = cli_json(url, "audit", "X@1")
    assert {d["build"] for d in audit["decisions"]} == {first["build"]}  # not the newest
    derived = cli_json(
        url, "audit", "override", "X@1", "--query", "q1", "--split-at", "d2",
        "--reason", "same", "--by", "tester",
    )  # fmt: skip
    assert derived["version"] == "X@3" and derived["parent"] == first["build"]


@pytest.mark.parametrize("name", ["X@2", "12", "  ", "x" * 600])
def test_names_that_read_as_an_id_or_version_are_refused(store_with_pairs: str, name: str) -> None:
    code, _, err = cli(store_with_pairs, "build", "--source", "pairwise", "--name", name)
    assert code == 1
    assert (
        err.strip().startswith("Error: invalid build name") and len(err.strip().splitlines()) == 1
    )
    assert cli_json(store_with_pairs, "orl", "list") == []


def _pipeline(tmp_path: Path, inputs: list[str]) -> Path:
    config = tmp_path / "pipeline.toml"
    blocks = "".join(f'[[inputs]]\nkind = "pairwise"\npath = "{p}"\n' for p in inputs)
    config.write_text(
        'measures = ["nDCG@10"]\n[database]\npath = "o.db"\n'
        + blocks
        + '[[inputs]]\nkind = "run"\npath = "run.trec"\nsystem = "s"\n'
        '[[builds]]\nname = "X"\nsource = "pairwise"\n[scoring]\nbuild = "X"\n'
    )
    return config


def test_pipeline_reuses_an_identical_build_and_names_a_new_version(tmp_path: Path) -> None:
    shutil.copy(GOLDEN / "arena.csv", tmp_path / "a.csv")
    (tmp_path / "b.csv").write_text("query,winner,loser\nq1,d2,d1\nq1,d2,d3\n")
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 3 s\nq1 Q0 d2 2 2 s\nq2 Q0 d4 1 1 s\n")

    def run(config: Path) -> tuple[dict, str]:  # type: ignore[type-arg]
        result = CliRunner().invoke(app, ["-q", "pipeline", str(config), "--format", "json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["builds"][0], result.stderr

    first, _ = run(_pipeline(tmp_path, ["a.csv"]))
    again, log = run(_pipeline(tmp_path, ["a.csv"]))
    assert again["reused"] and again["build"] == first["build"] and "note:" not in log
    changed, log = run(_pipeline(tmp_path, ["a.csv", "b.csv"]))
    assert not changed["reused"] and changed["build"] != first["build"]
    assert "this build" in changed["new_version"] and "is X@2" in changed["new_version"]
    assert "note: 'X' already named 1 build(s)" in log


def test_toml_build_names_are_checked_like_the_command_line(tmp_path: Path) -> None:
    config = _pipeline(tmp_path, ["a.csv"])
    for name in ("a.csv", "run.trec"):
        (tmp_path / name).write_text("x\n")
    config.write_text(config.read_text().replace('name = "X"', 'name = "X@2"'))
    with pytest.raises(ConfigError, match=r"builds\[0\]\.name.*invalid build name 'X@2'"):
        load_config(config)
