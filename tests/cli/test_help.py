"""Every command's ``--help`` (sub-commands included) and what tables look like when piped."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from orlbuild.cli.main import COMMANDS, app, load_command


def _command_paths() -> list[list[str]]:
    """``["build"]``, ``["orl", "show"]``, ...: every command and sub-command of COMMANDS."""
    paths: list[list[str]] = []

    def walk(path: list[str], command: Any) -> None:
        paths.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk([*path, name], sub)

    for name in COMMANDS:
        walk([name], load_command(name))
    return paths


def _help(path: list[str]) -> str:
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, (path, result.output)
    return result.output


HELPS = {" ".join(path): _help(path) for path in _command_paths()}


def _option_line(text: str, flag: str) -> str:
    """The help-table line that declares ``flag``."""
    return next(line for line in text.splitlines() if re.search(rf"(^|\s){flag}(\s|,)", line))


def test_every_command_and_sub_command_is_rendered() -> None:
    assert len(HELPS) > len(COMMANDS)  # the sub-commands of orl, audit, results, ingest, ...
    assert {"orl show", "results export", "ingest run", "batches list", "db upgrade"} <= set(HELPS)


@pytest.mark.parametrize("name", sorted(HELPS))
def test_help_shows_what_a_reader_types(name: str) -> None:
    text = HELPS[name]
    # flags take no value: no <bool>, not even after --help
    assert "<bool>" not in text
    assert _option_line(text, "--help").split("--help")[1].split()[0:2] == ["Show", "this"]
    # a repeatable option shows one value, never a Python type
    assert "list[" not in text
    # usage lines name arguments as on the command line
    usage = next(line for line in text.splitlines() if "Usage:" in line)
    assert "{" not in usage and "<" not in usage, usage


def test_flags_still_reject_a_value() -> None:
    result = CliRunner().invoke(app, ["score", "-b", "x", "-m", "AP", "--per-query", "true"])
    assert result.exit_code == 2
    assert "unexpected extra argument(s) (true)" in result.output


def test_usage_lines_name_arguments() -> None:
    assert "Usage: orlbuild eval [OPTIONS] ORL_FILE RUN_FILES..." in HELPS["eval"]
    assert "Usage: orlbuild db upgrade [OPTIONS] [REVISION]" in HELPS["db upgrade"]


def test_results_export_offers_only_what_it_writes() -> None:
    line = _option_line(HELPS["results export"], "--format")
    assert "<csv|json>" in line and "table" not in line


@pytest.mark.parametrize(
    "name",
    [
        "build",
        "ingest listwise",
        "ingest pairwise",
        "ingest run",
        "status",
        "batches list",
        "orl list",
    ],
)
def test_collection_has_the_short_option_everywhere(name: str) -> None:
    line = _option_line(HELPS[name], "--collection")
    assert re.search(r"\s-c\s", line), line


@pytest.mark.parametrize("name", ["eval", "score", "compare", "power", "report"])
def test_missing_shows_its_words(name: str) -> None:
    assert "<zero|skip>" in _option_line(HELPS[name], "--missing")


def test_measures_prints_the_penalties_it_promises() -> None:
    assert "penalties" in HELPS["measures"]
    result = CliRunner().invoke(app, ["measures"])
    assert result.exit_code == 0
    tail = result.stdout.split("Penalties", 1)[1]
    for penalty in ("m1", "m2"):
        assert re.search(rf"│ {penalty}\s+│", tail), tail
    doc = json.loads(CliRunner().invoke(app, ["measures", "--format", "json"]).stdout)
    assert {"m1", "m2"} <= set(doc["penalties"])


def test_piped_tables_do_not_truncate_names(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("q1 0 d1 2\nq1 0 d2 1\nq2 0 d3 1\n")
    names = [f"sample-pairwise-bt-with-a-rather-long-system-name-{i}" for i in (1, 2)]
    for name in names:
        (tmp_path / f"{name}.trec").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    args = ["eval", str(tmp_path / "qrels"), *(str(tmp_path / f"{n}.trec") for n in names)]
    measures = ["-m", "RDQm2-a1@10", "-m", "nDCG@10", "-m", "AP", "-m", "RBP(p=0.8)"]
    result = CliRunner().invoke(app, [*args, *measures])
    assert result.exit_code == 0, result.output
    assert "…" not in result.stdout
    for name in names:
        assert name in result.stdout
    for header in ("RDQm2-a1@10", "nDCG@10", "RBP(p=0.8)"):
        assert header in result.stdout
