"""Every command and code block shown in README.md and docs/ runs as shown, read from its page."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from typer.testing import CliRunner

from orlbuild.cli.main import app

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"
runner = CliRunner()


def _section_block(heading: str, language: str = "bash", text: str = README) -> str:
    """The first ``language`` code block under ``heading`` of ``text`` (the README by default)."""
    section = text.split(heading + "\n", 1)[1]
    return re.search(rf"```{language}\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


def _page(name: str) -> str:
    return (DOCS / name).read_text()


def _run(line: str, env: dict[str, str] | None = None) -> None:
    words = shlex.split(line)
    assert words[0] == "orlbuild", line
    result = runner.invoke(app, words[1:], env=env)
    assert result.exit_code == 0, f"{line}\n{result.output}"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(ROOT / "sample_data", tmp_path / "sample_data")
    for stale in ("orlbuild.db", "report.html"):
        (tmp_path / "sample_data" / stale).unlink(missing_ok=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ORLBUILD_DB", raising=False)
    return tmp_path


def test_quick_start_has_exactly_two_commands() -> None:
    lines = [x for x in _section_block("## Quick start").splitlines() if x.strip()]
    assert len(lines) == 2
    assert lines[0].startswith("pip install . && orlbuild pipeline")
    assert "pytest" in lines[1]


def test_quick_start_main_job(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    command = _section_block("## Quick start").splitlines()[0].split("&&", 1)[1].strip()
    _run(command)
    assert (workdir / "sample_data" / "report.html").stat().st_size > 10_000
    # The inline commands of the walkthrough work as written from the repository root.
    db = "--db sample_data/orlbuild.db"
    for line in (
        f"orlbuild {db} audit sample-pairwise --query q01",
        f"orlbuild {db} quality sample-pairwise",
    ):
        assert f"`{line}`" in README
        _run(line)
    assert not (workdir / "orlbuild.db").exists()  # no empty database made by mistake
    # What the README says the quality check shows: ann06 is the careless annotator.
    result = runner.invoke(app, [*db.split(), "quality", "sample-pairwise", "--format", "json"])
    agreement = {
        a["annotator"]: a["agreement_ordered"] for a in json.loads(result.stdout)["annotators"]
    }
    assert min(agreement, key=agreement.__getitem__) == "ann06"
    # issue 32: the sample build uses the default tiering, posterior, again
    assert round(agreement["ann06"], 2) == 0.65
    # Issue 40, item 9: the README quotes these columns by name, and the figures match.
    others = [round(v, 2) for a, v in agreement.items() if a != "ann06"]
    assert "`agreement_ordered` 0.65" in README and "0.94-0.99" in README
    assert (min(others), max(others)) == (0.94, 0.99)
    kappa = {a["annotator"]: a["kappa"] for a in json.loads(result.stdout)["annotators"]}
    others = [round(v, 2) for a, v in kappa.items() if a != "ann06"]
    assert round(kappa["ann06"], 2) == 0.03 and (min(others), max(others)) == (0.23, 0.31)
    table = runner.invoke(app, [*db.split(), "quality", "sample-pairwise"]).stdout
    ann06 = next(line for line in table.splitlines() if "ann06" in line)
    assert " 1164 " in ann06 and ".0000" not in ann06  # counts print as integers


def test_command_walkthrough(workdir: Path) -> None:
    lines = [x for x in _section_block("## A tour of the commands").splitlines() if x.strip()]
    assert len(lines) >= 20
    for line in lines:
        _run(line)
    assert (workdir / "power.png").stat().st_size > 1000
    assert (workdir / "report.html").stat().st_size > 1000
    assert (workdir / "demo-bt.qrels").read_text().strip()
    assert (workdir / "bm25-scores.csv").read_text().strip()
    # Issue 40, item 6: the new lists show what the walkthrough stored.
    result = runner.invoke(app, ["systems", "list", "--collection", "demo", "--format", "json"])
    assert [(s["system"], s["runs"], s["queries"]) for s in json.loads(result.stdout)] == [
        ("bm25", 1, 40),
        ("dense", 1, 40),
        ("hybrid", 1, 40),
    ]
    result = runner.invoke(app, ["collections", "list", "--format", "json"])
    demo = {c["collection"]: c for c in json.loads(result.stdout)}["demo"]
    assert (demo["systems"], demo["builds"]) == (3, 3)  # two builds and the override's


def test_python_api_blocks(workdir: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", _page("python-api.md"), re.S)
    assert len(blocks) == 2
    namespace: dict[str, object] = {}
    try:
        for code in blocks:
            exec(compile(code, "docs/python-api.md", "exec"), namespace)
    finally:
        from scoring.penalties import PENALTIES

        PENALTIES.pop("linear", None)
    assert "frame" in namespace and "result" in namespace
    assert (workdir / "sample_data" / "report.html").is_file()


@pytest.fixture
def fresh_pg_url() -> Iterator[str]:
    """A new, empty PostgreSQL database on the test server, dropped afterwards."""
    server = os.environ.get("ORLBUILD_TEST_PG_URL")
    if not server:
        pytest.skip("ORLBUILD_TEST_PG_URL is not set: no PostgreSQL server to run the block on")
    url = make_url(server).set(drivername="postgresql+psycopg")
    name = f"orlbuild_readme_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def test_postgres_block(fresh_pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "judgments.tsv").write_text("query\twinner\tloser\nq1\ta\tb\n")
    monkeypatch.chdir(tmp_path)
    ran = 0
    for line in _section_block("# PostgreSQL for teams", text=_page("postgresql.md")).splitlines():
        if line.startswith("orlbuild"):
            _run(
                re.sub(r"postgresql\+psycopg://\S+", fresh_pg_url, line),
                env={"ORLBUILD_DB": fresh_pg_url},
            )
            ran += 1
    assert ran == 2


def test_comparing_systems_block(capsys: pytest.CaptureFixture[str]) -> None:
    code = _section_block("From Python:", "python", _page("comparing-systems.md"))
    namespace: dict[str, object] = {}
    exec(compile(code, "docs/comparing-systems.md", "exec"), namespace)
    shown = capsys.readouterr().out
    assert "letters" in shown and "run7" in shown


def test_quick_start_states_the_test_time_and_workers_follow_the_cores() -> None:
    """Issue 40, item 11: the README says how long the suite takes; pytest runs ``-n auto``."""
    import tomllib

    text = " ".join(README.split("## Quick start\n", 1)[1].split("\n## ", 1)[0].split())
    assert "expect about 5 minutes on two idle cores, and up to 10" in text
    addopts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"][
        "addopts"
    ].split()
    assert addopts[addopts.index("-n") + 1] == "auto"
