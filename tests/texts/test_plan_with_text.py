"""``orlbuild plan --with-text``: the plan file carries the texts, is answered from them and
ingests back (issue 33; docs/planning.md, "Judging from a plan file that carries the text")."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.builders.simulation import simulate_pairwise, tiered_strengths
from tests.builders.store_data import store_judgments
from tests.store_cli import cli

STRENGTHS, _ = tiered_strengths([3, 3], 1.5)


@pytest.fixture
def planned_db(migrated_db_url: str, tmp_path: Path) -> str:
    """A pairwise build ``b`` of two queries; every item and one query have a text."""
    rng = np.random.default_rng(5)
    frame = pd.concat(
        [simulate_pairwise(rng, STRENGTHS, 10, query=f"q{k}") for k in range(2)],
        ignore_index=True,
    )
    store_judgments(migrated_db_url, "pairwise", frame)
    code, _, err = cli(migrated_db_url, "build", "--source", "pairwise", "--name", "b")
    assert code == 0, err
    items = sorted(set(frame["winner"]) | set(frame["loser"]))
    texts = tmp_path / "corpus.tsv"
    # a tab inside the text, HTML and runs of spaces: the plan cell is one line
    texts.write_text(
        "".join(f"{i}\tTitle {i}\tText of <b>{i}</b>,  with\ttab\n" for i in items) + "x\tT\tz\n"
    )
    code, out, err = cli(
        migrated_db_url, "ingest", "text", str(texts), "--of", "items", "--format", "title-tsv"
    )
    assert code == 0, err
    assert f"{len(items)} item texts kept, 1 skipped" in out
    queries = tmp_path / "queries.tsv"
    queries.write_text("q0\twhich one is better?\n")
    assert cli(migrated_db_url, "ingest", "text", str(queries), "--of", "queries")[0] == 0
    return migrated_db_url


def test_plan_with_text_is_answered_from_the_file_and_ingests(
    planned_db: str, tmp_path: Path
) -> None:
    path = tmp_path / "plan.tsv"
    code, out, err = cli(planned_db, "plan", "b", "--budget", "12", "--with-text", "-o", str(path))
    assert code == 0, err
    assert "have no stored text" in err  # q1 has none
    plan = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    assert list(plan.columns) == [
        "query",
        "query_text",
        "item_a",
        "item_a_text",
        "item_b",
        "item_b_text",
        "winner",
    ]
    assert len(plan) == 12
    for row in plan.itertuples():
        assert row.item_a_text == f"Title {row.item_a}: Text of <b>{row.item_a}</b>, with tab"
        assert row.item_b_text == f"Title {row.item_b}: Text of <b>{row.item_b}</b>, with tab"
        assert row.query_text == ("which one is better?" if row.query == "q0" else "")
    # the judge reads the texts only: the item whose text names the lower number wins
    number = plan["item_a_text"].str.extract(r"Title \D*(\d+)")[0].astype(int)
    other = plan["item_b_text"].str.extract(r"Title \D*(\d+)")[0].astype(int)
    plan["winner"] = np.where(number < other, "a", "b")
    plan.to_csv(path, sep="\t", index=False)
    code, out, err = cli(planned_db, "ingest", "pairwise", str(path))
    assert code == 0, err
    assert "12" in out
    assert "ignored column(s)" in err and "'query_text'" in err
    code, _, err = cli(planned_db, "build", "--source", "pairwise", "--name", "b")
    assert code == 0, err


def test_jsonl_and_json_carry_the_texts(planned_db: str) -> None:
    code, out, err = cli(
        planned_db, "plan", "b", "--budget", "3", "--with-text", "--format", "jsonl"
    )
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 3
    assert all(r["item_a_text"].startswith(f"Title {r['item_a']}: ") for r in rows)
    code, out, err = cli(
        planned_db, "plan", "b", "--budget", "3", "--with-text", "--format", "json"
    )
    assert code == 0, err
    pairs = json.loads(out)["pairs"]
    assert all(p["text"]["item_b"].startswith(f"Title {p['item_b']}: ") for p in pairs)


def test_without_the_option_the_plan_keeps_the_arena_shape(planned_db: str) -> None:
    code, out, err = cli(planned_db, "plan", "b", "--budget", "2")
    assert code == 0, err
    assert out.splitlines()[0] == "query\titem_a\titem_b\twinner"
