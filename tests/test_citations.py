"""Docstrings and comments cite only what a clone of the repository holds.

The normative definitions (measures, build routes, tiering, formats) live in
the README and next to the code (README, "Development"). This test fails when
a file under ``orlbuild/``, ``scoring/``, ``tests/``, ``migrations/`` or
``sample_data/`` cites a specification file kept outside the repository, or
when a citation of the form ``README, "Section"`` (or ``README "Section"``)
names a heading the README does not have.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CHECKED_FOLDERS = ("orlbuild", "scoring", "tests", "migrations", "sample_data")
TEXT_SUFFIXES = frozenset({".py", ".pyi", ".json", ".toml", ".ini", ".cfg", ".mako", ".md", ".txt"})
#: Specification files that were never part of the repository (spelled in parts
#: so that this file does not cite them itself).
OUTSIDE_FILES = tuple(f"{stem}.md" for stem in ("ORL", "RDQ", "FORMATS", "STYLE"))
#: ``README, "Section"`` or ``README "Section"``; the quotes may be escaped (JSON) and
#: the title may wrap onto the next docstring or comment line.
CITATION = re.compile(r'README,?\s+(?:#:?\s+)?\\?"([^"\\]+)\\?"')


def _checked_files() -> list[Path]:
    files = []
    for folder in CHECKED_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in TEXT_SUFFIXES and path.is_file() and "__pycache__" not in path.parts:
                files.append(path)
    return files


def readme_headings(text: str) -> set[str]:
    """The README's heading titles (``#`` lines outside fenced code blocks)."""
    headings: set[str] = set()
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"#{1,6}\s+(.+?)\s*$", line)):
            headings.add(match.group(1))
    return headings


def cited_sections(text: str) -> list[tuple[int, str]]:
    """``(line, title)`` of every README citation, a wrapped title joined on one line."""
    found = []
    for match in CITATION.finditer(text):
        title = re.sub(r"\s*\n\s*(?:#:?\s*)?", " ", match.group(1)).strip()
        found.append((text.count("\n", 0, match.start()) + 1, title))
    return found


FILES = _checked_files()


def test_the_checked_folders_hold_files() -> None:
    assert len(FILES) > 100
    assert ROOT / "scoring" / "rank_deviation.py" in FILES


def test_no_file_cites_a_specification_outside_the_repository() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in FILES
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if any(name in line for name in OUTSIDE_FILES)
    ]
    assert not offenders, "cite the README or a module instead:\n" + "\n".join(offenders)


def test_every_readme_citation_names_an_existing_heading() -> None:
    headings = readme_headings(README.read_text(encoding="utf-8"))
    citations = [
        (path, number, title)
        for path in FILES
        if path != Path(__file__).resolve()  # its docstring shows the form with a placeholder
        for number, title in cited_sections(path.read_text(encoding="utf-8"))
    ]
    assert len(citations) > 50  # the scan finds the citations the code makes
    missing = [
        f"{path.relative_to(ROOT)}:{number}: README has no heading {title!r}"
        for path, number, title in citations
        if title not in headings
    ]
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('(README, "Input formats").', [(1, "Input formats")]),
        ('see README "Comparing many systems"', [(1, "Comparing many systems")]),
        (
            'x\n(README, "How\n    tiers are decided and audited")',
            [(2, "How tiers are decided and audited")],
        ),
        ('#: grow (README,\n#: "Build routes").', [(1, "Build routes")]),
        ('"source": "README, \\"Reference values\\" (k = 5)"', [(1, "Reference values")]),
        ("the README's Development section", []),
    ],
)
def test_citations_are_found_in_every_written_form(
    text: str, expected: list[tuple[int, str]]
) -> None:
    assert cited_sections(text) == expected


def test_headings_ignore_comments_inside_code_blocks() -> None:
    text = "# Title\n\n## Measures\n\n```python\n# not a heading\n```\n### RDQ\n"
    assert readme_headings(text) == {"Title", "Measures", "RDQ"}
