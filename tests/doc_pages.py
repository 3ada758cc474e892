"""The repository's documentation pages: README.md and docs/*.md, their headings and anchors."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def pages() -> list[Path]:
    """README.md and every page under docs/."""
    return [README, *sorted(DOCS.glob("*.md"))]


def headings(text: str) -> list[str]:
    """Heading titles (``#`` lines outside fenced code blocks), in order."""
    found: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"#{1,6}\s+(.+?)\s*$", line)):
            found.append(match.group(1))
    return found


def anchor(title: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def section_text(path: Path, title: str) -> str:
    """The text under heading ``title`` of ``path``, up to the next heading as high or higher."""
    text = path.read_text(encoding="utf-8")
    match = re.search(rf"^(#+) {re.escape(title)}\s*$", text, re.M)
    assert match is not None, f"{path.name} has no heading {title!r}"
    rest = text[match.end() :]
    end = re.search(rf"^#{{1,{len(match.group(1))}}} ", _blank_code(rest), re.M)
    return rest[: end.start()] if end else rest


def _blank_code(text: str) -> str:
    """``text`` with the lines of fenced code blocks blanked (same length), so ``# x`` in code
    is not taken for a heading."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            fenced = not fenced
            out.append(line)
        else:
            out.append(" " * (len(line) - 1) + "\n" if fenced and line.endswith("\n") else line)
    return "".join(out)
