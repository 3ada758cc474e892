"""``--query NAME`` (CLI, TOML ``[[inputs]]`` ``query``) and the per-battle-id warning."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from orlbuild.errors import ConfigError, StoreError
from orlbuild.ingest import read_input
from orlbuild.pipeline.config import load_config
from orlbuild.store import load_pairwise
from tests.files import Write
from tests.ingest.conftest import ingested, run_cli
from tests.stores import disposed, store_engine


def _battles(n: int) -> list[dict[str, str]]:
    """LMArena-like battles: a fresh question_id per battle, 4 models."""
    models = ["gpt", "claude", "llama", "qwen"]
    return [
        {
            "question_id": f"b{i:04d}",
            "model_a": models[i % 4],
            "model_b": models[
                (i + 1 + i // 4) % 4 if (i + 1 + i // 4) % 4 != i % 4 else (i + 2) % 4
            ],
            "winner": ["model_a", "model_b", "tie"][i % 3],
        }
        for i in range(n)
    ]


def test_per_battle_ids_warn_and_name_query(migrated_db_url: str, write_file: Write) -> None:
    path = write_file("clean_battle.json", json.dumps(_battles(30)))
    result = ingested(migrated_db_url, "pairwise", path)
    warnings = [line for line in result.output.splitlines() if "compare only two items" in line]
    assert len(warnings) == 1
    assert "30 of 30 queries compare only two items" in warnings[0]
    assert "question_id" in warnings[0] and "--query NAME" in warnings[0]


def test_query_option_makes_one_leaderboard(migrated_db_url: str, write_file: Write) -> None:
    path = write_file("clean_battle.json", json.dumps(_battles(30)))
    result = ingested(migrated_db_url, "pairwise", path, "--query", "arena")
    assert "compare only two items" not in result.output
    assert "--query 'arena' puts every row into one query; the file's 30 query id(s)" in (
        result.output
    )
    with store_engine(migrated_db_url) as engine:
        frame = load_pairwise(engine)
    assert set(frame["query"]) == {"arena"} and len(frame) == 30
    # the same content read into another query is another reading: refused, never merged
    again = run_cli(migrated_db_url, "ingest", "pairwise", str(path), "--query", "other")
    assert again.exit_code == 1
    assert "--query 'arena'" in again.output and "--query 'other'" in again.output


def test_real_queries_do_not_warn() -> None:
    rows = "".join(f"q{q},d{a},d{b},d{a}\n" for q in range(12) for a, b in [(1, 2), (2, 3), (1, 3)])
    parsed = read_input("pairwise", "p.csv", stream=_bytes("query,item_a,item_b,winner\n" + rows))
    assert not any("compare only two items" in note for note in parsed.notes)


def test_query_option_is_pairwise_only(migrated_db_url: str) -> None:
    with pytest.raises(ConfigError, match="--query applies to pairwise"):
        read_input("graded", "g.qrels", stream=_bytes("q1 0 d1 1\n"), query="x")


def test_toml_inputs_take_query(tmp_path: Path) -> None:
    (tmp_path / "battles.json").write_text(json.dumps(_battles(3)))
    (tmp_path / "a.trec").write_text("q 0 d 1\n")
    base = """
measures = ["RDQm2-a1@10"]
[[inputs]]
kind = "pairwise"
path = "battles.json"
query = "arena"
[[inputs]]
kind = "run"
path = "a.trec"
system = "a"
{extra}
[[builds]]
name = "main"
source = "pairwise"
[scoring]
build = "main"
"""
    config_path = tmp_path / "pipeline.toml"
    config_path.write_text(base.format(extra=""))
    assert load_config(config_path).inputs[0].query == "arena"
    config_path.write_text(base.format(extra='query = "x"'))
    with pytest.raises(
        ConfigError, match=r"inputs\[1\]\.query.*only allowed for kind = 'pairwise'"
    ):
        load_config(config_path)


def _bytes(text: str) -> io.BytesIO:
    return io.BytesIO(text.encode())


def test_pipeline_does_not_skip_a_file_stored_into_another_query(
    migrated_db_url: str, tmp_path: Path
) -> None:
    from orlbuild.services.ingests import ingest_unless_stored
    from orlbuild.store import open_store as open_engine

    path = tmp_path / "battles.json"
    path.write_text(json.dumps(_battles(12)))
    with disposed(open_engine(migrated_db_url)) as engine:
        first = ingest_unless_stored(engine, "pairwise", path, collection="c", query="arena")
        again = ingest_unless_stored(engine, "pairwise", path, collection="c", query="arena")
        assert first.created and not again.created and again.batch_id == first.batch_id
        with pytest.raises(StoreError, match="--query 'other'"):
            ingest_unless_stored(engine, "pairwise", path, collection="c", query="other")
        with pytest.raises(StoreError, match="already stored as batch"):
            ingest_unless_stored(engine, "pairwise", path, collection="c")
