"""What each layer may import (docs/development.md, "Development"), checked on the source.

The store's own rule is ``tests/store/test_layer_boundary.py`` and the scoring
core's ``tests/scoring/test_package_boundary.py``; this file checks the layers
above them the same way: every ``import`` statement of every module, at
module level, inside functions and under ``TYPE_CHECKING`` alike (a type-only
import still ties a layer to another), relative imports resolved. No module is exempt.

It also checks that a module's ``__all__`` lists only names the module itself
defines (a package ``__init__`` may re-export its modules' names), and that two
modules share a file name only when they are one feature's twins in different
layers (``cli/build.py`` parses, ``builders/build.py`` computes).
"""

from __future__ import annotations

import ast

import pytest
from layers import HIGHER, PACKAGE, ROOT, Rule, imported_modules, offenders

RULES = [
    Rule(
        "builders compute: no store, services, pipeline or CLI",
        ("builders",),
        (*HIGHER, "sqlalchemy"),
    ),
    Rule(
        "ingest readers read files: no store, services, pipeline or CLI",
        ("ingest",),
        (*HIGHER, "sqlalchemy"),
    ),
    Rule(
        "the LLM-judge client asks and caches: no store, services, pipeline or CLI",
        ("judging",),
        (*HIGHER, "sqlalchemy"),
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
    Rule(
        "the CLI reaches the store only through services: no store, no SQLAlchemy",
        ("cli",),
        ("orlbuild.store", "sqlalchemy", "alembic"),
    ),
    Rule(
        "the web application calls services: no store, no SQLAlchemy, no CLI or pipeline",
        ("web",),
        ("orlbuild.store", "sqlalchemy", "alembic", "orlbuild.cli", "orlbuild.pipeline"),
    ),
    Rule(
        "the pipeline is service calls: no store, no SQLAlchemy",
        ("pipeline",),
        ("orlbuild.store", "sqlalchemy", "alembic"),
    ),
]


@pytest.mark.parametrize("rule", RULES, ids=[r.folders[0] for r in RULES])
def test_each_layer_imports_only_what_it_may(rule: Rule) -> None:
    modules = rule.modules()
    assert modules, rule.name  # the rule sees the layer's files
    assert offenders(rule, modules) == [], rule.name


def test_no_module_is_exempt() -> None:
    assert [rule.name for rule in RULES if rule.exempt] == []


def _defined_names(tree: ast.Module) -> set[str]:
    """Names bound at module level by ``def``, ``class`` or an assignment (not by imports)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.If | ast.Try):  # e.g. definitions under a version check
            names |= _defined_names(ast.Module(body=node.body, type_ignores=[]))
    return names


def _exported(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return [str(name) for name in ast.literal_eval(node.value)]
    return []


@pytest.mark.parametrize("package", ["orlbuild", "scoring"])
def test_all_lists_only_names_the_module_defines(package: str) -> None:
    """``__all__`` of a module (not a package ``__init__``) names only its own definitions."""
    wrong = []
    for path in sorted((ROOT / package).rglob("*.py")):
        if path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined = _defined_names(tree)
        wrong += [f"{path.relative_to(ROOT)}: {n}" for n in _exported(tree) if n not in defined]
    assert wrong == []


# Module names used more than once, each by one feature's per-layer twins. A new
# module that takes a name already used elsewhere fails the test below: name it
# after what it holds, or add it here if it is the same feature in another layer.
LAYER_TWINS = {
    "batches.py": {"orlbuild/cli", "orlbuild/services", "orlbuild/store"},
    "build.py": {"orlbuild/builders", "orlbuild/cli"},
    "builds.py": {"orlbuild/services", "orlbuild/store"},
    "errors.py": {"orlbuild", "scoring"},
    "evaluation.py": {"orlbuild/cli", "scoring"},
    "evaluations.py": {"orlbuild/services", "orlbuild/store"},
    "listings.py": {"orlbuild/cli", "orlbuild/services"},
    "measures.py": {"orlbuild/cli", "scoring"},
    "orl.py": {"orlbuild/cli", "scoring"},
    "power.py": {"orlbuild/cli", "scoring/statistics"},
    "quality.py": {"orlbuild/builders/audit", "orlbuild/cli"},
    "rounds.py": {"orlbuild/cli", "orlbuild/services", "orlbuild/store"},
    "reference_resampling.py": {"orlbuild/report", "orlbuild/services"},
    "status.py": {"orlbuild/cli", "orlbuild/store"},
    "texts.py": {"orlbuild/ingest", "orlbuild/services", "orlbuild/store"},
    "vocabulary.py": {"orlbuild", "scoring"},
    "web_users.py": {"orlbuild/cli", "orlbuild/services", "orlbuild/store"},
}


def test_module_names_are_shared_only_by_per_layer_twins() -> None:
    folders: dict[str, set[str]] = {}
    for package in ("orlbuild", "scoring"):
        for path in (ROOT / package).rglob("*.py"):
            if path.name not in {"__init__.py", "__main__.py"}:
                folder = path.parent.relative_to(ROOT).as_posix()
                folders.setdefault(path.name, set()).add(folder)
    shared = {name: where for name, where in folders.items() if len(where) > 1}
    assert shared == LAYER_TWINS


@pytest.mark.parametrize(
    ("folder", "source", "expected"),
    [
        ("builders", "from orlbuild.store.builds import get_build", True),
        ("builders", "from ..services import builds", True),
        ("builders", "def f():\n    from orlbuild.cli import main", True),
        ("builders", "from orlbuild.records import QueryORL", False),
        ("ingest", "if TYPE_CHECKING:\n    from sqlalchemy import Engine", True),
        ("ingest", "from ..store.batches import NAME_COLUMNS", True),
        ("ingest", "from .source import open_input", False),
        ("report", "import orlbuild.pipeline.runner", True),
        ("report", "from scoring.statistics import PowerResult", False),
        ("orl_io", "from orlbuild import services", True),
        ("orl_io", "from orlbuild.ingest.kinds import DuplicatePolicy", False),
        ("services", "from orlbuild.pipeline.config import CompareSpec", True),
        ("services", "from ..cli.render import emit", True),
        ("services", "from orlbuild.store.builds import get_build", False),
        ("cli", "import sqlalchemy.exc", True),
        ("cli", "from orlbuild.store.read import DEFAULT_COLLECTION", True),
        ("cli", "if TYPE_CHECKING:\n    from ..store.engine import Engine", True),
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
