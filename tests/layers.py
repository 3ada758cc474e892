"""What the layer-boundary tests share: a layer's modules and the imports its rule forbids.

Used by ``tests/test_layer_boundaries.py`` (every layer above the store) and
``tests/store/test_layer_boundary.py`` (the store).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).parent.parent

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
