"""Layer rules of the evaluation slice (docs/development.md, "Development"), checked on the source.

``store/evaluations.py`` persists and reads only: it imports no services,
CLI, pipeline, builders or scoring. The evaluation front ends (CLI commands
and the pipeline's evaluation step) import no SQLAlchemy at run time (type
hints under ``TYPE_CHECKING`` are allowed) and reach scoring and the store
through ``orlbuild.services.evaluations``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FRONT_ENDS = [
    "orlbuild/cli/score.py",
    "orlbuild/cli/compare.py",
    "orlbuild/cli/power.py",
    "orlbuild/cli/report.py",
    "orlbuild/cli/results.py",
    "orlbuild/cli/score_tables.py",
    "orlbuild/pipeline/runner.py",
    "orlbuild/services/build_evaluation.py",
]


def runtime_imports(path: str) -> list[str]:
    """Modules imported by ``path`` outside ``if TYPE_CHECKING:`` blocks."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for child in ast.walk(node))
    names = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_store_evaluations_only_persists() -> None:
    forbidden = ("orlbuild.services", "orlbuild.cli", "orlbuild.pipeline", "orlbuild.builders")
    imports = runtime_imports("orlbuild/store/evaluations.py")
    assert "sqlalchemy" in imports  # the parser sees the module's imports
    bad = [m for m in imports if m.startswith(forbidden) or m.split(".")[0] == "scoring"]
    assert bad == []


@pytest.mark.parametrize("path", FRONT_ENDS)
def test_evaluation_front_ends_import_no_sqlalchemy(path: str) -> None:
    imports = runtime_imports(path)
    assert imports, path
    assert [m for m in imports if m.split(".")[0] == "sqlalchemy"] == []
    assert "orlbuild.store.evaluations" not in imports
