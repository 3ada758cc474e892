"""``orlbuild plan``: the plan file round-trips through ingest and build (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from store_cli import cli, cli_json

from tests.builders.simulation import simulate_pairwise, tiered_strengths
from tests.builders.store_data import store_judgments

STRENGTHS, _ = tiered_strengths([3, 3, 3], 1.5)


@pytest.fixture
def planned_db(migrated_db_url: str) -> str:
    rng = np.random.default_rng(11)
    frame = pd.concat(
        [simulate_pairwise(rng, STRENGTHS, 30, query=f"q{k}") for k in range(4)],
        ignore_index=True,
    )
    store_judgments(migrated_db_url, "pairwise", frame)
    code, _, err = cli(migrated_db_url, "build", "--source", "pairwise", "--name", "b")
    assert code == 0, err
    return migrated_db_url


def _decided(url: str, build: str, margin: float | None = None) -> int:
    """Pairs separated or shown equivalent, over every query of ``build``."""
    extra = [] if margin is None else ["--margin", str(margin)]
    doc = cli_json(url, "plan", build, "--budget", "0", *extra)
    states = [q["pair_states"] for q in doc["queries"].values()]
    return sum(s["separated"] + s["equivalent"] for s in states)


def _fill(path: Path, rng: np.random.Generator) -> None:
    """An annotator answers every planned pair from the true Bradley-Terry strengths."""
    plan = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    assert list(plan.columns) == ["query", "item_a", "item_b", "winner"]
    assert (plan["winner"] == "").all()
    a = plan["item_a"].str[1:].astype(int).to_numpy()
    b = plan["item_b"].str[1:].astype(int).to_numpy()
    a_wins = rng.random(len(plan)) < expit(STRENGTHS[a] - STRENGTHS[b])
    plan["winner"] = np.where(a_wins, "a", "b")
    plan.to_csv(path, sep="\t", index=False)


def test_plan_fill_ingest_build_decides_more(planned_db: str, tmp_path: Path) -> None:
    url = planned_db
    before = _decided(url, "b")
    path = tmp_path / "plan.tsv"
    code, out, err = cli(url, "plan", "b", "--budget", "120", "--seed", "4", "-o", str(path))
    assert code == 0, err
    assert out == "" and "comparisons proposed" in err
    _fill(path, np.random.default_rng(0))
    code, _, err = cli(url, "ingest", "pairwise", str(path))
    assert code == 0, err
    code, _, err = cli(url, "build", "--source", "pairwise", "--name", "b")
    assert code == 0, err
    assert _decided(url, "b") > before


def test_json_document_and_status_only(planned_db: str) -> None:
    doc = cli_json(planned_db, "plan", "b", "--budget", "10", "--max-per-query", "3")
    assert set(doc) >= {"pairs", "queries", "settings"}
    assert len(doc["pairs"]) == 10
    assert set(doc["pairs"][0]) >= {"query", "item_a", "item_b", "serves", "decision"}
    assert set(doc["queries"]) == {"q0", "q1", "q2", "q3"}
    for query in doc["queries"].values():
        assert query["status"] in ("settled", "open")
        assert set(query) >= {"open_decisions", "expected_judgments", "planned"}
        assert query["planned"] <= 3
    status = cli_json(planned_db, "plan", "b", "--budget", "0")
    assert "pairs" not in status and set(status["queries"]) == set(doc["queries"])
    code, out, _ = cli(planned_db, "plan", "b", "--budget", "0")
    assert code == 0 and out.splitlines()[0].split("\t")[:2] == ["query", "status"]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_other_shapes_ingest_too(planned_db: str, tmp_path: Path, fmt: str) -> None:
    code, out, err = cli(planned_db, "plan", "b", "--budget", "6", "--format", fmt)
    assert code == 0, err
    if fmt == "jsonl":
        rows = [json.loads(line) for line in out.splitlines()]
        filled = "".join(json.dumps({**r, "winner": "tie"}) + "\n" for r in rows)
    else:
        lines = out.splitlines()
        assert lines[0] == "query,item_a,item_b,winner"
        filled = "\n".join([lines[0], *(line + "tie" for line in lines[1:])]) + "\n"
    path = tmp_path / f"plan.{fmt}"
    path.write_text(filled, encoding="utf-8")
    code, out, err = cli(planned_db, "ingest", "pairwise", str(path))
    assert code == 0, err
    assert "stored 6 pairwise rows" in out + err


def test_a_listwise_build_cannot_be_planned(migrated_db_url: str) -> None:
    frame = pd.DataFrame(
        {"query": "q", "annotator": "a", "item": ["x", "y", "z"], "rank": [1, 2, 3]}
    )
    store_judgments(migrated_db_url, "listwise", frame)
    code, _, err = cli(migrated_db_url, "build", "--source", "listwise", "--name", "l")
    assert code == 0, err
    code, out, err = cli(migrated_db_url, "plan", "l", "--budget", "3")
    assert code == 1 and out == ""
    assert err.startswith("Error: build") and "pairwise" in err and "Traceback" not in err


def test_bad_margin_is_one_line(planned_db: str) -> None:
    code, _, err = cli(planned_db, "plan", "b", "--budget", "3", "--margin", "-1")
    assert code == 1 and err.strip() == (
        "Error: --margin must be a finite number > 0 (a log-strength difference), got -1.0"
    )


def test_a_model_build_is_planned_for_its_cuts(planned_db: str) -> None:
    """A ``--tiering model`` build is planned for its own decisions (docs/planning.md,
    "Planning for `--tiering model`"): the cuts read from the stored audit."""
    url = planned_db
    code, _, err = cli(url, "build", "--source", "pairwise", "--tiering", "model", "--name", "m")
    assert code == 0, err
    doc = cli_json(url, "plan", "m", "--budget", "24", "--seed", "2")
    default = cli_json(url, "plan", "b", "--budget", "24", "--seed", "2")
    assert doc["settings"]["tiering"] == "model"
    assert default["settings"]["tiering"] == "posterior"  # the default tiering since issue 32
    assert len(doc["pairs"]) == 24
    # a pair serves a cut (named by the two items either side of it), a placement (the item)
    # or a poorly measured item's pair; never a max-t boundary or tie
    model_kinds = 0
    for pair in doc["pairs"]:
        if pair["serves"] in ("boundary", "tie"):
            assert " | " in pair["decision"]
            model_kinds += 1
        else:
            assert pair["serves"] == "item"
            model_kinds += " vs " not in pair["decision"]
    assert model_kinds > 0
    for query in doc["queries"].values():
        for decision in query["open_decisions"]:
            if decision["kind"] in ("boundary", "tie"):
                assert {"z", "threshold", "threshold_if_doubled"} <= set(decision)
    assert doc["pairs"] != default["pairs"]
