"""The examples in docstrings run and print what they show.

Every module under ``scoring/`` and ``orlbuild/`` whose docstrings hold a
``>>>`` example is run through :mod:`doctest` (examples that write files or
need a database are marked ``# doctest: +SKIP`` where they stand).
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _modules_with_examples() -> list[str]:
    names = []
    for package in ("scoring", "orlbuild"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if ">>> " in path.read_text(encoding="utf-8"):
                parts = path.relative_to(ROOT).with_suffix("").parts
                names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = _modules_with_examples()


def test_examples_are_found() -> None:
    assert "scoring.evaluation" in MODULES  # the walk above sees the docstrings


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
