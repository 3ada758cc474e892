"""The README is a short guide; every page under docs/ is reachable; no relative link is broken."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_pages import DOCS, README, ROOT, anchor, headings, pages

MAX_README_LINES = 400
#: ``[text](target)``, not an image; the target up to the closing parenthesis.
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def relative_links(path: Path) -> list[tuple[int, str]]:
    """``(line, target)`` of every link in ``path`` that is not a URL (code blocks skipped)."""
    found: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if not re.match(r"[a-z]+:", target):
                found.append((number, target))
    return found


def link_problem(source: Path, target: str) -> str | None:
    """Why ``target``, linked from ``source``, leads nowhere (``None`` when it resolves)."""
    file_part, _, fragment = target.partition("#")
    path = (source.parent / file_part).resolve() if file_part else source
    if not path.exists():
        return f"no file {file_part}"
    if fragment:
        if path.suffix != ".md":
            return f"anchor #{fragment} into a file that is not Markdown"
        anchors = {anchor(title) for title in headings(path.read_text(encoding="utf-8"))}
        if fragment not in anchors:
            return f"{path.name} has no heading with anchor #{fragment}"
    return None


def test_readme_is_a_short_guide() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; move detail to docs/"
    titles = headings("\n".join(lines))
    for wanted in ("Quick start", "The sample pipeline, step by step", "Where to read more"):
        assert wanted in titles


def test_every_docs_page_is_linked_from_the_readme_or_the_index() -> None:
    linked = {
        (source.parent / target.partition("#")[0]).resolve()
        for source in (README, DOCS / "index.md")
        for _, target in relative_links(source)
        if target.partition("#")[0]
    }
    pages_under_docs = [page for page in sorted(DOCS.glob("*.md")) if page.name != "index.md"]
    assert len(pages_under_docs) >= 12
    unlinked = [page.name for page in pages_under_docs if page.resolve() not in linked]
    assert not unlinked, f"link these from README.md or docs/index.md: {unlinked}"
    assert (DOCS / "index.md").resolve() in linked


def test_docs_holds_only_markdown_pages() -> None:
    others = [path.name for path in DOCS.iterdir() if path.suffix != ".md"]
    assert not others


@pytest.mark.parametrize("page", pages(), ids=lambda page: page.name)
def test_relative_links_point_to_existing_files_and_headings(page: Path) -> None:
    problems = [
        f"{page.relative_to(ROOT)}:{number}: ({target}) {problem}"
        for number, target in relative_links(page)
        if (problem := link_problem(page, target))
    ]
    assert not problems, "\n".join(problems)


def test_the_link_check_can_fail(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n## Some heading\n\n[x](other.md) [y](#some-heading) [z](#nope)\n")
    (tmp_path / "other.md").write_text("# Other\n")
    assert relative_links(page) == [(5, "other.md"), (5, "#some-heading"), (5, "#nope")]
    assert link_problem(page, "other.md") is None
    assert link_problem(page, "#some-heading") is None
    assert link_problem(page, "#nope") == "page.md has no heading with anchor #nope"
    assert link_problem(page, "missing.md") == "no file missing.md"
    assert link_problem(page, "other.md#other") is None


def test_anchors_follow_github() -> None:
    assert anchor("The sample pipeline, step by step") == "the-sample-pipeline-step-by-step"
    assert anchor("Speed of `orlbuild eval`") == "speed-of-orlbuild-eval"
    assert anchor("RDQ in ir_measures and PyTerrier") == "rdq-in-ir_measures-and-pyterrier"
