"""CLI: build, orl list/show/export/diff, audit, audit override, quality (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from store_cli import cli, cli_json

from orlbuild.store.batches import delete_batch
from orlbuild.store.builds import builds_using_batch, get_build, load_build_orls
from scoring.orl import ORL
from tests.builders.simulation import simulate_pairwise, tiered_strengths
from tests.builders.store_data import store_judgments
from tests.stores import store_engine


@pytest.fixture
def pairwise_db(migrated_db_url: str) -> tuple[str, int]:
    rng = np.random.default_rng(42)
    strengths, _ = tiered_strengths([2, 2, 2], 3.0)
    frame = pd.concat([simulate_pairwise(rng, strengths, 120, query=f"q{k}") for k in range(3)])
    frame.loc[frame.index[:4], "annotator"] = "careless"
    batch = store_judgments(migrated_db_url, "pairwise", frame)
    return migrated_db_url, batch


def test_build_json_and_stored_metadata(pairwise_db: tuple[str, int]) -> None:
    url, batch = pairwise_db
    doc = cli_json(url, "build", "--source", "pairwise", "--name", "first", "--seed", "3")
    assert set(doc) >= {"build", "name", "queries", "tiers", "warnings"}
    assert doc["name"] == "first" and doc["queries"] == 3
    assert set(doc["tiers"]) == {"q0", "q1", "q2"} and all(t >= 2 for t in doc["tiers"].values())
    with store_engine(url) as engine:
        record = get_build(engine, doc["build"])
        assert record.method == "bt" and record.seed == 3
        assert record.parameters["uncertainty"] == "fisher" and record.parameters["reg"] == 0.5
        assert [b.id for b in record.batches] == [batch]
        assert len(record.batches[0].sha256) == 64
        orls = load_build_orls(engine, "first")
        assert set(orls) == {"q0", "q1", "q2"} and all(isinstance(o, ORL) for o in orls.values())
        assert builds_using_batch(engine, batch) == [doc["build"]]


def test_same_inputs_and_seed_give_identical_orls(pairwise_db: tuple[str, int]) -> None:
    url, _ = pairwise_db
    options = ["build", "--source", "pairwise", "--method", "rank-centrality", "--bootstrap", "20"]
    first = cli_json(url, *options, "--seed", "5")["build"]
    second = cli_json(url, *options, "--seed", "5")["build"]
    exported = [cli(url, "orl", "export", str(b), "--format", "tsv")[1] for b in (first, second)]
    assert exported[0] == exported[1]
    shown = [cli_json(url, "orl", "show", str(b))["queries"] for b in (first, second)]
    assert shown[0] == shown[1]


def test_failing_query_stores_nothing_by_default_and_skip_lists_it(migrated_db_url: str) -> None:
    frame = pd.DataFrame(
        [("ok", "a", "x", "y", 0), ("ok", "a", "y", "x", 0), ("bad", "a", "x", "y", 0),
         ("bad", "a", "z", "w", 0)],
        columns=["query", "annotator", "winner", "loser", "tie"],
    )  # fmt: skip
    store_judgments(migrated_db_url, "pairwise", frame)
    code, out, err = cli(migrated_db_url, "build", "--source", "pairwise")
    assert code == 1 and out == ""
    assert "Error: query 'bad': comparison graph is disconnected" in err
    assert cli_json(migrated_db_url, "orl", "list") == []
    doc = cli_json(migrated_db_url, "build", "--source", "pairwise", "--on-error", "skip")
    assert doc["queries"] == 1 and doc["failures"][0]["query"] == "bad"
    assert any("bad" in w for w in doc["warnings"])


def test_bad_options_are_one_line_errors(pairwise_db: tuple[str, int]) -> None:
    url, _ = pairwise_db
    code, _, err = cli(url, "build", "--source", "pairwise", "--method", "borda")
    assert code == 1 and err.startswith("Error: --method 'borda' is not valid") and err[-1] == "\n"
    code, _, err = cli(url, "build", "--source", "graded")
    assert code == 1 and "no graded judgments" in err
    code, _, err = cli(url, "orl", "show", "999")
    assert code == 1 and "no build '999'" in err


def test_orl_show_export_and_list(pairwise_db: tuple[str, int], tmp_path: Path) -> None:
    url, _ = pairwise_db
    build = cli_json(url, "build", "--source", "pairwise", "--name", "x")["build"]
    shown = cli_json(url, "orl", "show", "x", "--query", "q1")
    assert list(shown["queries"]) == ["q1"]
    first_tier = shown["queries"]["q1"][0]
    assert first_tier["rank"] == 1 and {"item", "score", "low", "high"} <= set(
        first_tier["items"][0]
    )
    target = tmp_path / "orl.json"
    code, _, _ = cli(url, "orl", "export", str(build), "--format", "json", "-o", str(target))
    exported = json.loads(target.read_text())
    assert code == 0 and exported["build"]["id"] == build
    assert set(exported["queries"]) == {"q0", "q1", "q2"}
    code, qrels, _ = cli(url, "orl", "export", str(build), "--format", "qrels")
    lines = [line.split() for line in qrels.splitlines()]
    q0 = exported["queries"]["q0"]
    tiers = max(q0.values())
    assert {(i, int(g)) for q, _, i, g in lines if q == "q0"} == {
        (i, tiers - r + 1) for i, r in q0.items()
    }
    code, tsv, _ = cli(url, "orl", "export", str(build), "--format", "tsv")
    assert tsv.splitlines()[0] == "query\titem\trank"
    listed = cli_json(url, "orl", "list")
    assert [b["id"] for b in listed] == [build] and listed[0]["name"] == "x"


def test_audit_override_derives_a_new_build_and_diff_shows_the_move(
    pairwise_db: tuple[str, int],
) -> None:
    url, _ = pairwise_db
    build = cli_json(url, "build", "--source", "pairwise", "--sig", "0")["build"]
    before = cli(url, "orl", "export", str(build), "--format", "tsv")[1]
    decisions = cli_json(url, "audit", str(build), "--query", "q0")["decisions"]
    assert len(decisions) == 5 and {d["query"] for d in decisions} == {"q0"}
    keys = {"query", "leader", "item", "score_leader", "score_item", "diff", "se", "p_value",
            "decision", "rule"}  # fmt: skip
    assert keys <= set(decisions[0])
    assert {d["decision"] for d in decisions} == {"separated"}
    derived = cli_json(
        url, "audit", "override", str(build), "--query", "q0", "--merge-tiers", "1",
        "--reason", "indistinguishable in review", "--by", "alice",
    )  # fmt: skip
    assert derived["parent"] == build and derived["by"] == "alice"
    assert cli(url, "orl", "export", str(build), "--format", "tsv")[1] == before
    moved = cli_json(url, "orl", "diff", str(build), str(derived["build"]))["moved"]
    assert moved and {m["query"] for m in moved} == {"q0"}
    assert all(m["change"] == "up" for m in moved)
    audit_new = cli_json(url, "audit", str(derived["build"]), "--query", "q0")
    assert audit_new["decisions"][-1]["rule"] == "override: merge tiers 1 and 2"
    (override,) = audit_new["overrides"]
    assert override["reason"] == "indistinguishable in review" and override["created_by"] == "alice"
    again = cli_json(
        url, "audit", "override", str(derived["build"]), "--query", "q1", "--merge-tiers", "1",
        "--reason", "second look",
    )  # fmt: skip
    history = cli_json(url, "orl", "show", str(again["build"]))["build"]["overrides"]
    assert [o["reason"] for o in history] == ["indistinguishable in review", "second look"]
    everything = cli_json(url, "audit")["decisions"]
    assert everything[0]["build"] == again["build"]  # newest build first
    code, _, err = cli(
        url, "audit", "override", str(build), "--query", "q0", "--split-at", "nope",
        "--reason", "x",
    )  # fmt: skip
    assert code == 1 and "no such item" in err


def test_quality_report(pairwise_db: tuple[str, int]) -> None:
    url, _ = pairwise_db
    build = cli_json(url, "build", "--source", "pairwise")["build"]
    report = cli_json(url, "quality", str(build), "--min-comparisons", "40")
    assert 0.5 < report["agreement"] <= 1
    annotators = {a["annotator"] for a in report["annotators"]}
    assert "careless" in annotators
    assert report["flagged_items"] and all(i["comparisons"] < 40 for i in report["flagged_items"])
    code, table, _ = cli(url, "quality", str(build))
    assert code == 0 and "agreement per annotator" in table


def test_graded_and_listwise_builds(migrated_db_url: str) -> None:
    graded = pd.DataFrame(
        {"query": "q", "annotator": ["a", "b", "a", "b", "a"], "item": ["x", "x", "y", "y", "z"],
         "grade": [3, 2, 1, 1, 0]}
    )  # fmt: skip
    store_judgments(migrated_db_url, "graded", graded)
    doc = cli_json(migrated_db_url, "build", "--source", "graded", "--grade-agg", "max")
    with store_engine(migrated_db_url) as engine:
        orl = load_build_orls(engine, doc["build"])["q"]
        assert dict(orl.items()) == {"x": 1, "y": 2}
        assert orl.grades == {"x": 3.0, "y": 1.0}
    lists = pd.DataFrame(
        {"query": "q", "annotator": "a", "item": ["x", "y", "z"], "rank": [1, 1, 2]}
    )
    store_judgments(migrated_db_url, "listwise", lists)
    doc = cli_json(migrated_db_url, "build", "--source", "listwise")
    assert doc["method"] == "direct" and doc["tiers"] == {"q": 2}
    rules = {d["rule"] for d in cli_json(migrated_db_url, "audit", str(doc["build"]))["decisions"]}
    assert rules == {"same annotator tier", "lower annotator tier"}


def test_a_batch_read_by_a_build_cannot_be_deleted(pairwise_db: tuple[str, int]) -> None:
    url, batch = pairwise_db
    build = cli_json(url, "build", "--source", "pairwise")["build"]
    with store_engine(url) as engine:
        from orlbuild.errors import StoreError

        with pytest.raises(StoreError, match="build_batches"):
            delete_batch(engine, batch)
        delete_batch(engine, batch, force=True)
        record = get_build(engine, build)  # provenance survives by hash
        assert record.batches[0].id == -1 and len(record.batches[0].sha256) == 64
        assert load_build_orls(engine, build)


def test_progress_advances_once_per_query(pairwise_db: tuple[str, int]) -> None:
    from contextlib import contextmanager

    from orlbuild.builders import BuildParameters
    from orlbuild.services.builds import build_and_store

    seen: dict[str, int] = {"total": 0, "steps": 0}

    @contextmanager
    def progress(total: int):  # type: ignore[no-untyped-def]
        seen["total"] = total

        def advance(n: int = 1) -> None:
            seen["steps"] += n

        yield advance

    url, _ = pairwise_db
    with store_engine(url) as engine:
        build_and_store(engine, BuildParameters(source="pairwise"), progress=progress)
    assert seen == {"total": 3, "steps": 3}


def test_audit_shows_boundaries_and_export_writes_backed_orders(
    pairwise_db: tuple[str, int],
) -> None:
    url, _ = pairwise_db
    leader = cli_json(url, "build", "--source", "pairwise", "--tiering", "leader")
    assert leader["unbacked_orders"] <= leader["stated_orders"]
    audit = cli_json(url, "audit", str(leader["build"]))
    boundaries = audit["boundaries"]
    assert boundaries and all(b["crossing_pairs"] >= 1 for b in boundaries)
    assert {"weakest_above", "weakest_below", "weakest_z", "weakest_critical"} <= set(boundaries[0])
    unbacked = sum(q["unbacked_orders"] for q in audit["queries"])
    assert unbacked == leader["unbacked_orders"]
    backed = cli(url, "orl", "export", str(leader["build"]), "--format", "trec-prefs")[1]
    every = cli(
        url, "orl", "export", str(leader["build"]), "--format", "trec-prefs", "--all-orders"
    )[1]
    levels = lambda text: {  # noqa: E731
        (line.split()[0], line.split()[3]): int(line.split()[4]) for line in text.splitlines()
    }
    merged = {b["query"] for b in boundaries if not b["backed"]}
    assert merged  # the leader rule states orders no test backs here
    for query in {q for q, _ in levels(every)}:
        n_backed = len({v for (q, _), v in levels(backed).items() if q == query})
        n_every = len({v for (q, _), v in levels(every).items() if q == query})
        assert n_backed < n_every if query in merged else n_backed == n_every
    code, table, _ = cli(url, "audit", str(leader["build"]))
    assert code == 0 and "weakest crossing pair" in table


def test_reliability_build_stores_and_audits_annotators(pairwise_db: tuple[str, int]) -> None:
    url, _ = pairwise_db
    doc = cli_json(url, "build", "--source", "pairwise", "--annotators", "reliability")
    names = {r["annotator"] for r in doc["reliabilities"]}
    assert "careless" in names
    audit = cli_json(url, "audit", str(doc["build"]))
    stored = {r["annotator"]: r for r in audit["reliabilities"]}
    assert set(stored) == names
    assert all(0.0 <= r["low"] <= r["reliability"] <= r["high"] <= 1.0 for r in stored.values())
    assert all(r["flips"] is not None for r in stored.values())


def test_counted_rows_ingested_give_the_orl_of_expanded_rows(
    migrated_db_url: str, tmp_path: Path
) -> None:
    rng = np.random.default_rng(9)
    strengths, _ = tiered_strengths([2, 2, 2], 3.0)
    frames = [simulate_pairwise(rng, strengths, 150, query=f"q{k}") for k in range(2)]
    expanded = pd.concat(frames, ignore_index=True)
    expanded["tie"] = (rng.random(len(expanded)) < 0.15).astype(int)
    keys = ["query", "annotator", "winner", "loser", "tie"]
    counted = expanded.groupby(keys, as_index=False).size().rename(columns={"size": "count"})
    assert counted["count"].max() > 1
    (tmp_path / "expanded.tsv").write_text(expanded[keys].to_csv(sep="\t", index=False))
    (tmp_path / "counted.tsv").write_text(counted.to_csv(sep="\t", index=False))
    docs = {}
    for name in ("expanded", "counted"):
        code, _, err = cli(
            migrated_db_url, "ingest", "pairwise", str(tmp_path / f"{name}.tsv"), "-c", name
        )
        assert code == 0, err
        docs[name] = cli_json(
            migrated_db_url, "build", "--source", "pairwise", "--collection", name, "--name", name
        )
    with store_engine(migrated_db_url) as engine:
        built = {name: load_build_orls(engine, name) for name in docs}
    assert docs["expanded"]["tiers"] == docs["counted"]["tiers"]
    assert {q: dict(o.items()) for q, o in built["expanded"].items()} == {
        q: dict(o.items()) for q, o in built["counted"].items()
    }
