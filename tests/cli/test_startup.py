"""Start-up weight: `orlbuild --version` and `--help` load no heavy library; lazy registry."""

from __future__ import annotations

import subprocess
import sys

import pytest

from orlbuild.cli.main import COMMANDS, app, load_command

HEAVY = ("sqlalchemy", "alembic", "pandas", "matplotlib", "numpy", "scipy", "choix", "rich")

PROBE = """
import sys
from orlbuild.cli.main import app
try:
    app({args!r})
except SystemExit:
    pass
heavy = {heavy!r}
print(sorted({{m.split('.')[0] for m in sys.modules}} & set(heavy)))
"""


@pytest.mark.parametrize("args", [["--version"], ["--help"], []])
def test_version_and_help_import_no_heavy_module(args: list[str]) -> None:
    probe = PROBE.format(args=args, heavy=HEAVY)
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == "[]", out


def test_every_registered_command_loads_with_its_listed_help() -> None:
    for name, (_, text) in COMMANDS.items():
        command = load_command(name)
        assert command is not None, name
        assert command.name == name
        own = " ".join((command.help or "").split("\n\n")[0].split())
        assert own == text, (name, own)
    assert load_command("no-such-command") is None


def test_help_lists_every_command() -> None:
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    for name in COMMANDS:
        assert f"  {name} " in result.stdout


def test_unknown_command_is_a_usage_error() -> None:
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["frobnicate"])
    assert result.exit_code == 2


def test_eval_reader_name_limit_matches_the_store() -> None:
    from orlbuild.ingest.trec_reader import NAME_LENGTH as READER_LIMIT
    from orlbuild.store.models import NAME_LENGTH

    assert READER_LIMIT == NAME_LENGTH


def test_eval_does_not_import_the_store(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "qrels").write_text("q1 0 d1 1\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 1.0 t\n")
    args = ["eval", str(tmp_path / "qrels"), str(tmp_path / "run"), "-m", "AP", "--format", "json"]
    probe = PROBE.format(args=args, heavy=("sqlalchemy", "alembic", "matplotlib"))
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == "[]", out


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_eval_of_trec_files_imports_no_pandas(tmp_path, fmt: str) -> None:  # type: ignore[no-untyped-def]
    """The byte reader, the coded scorer and the table of means need no pandas (nor Arrow)."""
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d3 1 2 t\n")
    args = ["eval", str(tmp_path / "qrels"), str(tmp_path / "run"), "-m", "AP", "-m", "nDCG@10"]
    probe = PROBE.format(args=[*args, "--format", fmt], heavy=("pandas", "pyarrow", "scipy"))
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == "[]", out


def test_store_commands_do_not_import_alembic(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Opening a migrated store checks its revision without Alembic (store.schema.HEAD_REVISION);
    only ``db`` commands and an out-of-date store load it."""
    from orlbuild.store import upgrade

    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    (tmp_path / "prefs.tsv").write_text("query\twinner\tloser\nq1\ta\tb\n")
    for args in (
        ["--db", url, "--quiet", "ingest", "pairwise", str(tmp_path / "prefs.tsv")],
        ["--db", url, "status"],
    ):
        probe = PROBE.format(args=args, heavy=("alembic", "mako"))
        out = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        ).stdout
        assert out.strip().splitlines()[-1] == "[]", (args, out)


def test_the_console_script_freezes_objects_at_exit_after_its_other_handlers() -> None:
    """``run`` registers :func:`gc.freeze` first, so it runs last: the final collections skip
    the modules' objects (a handler registered before ``run`` sees the freeze)."""
    probe = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
        "from orlbuild.cli.main import run\n"
        "sys.argv = ['orlbuild', '--version']\n"
        "run()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip().splitlines()[-1] == "frozen True", done
