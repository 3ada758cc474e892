"""Run ``orlbuild`` commands against a store URL through Typer's CliRunner (CLI tests)."""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner

from orlbuild.cli.main import app

runner = CliRunner()


def cli(url: str, *args: str) -> tuple[int, str, str]:
    """``orlbuild --db URL --quiet ARGS``: exit code, stdout, stderr."""
    result = runner.invoke(app, ["--db", url, "--quiet", *args])
    return result.exit_code, result.stdout, result.stderr


def cli_json(url: str, *args: str) -> Any:
    """The JSON document a command prints with ``--format json`` (it must exit 0)."""
    code, out, err = cli(url, *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)
