"""The store is persistence only: it imports no higher layer (docs/development.md, "Development").

``orlbuild/store/`` may import SQLAlchemy/Alembic, ``orlbuild.errors``, its own
modules and the ``scoring`` data types, never ``orlbuild.builders``,
``orlbuild.services``, ``orlbuild.pipeline``, ``orlbuild.cli``,
``orlbuild.report`` or ``scoring.statistics`` - at module level, inside
functions and under ``TYPE_CHECKING`` alike.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from layers import ROOT, Rule, imported_modules, offenders

STORE = ROOT / "orlbuild" / "store"

FORBIDDEN = (
    "orlbuild.builders",
    "orlbuild.services",
    "orlbuild.pipeline",
    "orlbuild.cli",
    "orlbuild.report",
    "scoring.statistics",
)

RULE = Rule("the store persists only", ("store",), FORBIDDEN)


def store_modules() -> list[Path]:
    return RULE.modules()


def test_the_store_imports_no_higher_layer() -> None:
    assert len(store_modules()) >= 10
    assert offenders(RULE, store_modules()) == []


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
def test_the_check_sees_every_form_of_import(source: str, expected: bool) -> None:
    probe = STORE / "_probe.py"  # never written: only its place in the package counts
    assert bool([m for _, m in imported_modules(probe, source) if RULE.breaks(m)]) is expected


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
