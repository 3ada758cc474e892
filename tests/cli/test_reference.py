"""docs/commands.md is the generator's output, and documents every command and option."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer.main

from orlbuild.cli.main import app, load_command
from orlbuild.cli.reference import command_paths, render_reference

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "commands.md"
REGENERATE = "python -m orlbuild.cli.reference > docs/commands.md"


def _command(path: tuple[str, ...]) -> Any:
    command = load_command(path[0])
    for name in path[1:]:
        command = command.commands[name]
    return command


def _names(command: Any) -> list[str]:
    """What a reader types for each parameter: every flag of an option, an argument's NAME."""
    names: list[str] = []
    for param in command.params:
        if getattr(param, "hidden", False):
            continue
        if param.param_type_name == "argument":
            names.append(param.metavar or param.name.upper())
        else:
            names += [*param.opts, *param.secondary_opts]
    return names


def _sections(text: str) -> dict[str, str]:
    """``"orlbuild orl show"`` -> the text of its ``## `orlbuild orl show` `` section."""
    parts = re.split(r"^## `([^`]+)`\s*$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def undocumented(text: str) -> list[str]:
    """Commands without a section, and parameters missing from their command's table."""
    sections = _sections(text)
    wanted = [("orlbuild", typer.main.get_group(app))]
    wanted += [("orlbuild " + " ".join(path), _command(path)) for path in command_paths()]
    missing: list[str] = []
    for title, command in wanted:
        section = sections.get(title)
        if section is None:
            missing.append(f"command {title!r}")
            continue
        rows = [line for line in section.splitlines() if line.startswith("| ")]
        for name in _names(command):
            if not any(f"`{name}`" in row for row in rows):
                missing.append(f"{title}: {name}")
    return missing


def test_committed_reference_is_the_generators_output() -> None:
    assert PAGE.read_text(encoding="utf-8") == render_reference(), (
        f"docs/commands.md is stale: regenerate it with `{REGENERATE}` and commit it"
    )


def test_every_command_and_option_is_documented() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert len(_sections(text)) > 30  # commands and sub-commands, not only the top level
    assert not undocumented(text), "\n".join(undocumented(text))


def test_the_check_finds_a_missing_option_and_a_missing_command() -> None:
    text = PAGE.read_text(encoding="utf-8")
    without_option = "\n".join(
        line for line in text.splitlines() if not line.startswith("| `--mc-draws`")
    )
    assert undocumented(without_option) == ["orlbuild build: --mc-draws"]
    without_command = text.replace("## `orlbuild orl show`", "## `orlbuild orl shown`")
    assert undocumented(without_command) == ["command 'orlbuild orl show'"]


def test_every_walked_command_has_help_text_and_usage() -> None:
    sections = _sections(PAGE.read_text(encoding="utf-8"))
    for path in command_paths():
        title = "orlbuild " + " ".join(path)
        assert f"Usage: {title}" in sections[title], title
