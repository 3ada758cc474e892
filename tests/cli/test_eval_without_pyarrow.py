"""``orlbuild eval`` imports pandas without pyarrow, and prints the same (issue 24).

pandas 3 imports pyarrow at start-up when it is installed; ``eval`` never
uses it, so its process imports pandas with ``import pyarrow`` made to fail
(``orlbuild.cli.evaluation._pandas_without_pyarrow``). Checked in a fresh
process, as a user runs it: pyarrow is not loaded, a later ``import
pyarrow`` still works, and the scores and errors are those of this (test)
process, whose pandas has pyarrow when it is installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from orlbuild.cli.main import app

PROBE = """
import importlib.util, json, sys
from orlbuild.cli.main import app
try:
    app({args!r})
except SystemExit:
    pass
loaded = "pyarrow" in sys.modules
usable = importlib.util.find_spec("pyarrow") is None or bool(__import__("pyarrow").__version__)
print(json.dumps({{"pyarrow_loaded": loaded, "pyarrow_importable": usable}}))
"""

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d9 1\nq3 0 d1 0\n"
RUN = (
    "q1 Q0 d2 1 1.5 t\nq1 Q0 d1 2 1.5 t\nq1 Q0 d3 3 0.5 t\n"
    "q2 Q0 d9 1 3.0 t\nq2 Q0 d8 2 3.0 t\nq4 Q0 d1 1 1.0 t\n"
)


def _probe(args: list[str]) -> tuple[str, dict[str, bool]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args)], capture_output=True, text=True, check=True
    )
    lines = done.stdout.strip().splitlines()
    return "\n".join(lines[:-1]) + done.stderr, json.loads(lines[-1])


def test_eval_process_loads_no_pyarrow_and_scores_the_same(tmp_path: Path) -> None:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.trec"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    args = ["eval", str(qrels), str(run), "-m", "AP", "-m", "nDCG@10", "--per-query"]
    output, state = _probe([*args, "--format", "json"])
    assert state == {"pyarrow_loaded": False, "pyarrow_importable": True}
    here = CliRunner().invoke(app, [*args, "--format", "json"])
    assert here.exit_code == 0
    assert json.loads(output) == json.loads(here.stdout)


def test_eval_process_without_pyarrow_names_the_bad_line(tmp_path: Path) -> None:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.trec"
    qrels.write_text(QRELS)
    run.write_text(RUN + "q2 Q0 d7 x 1.0 t\n")
    output, state = _probe(["eval", str(qrels), str(run), "-m", "AP"])
    assert not state["pyarrow_loaded"]
    assert "run.trec, line 7: rank must be an integer (got 'x')" in output
