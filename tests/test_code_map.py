"""The code map of docs/development.md ("Where to look for X") names only paths that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _map_rows() -> list[str]:
    text = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    section = text.split("## Where to look for X", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| ") and "`" in line]


def _paths(row: str) -> list[Path]:
    """Each backticked path of a row; a bare file name after a folder is read inside it."""
    paths: list[Path] = []
    folder: Path | None = None
    for name in re.findall(r"`([^`]+)`", row.split("|")[2]):
        if "/" in name:
            paths.append(ROOT / name)
            folder = ROOT / name if name.endswith("/") else None
        elif folder is not None and name.endswith(".py"):
            paths.append(folder / name)
    return paths


def test_the_map_has_rows() -> None:
    assert len(_map_rows()) >= 20


def test_every_path_of_the_map_exists() -> None:
    missing = [
        str(p.relative_to(ROOT)) for row in _map_rows() for p in _paths(row) if not p.exists()
    ]
    assert missing == []


def test_a_missing_path_is_found() -> None:
    row = "| q | `orlbuild/builders/tiering/` (`no_such_module.py`) |"
    assert [p for p in _paths(row) if not p.exists()] == [
        ROOT / "orlbuild/builders/tiering/no_such_module.py"
    ]
