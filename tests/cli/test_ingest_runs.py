"""``orlbuild ingest run FILE...``: many runs in one call (docs/input-formats.md, "System names
of runs").

Every file is named and checked before any is stored; each is then stored in
its own transaction. A file that fails while being stored leaves the runs
before it stored, and the message says which are stored and which are not.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import orlbuild.cli.ingest as ingest_cli
import orlbuild.services.run_ingests as run_ingests
from orlbuild.store import list_systems, load_run
from tests.files import Write
from tests.store_cli import cli, cli_json, one_error_line
from tests.stores import store_engine


def _run(tag: str, queries: tuple[str, ...] = ("q1", "q2"), docs: int = 3) -> str:
    """A TREC run whose every line carries ``tag``."""
    return "".join(f"{q} Q0 d{d} {d + 1} {10 - d}.5 {tag}\n" for q in queries for d in range(docs))


def _run_files(folder: Path, n: int, names: tuple[str, ...] | None = None) -> list[Path]:
    """``n`` runs ``r0.trec``, ``r1.trec``... (or ``NAME.trec``), each tagged with its stem."""
    paths = [folder / f"{name}.trec" for name in (names or [f"r{i}" for i in range(n)])]
    for path in paths:
        path.write_text(_run(path.stem))
    return paths


def _systems(url: str) -> list[str]:
    with store_engine(url) as engine:
        return list_systems(engine)


def _batches(url: str) -> list[tuple[str, str]]:
    return [(b["file_name"], b["system"]) for b in cli_json(url, "batches", "list")]


def test_systems_from_tags(migrated_db_url: str, tmp_path: Path) -> None:
    paths = []
    for name, tag in (("input.bm25.gz", "bm25"), ("input.dense", "dense"), ("x.run", "t5")):
        path = tmp_path / name
        data = _run(tag).encode()
        path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
        paths.append(str(path))
    code, out, err = cli(migrated_db_url, "ingest", "run", *paths, "--system-from", "tag")
    assert code == 0, err
    assert out.splitlines() == [
        f"stored 6 run rows from {path} as batch {batch} (system {tag!r}; "
        "read as trec: query Q0 item rank score tag)"
        for batch, (path, tag) in enumerate(
            zip(paths, ("bm25", "dense", "t5"), strict=True), start=1
        )
    ]
    assert _systems(migrated_db_url) == ["bm25", "dense", "t5"]
    assert [system for _, system in _batches(migrated_db_url)] == ["bm25", "dense", "t5"]
    with store_engine(migrated_db_url) as engine:
        run = load_run(engine, "default", "dense")
    assert len(run) == 6 and set(run["query"]) == {"q1", "q2"}


def test_systems_from_stems_without_compression_suffix(
    migrated_db_url: str, tmp_path: Path
) -> None:
    (tmp_path / "bm25.trec.gz").write_bytes(gzip.compress(_run("same").encode()))
    (tmp_path / "dense.trec").write_text(_run("same"))
    (tmp_path / "tabular.tsv").write_text("query\titem\trank\nq1\td1\t1\nq1\td2\t2\n")
    files = [str(tmp_path / n) for n in ("bm25.trec.gz", "dense.trec", "tabular.tsv")]
    code, _, err = cli(migrated_db_url, "ingest", "run", *files, "--system-from", "stem")
    assert code == 0, err
    assert _systems(migrated_db_url) == ["bm25", "dense", "tabular"]


def test_conflicting_tags_are_one_line_and_nothing_is_stored(
    migrated_db_url: str, write_file: Write
) -> None:
    good = write_file("good.trec", _run("good"))
    mixed = write_file("mixed.trec", _run("alpha", ("q1",)) + _run("beta", ("q2",)))
    code, out, err = cli(
        migrated_db_url, "ingest", "run", str(good), str(mixed), "--system-from", "tag"
    )
    line = one_error_line(code, out, err)
    assert f"{mixed}, line 4:" in line
    assert "'alpha' (line 1) and 'beta'" in line
    assert _batches(migrated_db_url) == []  # not even the good file before it


def test_a_tabular_run_names_its_system_by_its_tag_column(
    migrated_db_url: str, write_file: Write
) -> None:
    tagged = write_file("a.tsv", "query\titem\trank\ttag\nq1\td1\t1\tsysA\nq1\td2\t2\tsysA\n")
    untagged = write_file("b.tsv", "query\titem\trank\nq1\td1\t1\n")
    code, out, err = cli(
        migrated_db_url, "ingest", "run", str(tagged), str(untagged), "--system-from", "tag"
    )
    line = one_error_line(code, out, err)
    assert f"{untagged}: the run has no tag column" in line
    assert _batches(migrated_db_url) == []
    code, _, err = cli(migrated_db_url, "ingest", "run", str(tagged), "--system-from", "tag")
    assert code == 0, err
    assert _systems(migrated_db_url) == ["sysA"]
    mixed = write_file("c.tsv", "query\titem\trank\ttag\nq1\td1\t1\tx\nq1\td2\t2\ty\n")
    code, out, err = cli(migrated_db_url, "ingest", "run", str(mixed), "--system-from", "tag")
    assert f"{mixed}, line 3: two run tags in one file: 'x' (line 2) and 'y'" in (
        one_error_line(code, out, err)
    )


@pytest.mark.parametrize("how", ["tag", "stem"])
def test_two_files_of_one_system_stop_before_anything_is_stored(
    migrated_db_url: str, tmp_path: Path, how: str
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = tmp_path / "a" / "run.trec", tmp_path / "b" / "run.trec"
    first.write_text(_run("same"))
    second.write_text(_run("same", ("q3",)))
    code, out, err = cli(
        migrated_db_url, "ingest", "run", str(first), str(second), "--system-from", how
    )
    line = one_error_line(code, out, err)
    expected = "same" if how == "tag" else "run"
    assert f"{first} and {second} both name system {expected!r}" in line
    assert "nothing was stored" in line
    assert _batches(migrated_db_url) == []


def test_a_bad_file_stops_the_call_before_anything_is_stored(
    migrated_db_url: str, tmp_path: Path
) -> None:
    files = list(map(str, _run_files(tmp_path, 3)))
    bad = Path(files[2])
    bad.write_text(_run("r2") + "q9 Q0 d1 1.5 3.0 r2\n")
    code, out, err = cli(migrated_db_url, "ingest", "run", *files, "--system-from", "stem")
    line = one_error_line(code, out, err)
    assert f"{bad}, line 7:" in line and "1.5" in line
    assert _batches(migrated_db_url) == []


def test_a_repeated_document_is_checked_with_the_duplicates_option(
    migrated_db_url: str, write_file: Write
) -> None:
    clean = write_file("clean.trec", _run("clean"))
    repeated = write_file("repeated.trec", _run("repeated") + "q1 Q0 d0 9 0.5 repeated\n")
    files = [str(clean), str(repeated)]
    code, out, err = cli(migrated_db_url, "ingest", "run", *files, "--system-from", "stem")
    assert "item repeated in the run" in one_error_line(code, out, err)
    assert _batches(migrated_db_url) == []
    code, out, err = cli(
        migrated_db_url,
        "ingest",
        "run",
        *files,
        "--system-from",
        "stem",
        "--duplicates",
        "keep-first",
    )
    assert code == 0, err
    assert "skipped 1 repeated rows" in out.splitlines()[1]


def test_a_file_the_store_refuses_names_what_is_stored_and_what_not(
    migrated_db_url: str, tmp_path: Path, write_file: Write
) -> None:
    """The check cannot see the store: a run overlapping a stored run of its system is refused
    while storing; the runs before it stay stored, and the message lists both sides."""
    old = write_file("old.trec", _run("b", docs=2))
    assert cli(migrated_db_url, "ingest", "run", str(old), "--system", "b")[0] == 0
    files = _run_files(tmp_path, 3, ("a", "b", "c"))
    code, out, err = cli(
        migrated_db_url, "ingest", "run", *map(str, files), "--system-from", "stem"
    )
    line = one_error_line(code, out, err)
    assert "system 'b' already has entries for some of these (query, item) pairs" in line
    assert f"stored: {files[0]} (system 'a', batch 2); not stored: {files[1]}, {files[2]}" in line
    assert _systems(migrated_db_url) == ["a", "b"]
    assert [name for name, _ in _batches(migrated_db_url)] == [str(old), str(files[0])]


def test_the_same_call_again_stores_nothing_new(migrated_db_url: str, tmp_path: Path) -> None:
    files = list(map(str, _run_files(tmp_path, 2)))
    args = ("ingest", "run", *files, "--system-from", "tag")
    assert cli(migrated_db_url, *args)[0] == 0
    code, out, err = cli(migrated_db_url, *args)
    assert code == 0, err
    assert all("is already stored as batch" in line for line in out.splitlines())
    assert len(_batches(migrated_db_url)) == 2


@pytest.mark.parametrize(
    ("extra", "files", "says"),
    [
        (["--system", "x"], 2, "--system names the one run of one file"),
        (["--system", "x", "--system-from", "tag"], 1, "--system names the one run of one file"),
        ([], 2, "name the system: --system NAME (one file) or --system-from tag|stem"),
        ([], 1, "name the system: --system NAME (one file) or --system-from tag|stem"),
    ],
)
def test_system_options_are_usage_errors(
    migrated_db_url: str, tmp_path: Path, extra: list[str], files: int, says: str
) -> None:
    paths = list(map(str, _run_files(tmp_path, files)))
    code, _, err = cli(migrated_db_url, "ingest", "run", *paths, *extra)
    assert code == 2 and says in " ".join(err.split()).replace("│", "").replace("  ", " ")
    assert _batches(migrated_db_url) == []


def test_standard_input_needs_system(migrated_db_url: str) -> None:
    code, out, err = cli(migrated_db_url, "ingest", "run", "-", "--system-from", "stem")
    assert "standard input ('-') has no file name" in one_error_line(code, out, err)


def test_one_progress_bar_per_phase_over_the_files(
    migrated_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checked files, then stored files, each counted on a bar (standard error)."""
    shown: list[tuple[str, int | None, int]] = []

    @contextmanager
    def recording_bar(total: int | None, description: str, *, quiet: bool = False) -> Iterator[Any]:
        steps = [0]
        yield lambda n: steps.__setitem__(0, steps[0] + n)
        shown.append((description, total, steps[0]))

    monkeypatch.setattr(ingest_cli, "progress_bar", recording_bar)
    files = list(map(str, _run_files(tmp_path, 3)))
    code, out, err = cli(migrated_db_url, "ingest", "run", *files, "--system-from", "tag")
    assert code == 0, err
    assert shown == [("check runs", 3, 3), ("ingest runs", 3, 3)]
    assert len(out.splitlines()) == 3  # standard output holds the outcomes only


def _interrupt_second_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, url: str, *, after_commit: bool
) -> tuple[int, str, list[Path]]:
    """``ingest run`` of three runs with Ctrl-C in the second file's ``ingest_file``: before it
    stores anything, or just after its commit; the exit code, standard error and the files."""
    real = run_ingests.ingest_file
    calls = [0]

    def interrupted_second(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == 2 and not after_commit:
            raise KeyboardInterrupt
        result = real(*args, **kwargs)
        if calls[0] == 2:
            raise KeyboardInterrupt
        return result

    monkeypatch.setattr(run_ingests, "ingest_file", interrupted_second)
    files = _run_files(tmp_path, 3)
    code, _, err = cli(url, "ingest", "run", *map(str, files), "--system-from", "tag")
    return code, err, files


def test_ctrl_c_between_files_says_what_is_stored(
    migrated_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, err, files = _interrupt_second_file(
        monkeypatch, tmp_path, migrated_db_url, after_commit=False
    )
    assert code == 130 and "Traceback" not in err
    assert err.strip() == (
        f"interrupted: stored: {files[0]} (system 'r0', batch 1); not stored: {files[1]}, "
        f"{files[2]} (the same command stores the rest: stored files are skipped as already "
        "stored)"
    )
    assert _systems(migrated_db_url) == ["r0"]


def test_ctrl_c_just_after_a_commit_counts_that_file_as_stored(
    migrated_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interruption lands after the second file's commit, before it is reported."""
    code, err, files = _interrupt_second_file(
        monkeypatch, tmp_path, migrated_db_url, after_commit=True
    )
    assert code == 130
    assert err.strip().startswith(
        f"interrupted: stored: {files[0]} (system 'r0', batch 1), {files[1]} (system 'r1', "
        f"batch 2); not stored: {files[2]} "
    )


def test_ctrl_c_while_checking_stores_nothing(
    migrated_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*_args: Any, **_kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(run_ingests, "check_run_files", interrupted)
    files = _run_files(tmp_path, 2)
    code, _, err = cli(migrated_db_url, "ingest", "run", *map(str, files), "--system-from", "tag")
    assert code == 130 and err.strip() == "interrupted: nothing was stored"
    assert _batches(migrated_db_url) == []
