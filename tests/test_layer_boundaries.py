"""What each layer may import (README, "Development"), checked on the source.

The store's own rule is ``tests/store/test_layer_boundary.py`` and the scoring
core's ``tests/scoring/test_package_boundary.py``; this file checks the layers
above them the same way: every ``import`` statement of every module, at
module level, inside functions and under ``TYPE_CHECKING`` alike (a type-only
import still ties a layer to another), relative imports resolved.

Exemptions, each with its reason:

- ``orlbuild/ingest/file_ingest.py`` is the one ingest module that writes the
  store (it reads, validates and stores a file in one transaction); the other
  ingest modules only read files.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "orlbuild"

HIGHER = ("orlbuild.store", "orlbuild.services", "orlbuild.pipeline", "orlbuild.cli")


@dataclass(frozen=True)
class Rule:
    """The modules of one layer and the modules they must not import."""

    name: str
    folders: tuple[str, ...]
    forbidden: tuple[str, ...]
    exempt: tuple[str, ...] = ()

    def modules(self) -> list[Path]:
        paths: list[Path] = []
        for folder in self.folders:
            target = PACKAGE / folder
            paths += [target] if target.suffix == ".py" else sorted(target.rglob("*.py"))
        return [p for p in paths if str(p.relative_to(ROOT)) not in self.exempt]

    def breaks(self, module: str) -> bool:
        return any(module == f or module.startswith(f + ".") for f in self.forbidden)


RULES = [
    Rule(
        "builders compute: no store, services, pipeline or CLI",
        ("builders",),
        (*HIGHER, "sqlalchemy"),
    ),
    Rule(
        "ingest readers read files: no store, services, pipeline or CLI",
        ("ingest", "trec_reader.py"),
        (*HIGHER, "sqlalchemy"),
        exempt=("orlbuild/ingest/file_ingest.py",),
    ),
    Rule(
        "the report renders: no store, services, pipeline or CLI",
        ("report",),
        (*HIGHER, "sqlalchemy"),
    ),
    Rule(
        "ORL files are read and written without the store, services or CLI",
        ("orl_io",),
        ("orlbuild.store", "orlbuild.services", "orlbuild.cli", "sqlalchemy"),
    ),
    Rule(
        "services serve the front ends: no CLI, no pipeline",
        ("services",),
        ("orlbuild.cli", "orlbuild.pipeline"),
    ),
    Rule("the CLI reaches SQL only through the store", ("cli",), ("sqlalchemy", "alembic")),
    Rule(
        "the pipeline is service calls: no store, no SQLAlchemy",
        ("pipeline",),
        ("orlbuild.store", "sqlalchemy", "alembic"),
    ),
]


def imported_modules(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    """Every module an import statement of ``path`` names, with its line.

    ``from a.b import c`` yields both ``a.b`` and ``a.b.c`` (``c`` may be a
    submodule); relative imports are resolved against the package of ``path``.
    """
    text = path.read_text(encoding="utf-8") if source is None else source
    package = list(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(text, filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def offenders(rule: Rule, paths: list[Path]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in paths
        for line, module in imported_modules(path)
        if rule.breaks(module)
    ]


@pytest.mark.parametrize("rule", RULES, ids=[r.folders[0] for r in RULES])
def test_each_layer_imports_only_what_it_may(rule: Rule) -> None:
    modules = rule.modules()
    assert modules, rule.name  # the rule sees the layer's files
    assert offenders(rule, modules) == [], rule.name


def test_the_exemptions_are_still_needed() -> None:
    """An exempt module that no longer imports a forbidden layer loses its exemption."""
    for rule in RULES:
        for exempt in rule.exempt:
            assert offenders(rule, [ROOT / exempt]), f"{exempt} no longer needs its exemption"


@pytest.mark.parametrize(
    ("folder", "source", "expected"),
    [
        ("builders", "from orlbuild.store.builds import get_build", True),
        ("builders", "from ..services import builds", True),
        ("builders", "def f():\n    from orlbuild.cli import main", True),
        ("builders", "from orlbuild.builders.records import QueryORL", False),
        ("ingest", "if TYPE_CHECKING:\n    from sqlalchemy import Engine", True),
        ("ingest", "from ..store.batches import NAME_COLUMNS", True),
        ("ingest", "from .source import InputFormat", False),
        ("report", "import orlbuild.pipeline.runner", True),
        ("report", "from scoring.statistics import PowerResult", False),
        ("orl_io", "from orlbuild import services", True),
        ("orl_io", "from orlbuild.ingest.kinds import DuplicatePolicy", False),
        ("services", "from orlbuild.pipeline.config import CompareSpec", True),
        ("services", "from ..cli.render import emit", True),
        ("services", "from orlbuild.store.builds import get_build", False),
        ("cli", "import sqlalchemy.exc", True),
        ("cli", "from orlbuild.services.orls import show_build", False),
        ("pipeline", "from orlbuild.store import open_store", True),
        ("pipeline", "from sqlalchemy.engine import make_url", True),
        ("pipeline", "from orlbuild.services.builds import build_or_reuse", False),
    ],
)
def test_the_check_sees_every_form_of_import(folder: str, source: str, expected: bool) -> None:
    rule = next(r for r in RULES if r.folders[0] == folder)
    probe = PACKAGE / folder / "_probe.py"  # never written: only its place in the package counts
    found = [m for _, m in imported_modules(probe, source) if rule.breaks(m)]
    assert bool(found) is expected, (folder, source, found)
