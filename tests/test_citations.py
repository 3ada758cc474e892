"""Docstrings and comments cite only what a clone of the repository holds.

The normative definitions (measures, build routes, tiering, formats) live in
the pages under ``docs/`` and next to the code (docs/development.md, "Where
definitions live"). A citation names the page and one of its headings, as
``docs/measures.md, "RDQ"`` (or ``README.md, "Quick start"``). This test fails
when a file under ``orlbuild/``, ``scoring/``, ``tests/``, ``migrations/`` or
``sample_data/`` cites a page that does not exist, a heading its page does not
have, a README heading in the old form without the file name, or a
specification file kept outside the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_pages import ROOT, headings

CHECKED_FOLDERS = ("orlbuild", "scoring", "tests", "migrations", "sample_data")
TEXT_SUFFIXES = frozenset({".py", ".pyi", ".json", ".toml", ".ini", ".cfg", ".mako", ".md", ".txt"})
#: Specification files that were never part of the repository (spelled in parts
#: so that this file does not cite them itself).
OUTSIDE_FILES = tuple(f"{stem}.md" for stem in ("ORL", "RDQ", "FORMATS", "STYLE"))
#: ``docs/page.md, "Heading"`` or ``README.md, "Heading"``; the quotes may be escaped
#: (JSON) and the title may wrap onto the next docstring or comment line.
CITATION = re.compile(r'(?<![\w/.-])(README\.md|docs/[\w.-]+\.md),?\s+(?:#:?\s+)?\\?"([^"\\]+)\\?"')
#: The form used before the pages moved to docs/: ``README, "Heading"`` or ``README "Heading"``.
OLD_CITATION = re.compile(r'\bREADME(?!\.md)(?:,\s*|\s+)(?:#:?\s+)?\\?"')


def _checked_files() -> list[Path]:
    files = []
    for folder in CHECKED_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in TEXT_SUFFIXES and path.is_file() and "__pycache__" not in path.parts:
                files.append(path)
    return files


def citations(text: str) -> list[tuple[int, str, str]]:
    """``(line, page, title)`` of every citation, a wrapped title joined on one line."""
    found = []
    for match in CITATION.finditer(text):
        title = re.sub(r"\s*\n\s*(?:#:?\s*)?", " ", match.group(2)).strip()
        found.append((text.count("\n", 0, match.start()) + 1, match.group(1), title))
    return found


def citation_problem(page: str, title: str) -> str | None:
    """Why ``page, "title"`` cites nothing (``None`` when it is fine)."""
    path = ROOT / page
    if not path.is_file():
        return f"no page {page}"
    if title not in headings(path.read_text(encoding="utf-8")):
        return f"{page} has no heading {title!r}"
    return None


FILES = _checked_files()
THIS_FILE = Path(__file__).resolve()


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
    assert not offenders, "cite a page under docs/ or a module instead:\n" + "\n".join(offenders)


def test_every_citation_names_an_existing_page_and_heading() -> None:
    found = [
        (path, number, page, title)
        for path in FILES
        if path != THIS_FILE  # its docstring and parametrized cases show the forms
        for number, page, title in citations(path.read_text(encoding="utf-8"))
    ]
    assert len(found) > 100  # the scan finds the citations the code makes
    assert {page for _, _, page, _ in found} > {"docs/measures.md", "docs/input-formats.md"}
    problems = [
        f"{path.relative_to(ROOT)}:{number}: {problem}"
        for path, number, page, title in found
        if (problem := citation_problem(page, title))
    ]
    assert not problems, "\n".join(problems)


def test_no_citation_in_the_old_form_without_a_page() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, match.start()) + 1}"
        for path in FILES
        if path != THIS_FILE
        for text in [path.read_text(encoding="utf-8")]
        for match in OLD_CITATION.finditer(text)
    ]
    assert not offenders, 'cite the page, e.g. docs/measures.md, "RDQ":\n' + "\n".join(offenders)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '(docs/input-formats.md, "Input formats").',
            [(1, "docs/input-formats.md", "Input formats")],
        ),
        ('see README.md, "Quick start"', [(1, "README.md", "Quick start")]),
        (
            'x\n(docs/tiers-and-audit.md, "How\n    tiers are decided and audited")',
            [(2, "docs/tiers-and-audit.md", "How tiers are decided and audited")],
        ),
        (
            '#: grow (docs/tiers-and-audit.md,\n#: "Build routes").',
            [(1, "docs/tiers-and-audit.md", "Build routes")],
        ),
        (
            '"source": "docs/measures.md, \\"Reference values\\" (k = 5)"',
            [(1, "docs/measures.md", "Reference values")],
        ),
        ("the README's Development section", []),
        ("see docs/measures.md for the measures", []),
    ],
)
def test_citations_are_found_in_every_written_form(
    text: str, expected: list[tuple[int, str, str]]
) -> None:
    assert citations(text) == expected


@pytest.mark.parametrize(
    ("text", "old"),
    [
        ('(README, "Input formats")', True),
        ('README "Comparing many systems"', True),
        ('#: (README,\n#: "Build routes")', True),
        ('(README.md, "Quick start")', False),
        ("the README's quick start", False),
    ],
)
def test_the_old_form_is_recognised(text: str, old: bool) -> None:
    assert bool(OLD_CITATION.search(text)) is old


def test_a_wrong_page_or_heading_is_reported() -> None:
    assert citation_problem("docs/measures.md", "RDQ") is None
    assert citation_problem("README.md", "Quick start") is None
    assert citation_problem("docs/measures.md", "No such heading") is not None
    assert citation_problem("docs/no-such-page.md", "RDQ") == "no page docs/no-such-page.md"


def test_headings_ignore_comments_inside_code_blocks() -> None:
    text = "# Title\n\n## Measures\n\n```python\n# not a heading\n```\n### RDQ\n"
    assert headings(text) == ["Title", "Measures", "RDQ"]
