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


@pytest.mark.parametrize("command", COMMANDS)
def test_a_fifo_a_device_or_a_socket_is_refused_and_left_in_place(
    store: Path, command: str, tmp_path: Path
) -> None:
    import socket
    import stat

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    _refused(store, command, fifo, "is a FIFO", "not a regular file")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    device = tmp_path / "null-link"
    device.symlink_to("/dev/null")
    _refused(store, command, device, "/dev/null", "character device")
    assert device.is_symlink() and stat.S_ISCHR(os.stat(device).st_mode)
    sock_path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        _refused(store, command, sock_path, "is a socket")
    (tmp_path / "folder").mkdir()
    _refused(store, command, tmp_path / "folder", "is a directory")


@pytest.mark.parametrize("command", COMMANDS)
def test_a_link_to_a_regular_file_is_written_through(
    store: Path, command: str, tmp_path: Path
) -> None:
    real = tmp_path / "elsewhere" / "real.out"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "link.out"
    link.symlink_to(real)
    code, _, err = cli(f"sqlite:///{store}", *_commands(link)[command])
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() != b"old" and real.stat().st_size > 0


@pytest.mark.parametrize("command", COMMANDS)
def test_a_stored_input_is_refused_by_path_and_by_content(
    store: Path, command: str, tmp_path: Path
) -> None:
    listwise = tmp_path / "l.tsv"
    _refused(store, command, listwise, "refusing to write", "the input of batch 1", "--force")
    assert listwise.read_text() == LISTWISE
    run = tmp_path / "r1.trec"
    _refused(store, command, run, "the input of batch 3 (run)")
    copy = tmp_path / "copy-of-l.tsv"
    copy.write_text(LISTWISE)
    _refused(store, command, copy, "the input of batch 1", "same content")
    assert copy.read_text() == LISTWISE
    run_copy = tmp_path / "copy.trec"
    run_copy.write_bytes(run.read_bytes())
    _refused(store, command, run_copy, "batch 3", "same content")


@pytest.mark.parametrize("command", COMMANDS)
def test_force_overwrites_an_input_and_names_it(store: Path, command: str, tmp_path: Path) -> None:
    copy = tmp_path / "copy-of-l.tsv"
    copy.write_text(LISTWISE)
    code, _, err = cli(f"sqlite:///{store}", *_commands(copy)[command], "--force")
    assert code == 0, err
    assert "--force: overwriting" in err and "the input of batch 1" in err, err
    assert copy.read_bytes() != LISTWISE.encode()
    # the store is protected even with --force
    _refused_forced = cli(f"sqlite:///{store}", *_commands(store)[command], "--force")
    assert _refused_forced[0] == 1 and "the store" in _refused_forced[2]


def test_a_stored_input_is_refused_on_postgresql_too(db_url: str, tmp_path: Path) -> None:
    pairs = tmp_path / "pw.tsv"
    pairs.write_text("query\titem_a\titem_b\twinner\n" + "q1\tx\ty\tx\nq1\ty\tz\ty\n" * 3)
    build = ("build", "--source", "pairwise", "--name", "p")
    for step in (("db", "upgrade"), ("ingest", "pairwise", str(pairs)), build):
        code, _, err = cli(db_url, *step)
        assert code == 0, err
    before = pairs.read_bytes()
    code, out, err = cli(db_url, "orl", "export", "p", "-o", str(pairs))
    assert code == 1 and out == "" and "the input of batch" in err and err.count("\n") == 1, err
    assert pairs.read_bytes() == before
