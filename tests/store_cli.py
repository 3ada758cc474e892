"""Run ``orlbuild`` commands against a store URL through Typer's CliRunner (CLI tests)."""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner, Result

from orlbuild.cli.main import app

runner = CliRunner()


def outcome(result: Result) -> tuple[int, str, str]:
    """A CliRunner result as exit code, stdout, stderr."""
    return result.exit_code, result.stdout, result.stderr


def cli(url: str, *args: str) -> tuple[int, str, str]:
    """``orlbuild --db URL --quiet ARGS``: exit code, stdout, stderr."""
    return outcome(runner.invoke(app, ["--db", url, "--quiet", *args]))


def one_error_line(code: int, out: str, err: str, *words: str) -> str:
    """The refusal every bad input gets: exit 1, nothing on stdout, no traceback, and one
    ``Error: ...`` line on stderr naming each of ``words``; that line."""
    assert code == 1, (out, err)
    assert "Traceback" not in err and out == "", (out, err)
    assert err.startswith("Error: ") and err.count("\n") == 1 and err.endswith("\n"), err
    for word in words:
        assert word in err, err
    return err.rstrip("\n")


def cli_json(url: str, *args: str) -> Any:
    """The JSON document a command prints with ``--format json`` (it must exit 0)."""
    code, out, err = cli(url, *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)
