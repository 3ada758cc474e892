"""The scoring core imports nothing from orlbuild (layout rule)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SCORING = Path(__file__).parents[2] / "scoring"


def test_no_module_of_scoring_imports_orlbuild() -> None:
    offenders = []
    for path in SCORING.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] == "orlbuild"]
    assert offenders == []


def test_importing_scoring_loads_no_orlbuild_module() -> None:
    code = "import sys, scoring; print(any(m.startswith('orlbuild') for m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=SCORING.parent
    )
    assert out.stdout.strip() == "False"
