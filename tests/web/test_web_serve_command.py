"""``orlbuild serve``: loopback by default, a TLS warning otherwise, web modules loaded only
by it (issue 34)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.store_cli import cli

pytest.importorskip("fastapi")


def test_serve_warns_about_tls_off_the_loopback(
    migrated_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    calls: list[dict] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append(kw))
    code, _, err = cli(migrated_db_url, "serve")
    assert code == 0 and "Warning" not in err
    assert calls[-1]["host"] == "127.0.0.1" and calls[-1]["port"] == 8000
    code, _, err = cli(migrated_db_url, "serve", "--host", "0.0.0.0", "--port", "8123")
    assert code == 0 and "without TLS" in err and "reverse proxy" in err
    assert calls[-1]["host"] == "0.0.0.0" and calls[-1]["port"] == 8123
    assert migrated_db_url not in err


def test_other_commands_load_no_web_module() -> None:
    code = (
        "import sys\n"
        "from orlbuild.cli.main import app\n"
        "from typer.testing import CliRunner\n"
        "CliRunner().invoke(app, ['--help'])\n"
        "CliRunner().invoke(app, ['round', '--help'])\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in "
        "('fastapi', 'uvicorn', 'jinja2', 'starlette') or m.startswith('orlbuild.web')]\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
