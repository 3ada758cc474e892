"""Re-running the pipeline after an auditor's override keeps the audited build."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from orlbuild.cli.main import app

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def _invoke(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_rerun_reuses_the_overridden_build(tmp_path: Path) -> None:
    target = tmp_path / "sample"
    shutil.copytree(SAMPLE, target, ignore=shutil.ignore_patterns("*.db*", "*.html", "*.png"))
    config = target / "pipeline.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text[: text.index("[power]")] + text[text.index("[report]") :])
    db = f"sqlite:///{target / 'orlbuild.db'}"

    first = _invoke("pipeline", str(config), "--format", "json")
    original = next(b["build"] for b in first["builds"] if b["name"] == "sample-pairwise")
    override = _invoke(
        "--db", db, "audit", "override", "sample-pairwise", "--query", "q01",
        "--merge-tiers", "1", "--reason", "equally good", "--by", "tester", "--format", "json",
    )  # fmt: skip
    derived = override["build"]
    assert derived != original

    again = _invoke("pipeline", str(config), "--format", "json")
    pairwise = next(b for b in again["builds"] if b["name"] == "sample-pairwise")
    assert pairwise["reused"] and pairwise["build"] == derived
    builds = _invoke("--db", db, "orl", "list", "--format", "json")
    assert len(builds) == 4  # three builds and the derived one: nothing built again
    assert {b["id"]: b["parent"] for b in builds}[derived] == original
