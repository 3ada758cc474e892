"""Every third-party import is declared in ``pyproject.toml``.

A fresh virtual environment holds only what ``pyproject.toml`` declares, so an
import that works on a developer's machine because some other package pulled
its distribution in (as click once came with typer) fails for a new user.
This test walks the import statements of ``orlbuild/``, ``scoring/`` and
``tests/`` and maps each third-party top-level module to its distribution
with :func:`importlib.metadata.packages_distributions`:

* ``orlbuild/`` and ``scoring/`` may import the runtime dependencies and the
  optional runtime extras (``postgres`` ...), never the ``test``, ``bench`` or
  ``dev`` extras;
* ``tests/`` may also import the ``test`` extra, and ``tests/benchmarks/``
  (not part of the default run) the ``bench`` extra as well.

A module not installed here is accepted only when its name is the name of a
declared distribution, or the module a declared distribution is known to ship
under another name (:data:`MODULES_OF_UNINSTALLED`: a fresh test environment
does not install the ``bench`` extra); anything else fails, naming the import
and the file.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from functools import cache
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
DEVELOPMENT_EXTRAS = frozenset({"test", "bench", "dev"})
# Import name -> distribution, for declared distributions whose module is named
# otherwise and which may be absent here (the bench extra in a test-only venv).
MODULES_OF_UNINSTALLED = {"crowdkit": "crowd-kit", "sklearn": "scikit-learn"}


@cache
def _project() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as handle:
        project: dict[str, object] = tomllib.load(handle)["project"]
    return project


@cache
def _distributions() -> dict[str, list[str]]:
    return dict(packages_distributions())


def _names(requirements: object) -> frozenset[str]:
    """Distribution names of ``requirements``, with what their requested extras install.

    ``dask[distributed]`` declares ``dask`` and, through dask's own metadata,
    ``distributed``.
    """
    assert isinstance(requirements, list)
    names = set()
    for text in requirements:
        requirement = Requirement(text)
        names.add(canonicalize_name(requirement.name))
        for extra in requirement.extras:
            names |= _requirements_of(requirement.name, extra)
    return frozenset(names)


def _requirements_of(name: str, extra: str) -> frozenset[str]:
    """What the installed distribution ``name`` requires (for ``extra``; ``""``: always)."""
    try:
        texts = requires(name) or []
    except PackageNotFoundError:
        return frozenset()
    wanted = set()
    for text in texts:
        requirement = Requirement(text)
        marker = requirement.marker
        if extra == "":
            applies = marker is None or marker.evaluate({"extra": ""})
        else:
            applies = marker is not None and marker.evaluate({"extra": extra})
        if applies:
            wanted.add(canonicalize_name(requirement.name))
    return frozenset(wanted)


def _meta_requirements(name: str) -> frozenset[str]:
    """What a meta distribution (one that ships no module of its own) installs in its place.

    ``typer`` 0.12-0.15, for example, is a wrapper whose ``typer`` module comes
    from ``typer-slim``: declaring ``typer`` is what a user should do.
    """
    if any(name in {canonicalize_name(d) for d in dists} for dists in _distributions().values()):
        return frozenset()
    return _requirements_of(name, "")


@cache
def declared(*extras: str) -> frozenset[str]:
    """Runtime dependencies, optional runtime extras, plus the named extras."""
    optional = _project().get("optional-dependencies", {})
    assert isinstance(optional, dict)
    names = set(_names(_project()["dependencies"]))
    for extra, requirements in optional.items():
        if extra not in DEVELOPMENT_EXTRAS or extra in extras:
            names |= _names(requirements)
    for name in list(names):
        names |= _meta_requirements(name)
    return frozenset(names)


@cache
def local_modules() -> frozenset[str]:
    """Top-level names of this repository's own code (``tests`` is on the test path)."""
    names = {"orlbuild", "scoring", "tests", "migrations", "conftest"}
    for path in (ROOT / "tests").rglob("*"):
        if "__pycache__" not in path.parts and (path.is_dir() or path.suffix == ".py"):
            names.add(path.stem)
    return frozenset(names)


def top_level_imports(path: Path) -> Iterator[tuple[int, str]]:
    """``(line, top-level module)`` for every absolute import in a Python file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.partition(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module.partition(".")[0]


def undeclared_imports(path: Path, allowed: frozenset[str], root: Path = ROOT) -> list[str]:
    """Imports in ``path`` whose distribution is not among ``allowed`` (shown from ``root``)."""
    distributions = _distributions()
    local = local_modules()
    problems = []
    for line, module in top_level_imports(path):
        if module in sys.stdlib_module_names or module in local:
            continue
        candidates = distributions.get(module) or [MODULES_OF_UNINSTALLED.get(module, module)]
        if not {canonicalize_name(name) for name in candidates} & allowed:
            shown = ", ".join(sorted(set(candidates)))
            problems.append(
                f"{path.relative_to(root)}:{line}: import {module!r} (distribution {shown}) "
                "is not declared in pyproject.toml"
            )
    return problems


def _files(folder: str) -> list[Path]:
    return sorted(p for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)


def allowed_for(path: Path) -> frozenset[str]:
    """What a file may import, by the part of the tree it is in."""
    relative = path.relative_to(ROOT).parts
    if relative[0] != "tests":
        return declared()
    if relative[1] == "benchmarks":
        return declared("test", "bench")
    return declared("test")


@pytest.mark.parametrize("folder", ["orlbuild", "scoring", "tests"])
def test_every_third_party_import_is_declared(folder: str) -> None:
    files = _files(folder)
    assert files, f"no Python files found under {folder}/"
    problems = [
        problem for path in files for problem in undeclared_imports(path, allowed_for(path))
    ]
    assert not problems, "\n".join(problems)


def test_the_guard_names_an_undeclared_import_and_its_file(tmp_path: Path) -> None:
    """The check itself fails on an import that only a development extra provides."""
    probe = tmp_path / "probe.py"
    probe.write_text("import os\nimport hypothesis\nfrom scoring import rdq\nimport numpy\n")
    problems = undeclared_imports(probe, declared(), root=tmp_path)
    assert problems == [
        "probe.py:2: import 'hypothesis' (distribution hypothesis) "
        "is not declared in pyproject.toml"
    ]
    assert undeclared_imports(ROOT / "tests" / "test_declared_imports.py", declared("test")) == []
