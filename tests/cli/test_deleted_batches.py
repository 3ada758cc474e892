"""Reads of a build whose batches were deleted say so in one line (issue 39).

After ``batches delete --force`` of a batch a build read, ``quality`` reported 0
preferences and ``plan`` "0 settled, 0 open queries" with exit 0 and no notice. Every
command that reads the judgments (``quality``, ``plan``, ``orl show --rank-intervals``)
or shows what was stored from them (``audit BUILD``, ``report``) now names the deleted
batches; those that compute from the judgments exit 1 when none are left. Both backends.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.store_cli import cli, one_error_line


def _pairs(queries: range) -> str:
    rows = ["query\tannotator\twinner\tloser\ttie"]
    for q in queries:
        for a in ("a1", "a2"):
            rows += [f"q{q}\t{a}\tx\ty\t0", f"q{q}\t{a}\ty\tz\t0", f"q{q}\t{a}\tx\tz\t0"]
    return "\n".join(rows) + "\n"


@pytest.fixture
def store(db_url: str, tmp_path: Path) -> str:
    """A pairwise build ``b`` over batch 1 (q0-q2) and batch 2 (q3-q5), and a run."""
    (tmp_path / "p.tsv").write_text(_pairs(range(3)))
    (tmp_path / "q.tsv").write_text(_pairs(range(3, 6)))
    (tmp_path / "r.trec").write_text(
        "".join(f"q{q} Q0 {d} {r} {9 - r} t\n" for q in range(6) for r, d in enumerate("xyz", 1))
    )
    steps = [
        ("db", "upgrade"),
        ("ingest", "pairwise", str(tmp_path / "p.tsv")),
        ("ingest", "pairwise", str(tmp_path / "q.tsv")),
        ("ingest", "run", str(tmp_path / "r.trec"), "--system", "s"),
        ("build", "--source", "pairwise", "--name", "b"),
    ]
    for step in steps:
        code, _, err = cli(db_url, *step)
        assert code == 0, err
    return db_url


def _commands(tmp_path: Path) -> dict[str, tuple[str, ...]]:
    return {
        "quality": ("quality", "b"),
        "plan": ("plan", "b", "--budget", "4"),
        "orl show --rank-intervals": ("orl", "show", "b", "--rank-intervals"),
        "audit": ("audit", "b"),
        "report": ("report", "-b", "b", "-o", str(tmp_path / "r.html"), "--permutations", "20"),
    }


COMPUTED = ("quality", "plan", "orl show --rank-intervals")


def test_no_notice_while_every_batch_is_there(store: str, tmp_path: Path) -> None:
    for args in _commands(tmp_path).values():
        code, _, err = cli(store, *args)
        assert code == 0 and "deleted since" not in err, err


def test_a_partly_deleted_build_says_which_batch_is_gone(store: str, tmp_path: Path) -> None:
    code, _, err = cli(store, "batches", "delete", "2", "--force")
    assert code == 0, err
    for command, args in _commands(tmp_path).items():
        code, _, err = cli(store, *args)
        assert code == 0, (command, err)
        lines = [line for line in err.splitlines() if "deleted since" in line]
        assert len(lines) == 1, (command, err)
        assert "q.tsv (pairwise, 18 rows" in lines[0] and "build 1 read 2 batches" in lines[0]
        if command in COMPUTED:
            assert "only the judgments of batch 1" in lines[0], lines[0]
        else:
            assert "what was stored with the build" in lines[0], lines[0]
    code, out, err = cli(store, "quality", "b", "--format", "json")
    assert code == 0 and '"build": 1' in out


def test_a_build_without_batches_left_refuses_what_needs_them(store: str, tmp_path: Path) -> None:
    for batch in ("1", "2"):
        code, _, err = cli(store, "batches", "delete", batch, "--force")
        assert code == 0, err
    for command, args in _commands(tmp_path).items():
        code, out, err = cli(store, *args)
        if command in COMPUTED:
            line = one_error_line(code, out, err, "deleted since", "p.tsv", "q.tsv")
            assert "cannot be computed" in line and "`orl show 1`" in line
        else:
            assert code == 0, (command, err)
            assert "p.tsv" in err and "what was stored with the build" in err
    assert "deleted since" in (tmp_path / "r.html").read_text()
