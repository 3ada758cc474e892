"""The kill harness's checks see a half-done store (so a harness round can fail)."""

from __future__ import annotations

from sqlalchemy import text

from orlbuild.store import create_store_engine
from tests.reliability.kill_rounds import SAMPLE
from tests.reliability.store_invariants import half_done
from tests.store_cli import cli
from tests.stores import disposed


def test_half_done_names_each_kind_of_leftover(migrated_db_url: str) -> None:
    code, _, err = cli(migrated_db_url, "ingest", "pairwise", str(SAMPLE / "pairwise.tsv"))
    assert code == 0, err
    code, _, err = cli(migrated_db_url, "build", "--source", "pairwise", "--name", "b")
    assert code == 0, err
    assert half_done(migrated_db_url) == []
    with disposed(create_store_engine(migrated_db_url)) as engine, engine.begin() as c:
        c.execute(
            text(
                "DELETE FROM pairwise_judgments "
                "WHERE id IN (SELECT MIN(id) FROM pairwise_judgments)"
            )
        )
        c.execute(
            text("DELETE FROM orl_entries WHERE query = (SELECT MIN(query) FROM orl_entries)")
        )
        c.execute(text("UPDATE ingest_batches SET sha256 = 'pending x'"))
    found = half_done(migrated_db_url)
    assert found == [
        "pairwise batch 1 says 6672 rows, 6671 are stored",
        "batches still pending (hash never written): [(1,)]",
        "build 1 says 36 queries, has ORLs of 35",
    ], found
