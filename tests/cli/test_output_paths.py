"""Outputs never overwrite what a command reads or stores, and are never left half-written.

Every output option (``report -o``, ``orl export -o``, ``results export -o``,
``power --plot``; the pipeline's ``[report] path`` is in tests/cli/test_limits.py)
refuses the SQLite store and its companions (also through a symbolic link), a
directory and an unwritable place with one line, and the store stays readable.
A write that fails half-way leaves the previous file untouched and no
temporary file behind.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orlbuild.errors import ConfigError
from orlbuild.output_files import write_output
from tests.store_cli import cli, cli_json

LISTWISE = "query\titem\trank\n" + "".join(
    f"q{q}\t{item}\t{rank}\n" for q in range(1, 5) for rank, item in enumerate("abcd", 1)
)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """An SQLite store with a build ``b``, two systems and a saved evaluation (id 1)."""
    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    (tmp_path / "l.tsv").write_text(LISTWISE)
    steps = [("db", "upgrade"), ("ingest", "listwise", str(tmp_path / "l.tsv"))]
    for index, order in enumerate(("abcd", "dcba")):
        run = tmp_path / f"r{index}.trec"
        run.write_text(
            "".join(f"q{q} Q0 {d} {r} {9 - r} t\n" for q in range(1, 5) for r, d in
                    enumerate(order, 1))
        )  # fmt: skip
        steps.append(("ingest", "run", str(run), "--system", f"s{index}"))
    steps += [
        ("build", "--source", "listwise", "--name", "b"),
        ("score", "--build", "b", "--system", "s0", "-m", "nDCG@3", "--save"),
    ]
    for step in steps:
        code, _, err = cli(url, *step)
        assert code == 0, err
    return path


def _commands(target: Path) -> dict[str, tuple[str, ...]]:
    return {
        "report -o": ("report", "-b", "b", "-o", str(target), "--permutations", "50"),
        "orl export -o": ("orl", "export", "b", "-o", str(target)),
        "results export -o": ("results", "export", "1", "-o", str(target)),
        "power --plot": (
            "power", "-b", "b", "-s", "s0", "-s", "s1", "-m", "nDCG@3", "--budgets", "2",
            "--subsamples", "3", "--permutations", "50", "--plot", str(target),
        ),
    }  # fmt: skip


COMMANDS = list(_commands(Path("x")))


def _refused(store: Path, command: str, target: Path, *words: str) -> None:
    url = f"sqlite:///{store}"
    before = store.read_bytes()
    code, out, err = cli(url, *_commands(target)[command])
    assert code == 1 and out == "" and "Traceback" not in err, err
    assert err.startswith("Error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, err
    assert store.read_bytes() == before
    assert cli_json(url, "orl", "list")[0]["name"] == "b"  # still a readable store


@pytest.mark.parametrize("command", COMMANDS)
def test_the_store_is_refused(store: Path, command: str) -> None:
    _refused(store, command, store, "refusing to write", "the store")


@pytest.mark.parametrize("command", COMMANDS)
def test_the_store_through_a_link_or_a_companion_is_refused(
    store: Path, command: str, tmp_path: Path
) -> None:
    link = tmp_path / "innocent.html"
    link.symlink_to(store)
    _refused(store, command, link, "the store")
    _refused(store, command, Path(f"{store}-wal"), "the store")
    relative = Path(os.path.relpath(store, Path.cwd()))
    _refused(store, command, relative.parent / "." / relative.name, "the store")


@pytest.mark.parametrize("command", COMMANDS)
def test_a_directory_or_an_impossible_folder_is_one_line(
    store: Path, command: str, tmp_path: Path
) -> None:
    _refused(store, command, tmp_path, "is a directory")
    _refused(store, command, tmp_path / "l.tsv" / "out", "not a directory")


def test_a_failed_write_leaves_the_previous_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("the previous report")

    def broken(stream: object) -> None:
        stream.write(b"half a rep")  # type: ignore[attr-defined]
        raise OSError(28, "No space left on device")

    with pytest.raises(ConfigError, match="No space left on device"):
        write_output(target, broken)
    assert target.read_text() == "the previous report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_an_output_keeps_the_permissions_of_the_file_it_replaces(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("{}")
    target.chmod(0o640)
    write_output(target, "[]")
    assert target.read_text() == "[]" and (target.stat().st_mode & 0o777) == 0o640
    fresh = write_output(tmp_path / "new.json", b"{}")
    umask = os.umask(0)
    os.umask(umask)
    assert (fresh.stat().st_mode & 0o777) == 0o666 & ~umask
