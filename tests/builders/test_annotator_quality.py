"""Per-annotator quality: position bias, agreement with other annotators, counted rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from store_cli import cli, cli_json, runner

from orlbuild.builders.audit.quality import annotator_kappa, build_quality, raw_preferences
from orlbuild.cli.main import app
from orlbuild.store import create_store_engine, load_pairwise
from tests.stores import disposed


def test_position_bias_on_a_hand_built_file() -> None:
    # judge "llm" picks the item shown first 4 times out of 5; "ann" 1 time out of 4;
    # ties and rows without a presentation order do not count
    rows = [
        ("llm", "a", "b", "a", 0),
        ("llm", "c", "d", "c", 0),
        ("llm", "b", "c", "b", 0),
        ("llm", "d", "a", "d", 0),
        ("llm", "a", "d", "d", 0),
        ("llm", "a", "b", "a", 1),
        ("ann", "a", "b", "b", 0),
        ("ann", "c", "d", "d", 0),
        ("ann", "a", "c", "c", 0),
        ("ann", "b", "d", "b", 0),
        ("ann", "b", "d", None, 0),
    ]
    frame = pd.DataFrame(
        [
            {"query": "q", "annotator": k, "winner": w, "loser": lo, "first": f, "tie": t}
            for k, w, lo, f, t in rows
        ]
    )
    prefs = raw_preferences(frame, "pairwise")
    report = build_quality(prefs, {"q": {"a": 1, "b": 1, "c": 2, "d": 2}})
    bias = report.annotators.set_index("annotator")["position_bias"]
    assert bias["llm"] == pytest.approx(4 / 5)
    assert bias["ann"] == pytest.approx(1 / 4)


def test_position_bias_is_unknown_without_presentation_order() -> None:
    frame = pd.DataFrame({"query": "q", "annotator": "x", "winner": ["a"], "loser": ["b"]})
    report = build_quality(raw_preferences(frame, "pairwise"), {"q": {"a": 1, "b": 2}})
    assert np.isnan(report.annotators["position_bias"].iloc[0])


def test_kappa_against_the_other_annotators() -> None:
    pairs = [("a", "b"), ("d", "c"), ("a", "c"), ("d", "b"), ("a", "d"), ("c", "b")]
    rows = []
    for w, lo in pairs:
        rows += [("p", w, lo), ("q", w, lo)]  # p and q agree on everything
        rows.append(("r", lo, w))  # r reverses everything
    frame = pd.DataFrame(
        [{"query": "x", "annotator": k, "winner": w, "loser": lo, "tie": 0} for k, w, lo in rows]
    )
    kappa = annotator_kappa(raw_preferences(frame, "pairwise")).set_index("annotator")
    # r disagrees with every match (kappa -1); p agrees with q and disagrees with r
    assert kappa.loc["r", "kappa"] == pytest.approx(-1.0)
    assert kappa.loc["p", "kappa"] == pytest.approx(0.0)
    assert kappa.loc["p", "shared"] == 12 and kappa.loc["r", "shared"] == 12


def test_counted_rows_weigh_quality_like_expanded_rows() -> None:
    expanded = pd.DataFrame(
        {
            "query": "q",
            "annotator": ["x", "x", "x", "y", "y"],
            "winner": ["a", "a", "b", "a", "b"],
            "loser": ["b", "b", "a", "b", "a"],
            "tie": 0,
        }
    )
    counted = pd.DataFrame(
        {
            "query": "q",
            "annotator": ["x", "x", "y", "y"],
            "winner": ["a", "b", "a", "b"],
            "loser": ["b", "a", "b", "a"],
            "tie": 0,
            "count": [2, 1, 1, 1],
        }
    )
    ranks = {"q": {"a": 1, "b": 2}}
    full = build_quality(raw_preferences(expanded, "pairwise"), ranks)
    compact = build_quality(raw_preferences(counted, "pairwise"), ranks)
    assert full.agreement == pytest.approx(compact.agreement)
    columns = ["annotator", "preferences", "consistent", "agreement_all", "kappa", "shared"]
    pd.testing.assert_frame_equal(
        full.annotators[columns], compact.annotators[columns], check_dtype=False
    )
    assert full.items["comparisons"].tolist() == compact.items["comparisons"].tolist()


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_position_bias_from_stored_files_of_every_shape(
    migrated_db_url: str, tmp_path: Path
) -> None:
    # Hand-built files (items m1-m4): the arena judge "llm" picks the item shown first
    # (model_a, by name or by id) 3 times of 4 (the tie does not count); evalica's "ev" the
    # left item 1 of 3; crowd-kit's "ck" 1 of 2; the native shape does not say which item
    # was shown first.
    files = {
        "arena.csv": "question_id,model_a,model_b,winner,judge\nq,m1,m2,model_a,llm\n"
        "q,m3,m4,model_a,llm\nq,m2,m3,m2,llm\nq,m4,m1,model_b,llm\nq,m1,m3,tie,llm\n",
        "evalica.csv": "query,left,right,winner,annotator\nq,m1,m2,right,ev\n"
        "q,m2,m4,right,ev\nq,m3,m1,left,ev\n",
        "crowdkit.csv": "query,worker,left,right,label\nq,ck,m1,m4,m4\nq,ck,m2,m3,m2\n",
        "native.csv": "query,annotator,winner,loser\nq,nat,m1,m2\nq,nat,m3,m4\n",
    }
    for name, text in files.items():
        code, _, err = cli(
            migrated_db_url, "ingest", "pairwise", str(_write(tmp_path / name, text))
        )
        assert code == 0, err
    with disposed(create_store_engine(migrated_db_url)) as engine:
        stored = load_pairwise(engine)
    flags = stored.groupby("annotator")["winner_first"].agg(list).to_dict()
    assert flags["llm"] == [True, True, True, False, True]  # the tie: its first item
    assert flags["ev"] == [False, False, True] and flags["ck"] == [False, True]
    assert all(pd.isna(f) for f in flags["nat"])
    build = cli_json(migrated_db_url, "build", "--source", "pairwise")["build"]
    report = cli_json(migrated_db_url, "quality", str(build))
    bias = {a["annotator"]: a["position_bias"] for a in report["annotators"]}
    assert bias["llm"] == pytest.approx(3 / 4)
    assert bias["ev"] == pytest.approx(1 / 3)
    assert bias["ck"] == pytest.approx(1 / 2)
    assert bias["nat"] is None or np.isnan(bias["nat"])
    # the same file again is still the stored batch (the flag is not part of the digest)
    again = runner.invoke(
        app, ["--db", migrated_db_url, "ingest", "pairwise", str(tmp_path / "arena.csv")]
    )
    assert again.exit_code == 0 and "already stored as batch 1" in again.output, again.output
