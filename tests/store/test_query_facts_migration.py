"""Migration 0019_query_facts: a query's stated and unbacked orders are stored as columns
(``query_orders``), not as a warning the audit parsed back; old stores keep their counts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import create_engine, select
from store_cli import cli_json

from orlbuild.store import downgrade, upgrade
from orlbuild.store.builds import load_query_orders, load_query_orls
from orlbuild.store.models import BuildMessage
from tests.builders.simulation import simulate_pairwise, tiered_strengths
from tests.builders.store_data import store_judgments
from tests.stores import store_engine

SENTENCE = "stated cross-tier orders are not backed by a test"


def _leader_build(url: str) -> dict[str, Any]:
    rng = np.random.default_rng(42)
    strengths, _ = tiered_strengths([2, 2, 2], 3.0)
    frame = pd.concat([simulate_pairwise(rng, strengths, 120, query=f"q{k}") for k in range(3)])
    frame.loc[frame.index[:4], "annotator"] = "careless"
    store_judgments(url, "pairwise", frame)
    return cli_json(url, "build", "--source", "pairwise", "--tiering", "leader")


def _sentences(url: str, build: int) -> list[str]:
    engine = create_engine(url)  # at any revision
    try:
        with engine.connect() as connection:
            messages = connection.execute(
                select(BuildMessage.message).where(BuildMessage.build_id == build)
            ).scalars()
            texts = sorted(m for m in messages if SENTENCE in m)
    finally:
        engine.dispose()
    return texts


def test_the_builders_store_the_counts_and_no_sentence(migrated_db_url: str) -> None:
    build = _leader_build(migrated_db_url)
    with store_engine(migrated_db_url) as engine:
        orders = load_query_orders(engine, build["build"])
        orls = load_query_orls(engine, build["build"])
    assert set(orders) == {"q0", "q1", "q2"}
    assert sum(u for _, u in orders.values()) == build["unbacked_orders"] > 0
    assert sum(s for s, _ in orders.values()) == build["stated_orders"]
    assert {q: (o.stated_orders, o.unbacked_orders) for q, o in orls.items()} == orders
    assert _sentences(migrated_db_url, build["build"]) == []  # facts, not a sentence


def test_old_stores_keep_their_counts_through_the_migration(migrated_db_url: str) -> None:
    build = _leader_build(migrated_db_url)
    audit = cli_json(migrated_db_url, "audit", str(build["build"]))["queries"]
    with store_engine(migrated_db_url) as engine:
        orders = load_query_orders(engine, build["build"])
    unbacked = {q: u for q, (_, u) in orders.items() if u}
    # before 0018 the counts were a warning per query with unbacked orders ...
    # the rows are written back as warnings, so dropping the table loses nothing
    downgrade(migrated_db_url, "0017_batch_ids_never_reused", allow_data_loss=True)
    written = _sentences(migrated_db_url, build["build"])
    assert written == sorted(f"{u} of {orders[q][0]} {SENTENCE}" for q, u in unbacked.items())
    # ... which the upgrade turns into rows (queries without one: unknown, no row)
    upgrade(migrated_db_url)
    assert _sentences(migrated_db_url, build["build"]) == []
    with store_engine(migrated_db_url) as engine:
        after = load_query_orders(engine, build["build"])
    assert after == {q: orders[q] for q in unbacked}
    again = cli_json(migrated_db_url, "audit", str(build["build"]))["queries"]
    assert [q["unbacked_orders"] for q in again] == [q["unbacked_orders"] for q in audit]
