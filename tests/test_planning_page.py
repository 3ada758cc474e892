"""The round loop of docs/planning.md, "The round loop" runs as shown on the sample data."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from orlbuild.cli.main import app

ROOT = Path(__file__).parents[1]
PAGE = (ROOT / "docs" / "planning.md").read_text(encoding="utf-8")


def _blocks(heading: str) -> list[str]:
    section = PAGE.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)```", section, re.S)


def _run(line: str) -> str:
    words = shlex.split(line)
    assert words[0] == "orlbuild", line
    result = CliRunner().invoke(app, words[1:])
    assert result.exit_code == 0, f"{line}\n{result.output}"
    return result.stdout


def test_the_round_loop_runs_as_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(ROOT / "sample_data", tmp_path / "sample_data")
    (tmp_path / "sample_data" / "orlbuild.db").unlink(missing_ok=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ORLBUILD_DB", raising=False)
    plan_round, judged_round = _blocks("The round loop")
    for line in plan_round.strip().splitlines():
        _run(line)
    status = json.loads(_run("orlbuild plan sample --budget 0 --format json"))["queries"]
    plan = pd.read_csv("round1.tsv", sep="\t", dtype=str, keep_default_na=False)
    assert len(plan) == 200 and (plan["winner"] == "").all()
    assert plan.groupby("query").size().max() <= 20
    assert not set(plan["query"]) & {q for q, s in status.items() if s["status"] == "settled"}
    # the annotators' step: fill winner with a, b or tie
    plan["winner"] = np.random.default_rng(0).choice(["a", "b", "tie"], len(plan))
    plan.to_csv("round1.tsv", sep="\t", index=False)
    for line in judged_round.strip().splitlines():
        _run(line)


def test_the_readme_shows_the_same_loop() -> None:
    """README.md's "Planning the next judgments" shows lines of the loop run above."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Planning the next judgments\n", 1)[1].split("\n## ", 1)[0]
    shown = re.findall(r"```bash\n(.*?)```", section, re.S)
    assert len(shown) == 1
    run = {line for block in _blocks("The round loop") for line in block.strip().splitlines()}
    assert set(shown[0].strip().splitlines()) <= run
