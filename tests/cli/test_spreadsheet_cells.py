"""CSV and TSV outputs meant for people never carry a cell a spreadsheet would run (issue 39).

Ids and names beginning with ``=``, ``+``, ``-`` or ``@`` were written only CSV-quoted,
which does not stop a spreadsheet from running ``=HYPERLINK(...)``. They now get a leading
``'`` (OWASP) unless ``--raw-cells``; qrels and trec-prefs stay byte-exact.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd
import pytest

from orlbuild.orl_io.cells import safe_cell, safe_frame
from tests.store_cli import cli

EVIL = ["=HYPERLINK(1)", "+cmd|x", "@SUM(A1)", "-x", "\tt"]
ITEMS = [*EVIL, "plain"]


@pytest.fixture
def store(db_url: str, tmp_path: Path) -> str:
    """Listwise build ``b`` over query ``=q`` with formula-like items; a saved evaluation 1."""
    ranked = "".join(f"=q\t{item}\t{rank}\n" for rank, item in enumerate(ITEMS, 1))
    (tmp_path / "l.tsv").write_text("query\titem\trank\n" + ranked.replace("\tt\t", "tt\t"))
    (tmp_path / "r.trec").write_text(
        "".join(f"=q Q0 {item.strip()} {r} {9 - r} t\n" for r, item in enumerate(ITEMS, 1))
    )
    steps = [
        ("db", "upgrade"),
        ("ingest", "listwise", str(tmp_path / "l.tsv")),
        ("ingest", "run", str(tmp_path / "r.trec"), "--system", "=sys"),
        ("build", "--source", "listwise", "--name", "b"),
        ("score", "--build", "b", "--system", "=sys", "-m", "nDCG@3", "--save"),
    ]
    for step in steps:
        code, _, err = cli(db_url, *step)
        assert code == 0, (step, err)
    return db_url


def _cells(text: str, delimiter: str = ",") -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text), delimiter=delimiter) for cell in row]


def _risky(cells: list[str]) -> list[str]:
    return [c for c in cells if c[:1] in ("=", "+", "@", "\t") or (c.startswith("-") and c != "-x")]


OUTPUTS = {
    "orl show": ("orl", "show", "b", "--format", "csv"),
    "orl export tsv": ("orl", "export", "b", "--format", "tsv"),
    "results list": ("results", "list", "--format", "csv"),
    "results export": ("results", "export", "1"),
    "results show": ("results", "show", "1", "--per-query", "--format", "csv"),
    "audit": ("audit", "b", "--format", "csv"),
}


@pytest.mark.parametrize("output", OUTPUTS)
def test_formula_cells_are_prefixed_by_default_and_raw_on_request(store: str, output: str) -> None:
    args = OUTPUTS[output]
    delimiter = "\t" if "tsv" in output else ","
    code, out, err = cli(store, *args)
    assert code == 0, err
    cells = _cells(out, delimiter)
    assert not [c for c in cells if c[:1] in ("=", "+", "@")], cells
    assert any(c.startswith("'=") for c in cells), cells
    code, raw, err = cli(store, *args, "--raw-cells")
    assert code == 0, err
    assert any(c.startswith("=") for c in _cells(raw, delimiter)), raw
    assert raw.replace("'", "") == out.replace("'", "")  # the same table otherwise


@pytest.mark.parametrize("fmt", ["qrels", "trec-prefs", "json"])
def test_machine_formats_stay_byte_exact(store: str, fmt: str) -> None:
    code, out, err = cli(store, "orl", "export", "b", "--format", fmt, "--all-orders")
    assert code == 0, err
    assert "=HYPERLINK(1)" in out and "'=" not in out and "'+" not in out


def test_quality_csv_is_prefixed(db_url: str, tmp_path: Path) -> None:
    rows = "".join(f"q1\t=ann{a}\tx\ty\t0\nq1\t=ann{a}\ty\tz\t0\n" for a in range(3))
    (tmp_path / "p.tsv").write_text("query\tannotator\twinner\tloser\ttie\n" + rows)
    for step in (
        ("db", "upgrade"),
        ("ingest", "pairwise", str(tmp_path / "p.tsv")),
        ("build", "--source", "pairwise", "--name", "p"),
    ):
        code, _, err = cli(db_url, *step)
        assert code == 0, err
    code, out, err = cli(db_url, "quality", "p", "--format", "csv")
    assert code == 0, err
    assert "'=ann0" in out and not [c for c in _cells(out) if c.startswith("=")]
    code, out, _ = cli(db_url, "quality", "p", "--format", "csv", "--raw-cells")
    assert "\n=ann0," in out or ",=ann0," in out or out.startswith("=ann0")


def test_safe_cell_follows_the_owasp_rule() -> None:
    assert [safe_cell(v) for v in EVIL] == ["'" + v for v in EVIL]
    assert safe_cell("\rx") == "'\rx"
    for kept in ("-1.5", "+3", "-2e-5", "doc-1", "a=b", "", 7, -1.0, None):
        assert safe_cell(kept) == kept
    frame = pd.DataFrame({"=col": ["=a", "b"], "n": [-1, 2]})
    safe = safe_frame(frame)
    assert list(safe.columns) == ["'=col", "n"] and safe["'=col"].tolist() == ["'=a", "b"]
    assert frame["=col"].tolist() == ["=a", "b"]  # the input is not changed
    plain = pd.DataFrame({"a": ["x"]})
    assert safe_frame(plain) is plain


def test_trec_prefs_without_preferences_warns_and_names_all_orders(
    db_url: str, tmp_path: Path
) -> None:
    """Three annotators agree on x > y > z: the model tiers state orders no test backs."""
    rows = "".join(f"q1\ta{a}\tx\ty\t0\nq1\ta{a}\ty\tz\t0\nq1\ta{a}\tx\tz\t0\n" for a in range(3))
    (tmp_path / "p.tsv").write_text("query\tannotator\twinner\tloser\ttie\n" + rows)
    for step in (
        ("db", "upgrade"),
        ("ingest", "pairwise", str(tmp_path / "p.tsv")),
        ("build", "--source", "pairwise", "--name", "p", "--tiering", "model"),
    ):
        code, _, err = cli(db_url, *step)
        assert code == 0, err
    code, out, err = cli(db_url, "orl", "export", "p", "--format", "trec-prefs")
    assert code == 0 and {line.split()[-1] for line in out.splitlines()} == {"1"}, err
    assert "states no preference" in err and "--all-orders" in err and err.count("\n") == 1
    code, out, err = cli(db_url, "orl", "export", "p", "--format", "trec-prefs", "--all-orders")
    assert code == 0 and "states no preference" not in err, err
    assert len({line.split()[-1] for line in out.splitlines()}) > 1
