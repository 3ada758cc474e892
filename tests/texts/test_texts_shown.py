"""``orl show`` and ``audit decisions`` print the items' texts beside them (``--text``, the
default when texts are stored; ``--no-text``) (issue 33)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.builders.simulation import simulate_pairwise, tiered_strengths
from tests.builders.store_data import store_judgments
from tests.store_cli import cli

STRENGTHS, _ = tiered_strengths([2, 2], 1.0)
LONG = "A very long passage about [bold]markup[/bold] and <script>x</script> " * 3


@pytest.fixture
def built(migrated_db_url: str) -> tuple[str, list[str]]:
    rng = np.random.default_rng(3)
    frame = pd.concat([simulate_pairwise(rng, STRENGTHS, 6, query="q1")], ignore_index=True)
    store_judgments(migrated_db_url, "pairwise", frame)
    code, _, err = cli(migrated_db_url, "build", "--source", "pairwise", "--name", "b")
    assert code == 0, err
    return migrated_db_url, sorted(set(frame["winner"]) | set(frame["loser"]))


def _with_texts(url: str, items: list[str], tmp_path: Path) -> None:
    path = tmp_path / "c.tsv"
    path.write_text(f"{items[0]}\t{LONG}\n{items[1]}\tshort one\n")
    code, _, err = cli(url, "ingest", "text", str(path), "--of", "items")
    assert code == 0, err


def test_orl_show_prints_shortened_texts(built: tuple[str, list[str]], tmp_path: Path) -> None:
    url, items = built
    code, before, err = cli(url, "orl", "show", "b", "--format", "csv")
    assert code == 0, err
    assert "text" not in before.splitlines()[0].split(",")  # nothing stored: no column
    _with_texts(url, items, tmp_path)
    code, out, err = cli(url, "orl", "show", "b", "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    by_item = {r["item"]: r["text"] for r in rows}
    assert by_item[items[1]] == "short one"
    assert by_item[items[0]].endswith("…") and len(by_item[items[0]]) == 60
    assert by_item[items[0]].startswith("A very long passage about [bold]markup[/bold]")
    assert by_item[items[2]] == ""
    code, table, err = cli(url, "orl", "show", "b")
    assert code == 0, err
    assert "[bold]markup" in table  # rich markup in a text is printed, not interpreted
    code, out, err = cli(url, "orl", "show", "b", "--format", "csv", "--no-text")
    assert code == 0, err
    assert out == before
    doc = json.loads(cli(url, "orl", "show", "b", "--format", "json")[1])
    assert doc["texts"][items[1]] == "short one"


def test_audit_prints_the_texts_beside_leader_and_item(
    built: tuple[str, list[str]], tmp_path: Path
) -> None:
    url, items = built
    _with_texts(url, items, tmp_path)
    code, out, err = cli(url, "audit", "decisions", "b", "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows and {"leader_text", "item_text"} <= set(rows[0])
    header = out.splitlines()[0].split(",")
    assert header.index("item_text") == header.index("item") + 1
    texts = {"short one", ""} | {LONG[:39] + "…"}
    assert {r["item_text"] for r in rows} <= texts
    for row in rows:
        expected = {items[0]: LONG[:39] + "…", items[1]: "short one"}.get(row["item"], "")
        assert row["item_text"] == expected
    code, table, err = cli(url, "audit", "decisions", "b")
    assert code == 0, err
    assert "item_text" in table
    code, out, err = cli(url, "audit", "decisions", "b", "--format", "csv", "--no-text")
    assert code == 0, err
    assert "item_text" not in out.splitlines()[0]
