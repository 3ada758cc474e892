"""The store is persistence only: it imports no higher layer (README, "Development").

``orlbuild/store/`` may import SQLAlchemy/Alembic, ``orlbuild.errors``, its own
modules and the ``scoring`` data types, never ``orlbuild.builders``,
``orlbuild.services``, ``orlbuild.pipeline``, ``orlbuild.cli``,
``orlbuild.report`` or ``scoring.statistics`` - at module level, inside
functions and under ``TYPE_CHECKING`` alike.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
STORE = ROOT / "orlbuild" / "store"

FORBIDDEN = (
    "orlbuild.builders",
    "orlbuild.services",
    "orlbuild.pipeline",
    "orlbuild.cli",
    "orlbuild.report",
    "scoring.statistics",
)


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every module an import statement of ``path`` names, with its line.

    ``from a.b import c`` yields both ``a.b`` and ``a.b.c`` (``c`` may be a
    submodule); relative imports are resolved against ``orlbuild.store``.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = ["orlbuild", "store"][: max(0, 3 - node.level)]
                module = ".".join([*package, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def forbidden(module: str) -> bool:
    return any(module == f or module.startswith(f + ".") for f in FORBIDDEN)


def offenders(paths: list[Path]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in paths
        for line, module in imported_modules(path)
        if forbidden(module)
    ]


def store_modules() -> list[Path]:
    return sorted(STORE.rglob("*.py"))


def test_the_store_imports_no_higher_layer() -> None:
    assert len(store_modules()) >= 10
    assert offenders(store_modules()) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from orlbuild.builders.build import build_orls", True),
        ("from orlbuild import services", True),
        ("from ..cli import main", True),
        ("import scoring.statistics.tests", True),
        ("def f():\n    from orlbuild.report import write_report", True),
        ("from orlbuild.errors import StoreError", False),
        ("from scoring.orl import ORL", False),
        ("from .models import Base", False),
    ],
)
def test_the_check_sees_every_form_of_import(tmp_path: Path, source: str, expected: bool) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(source, encoding="utf-8")
    assert bool([m for _, m in imported_modules(probe) if forbidden(m)]) is expected


def test_importing_the_store_loads_no_higher_layer() -> None:
    modules = ", ".join(f"orlbuild.store.{p.stem}" for p in store_modules() if p.stem != "__init__")
    code = (
        f"import sys, orlbuild.store, {modules}\n"
        f"bad = sorted(m for m in sys.modules if m.startswith({FORBIDDEN!r}))\n"
        "print(bad)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"
