"""Two annotators leasing at once on PostgreSQL never hold one slot together (issue 34;
docs/judging-in-the-browser.md, "Rounds, leases and undo")."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from sqlalchemy import text

from orlbuild.services import rounds, web_users
from tests.stores import store_engine
from tests.web.rounds_data import built_store

pytestmark = pytest.mark.postgres


def test_two_annotators_never_get_one_slot(migrated_db_url: str, tmp_path: Path) -> None:
    if not migrated_db_url.startswith("postgresql"):
        pytest.skip("a PostgreSQL race: SQLite serialises its writers")
    assert os.environ.get("ORLBUILD_TEST_PG_URL")
    built_store(migrated_db_url, tmp_path)
    with store_engine(migrated_db_url) as engine:
        opened = rounds.open_round(engine, "b", budget=30, per_pair=1)
        users = []
        for name in ("ann", "bob"):
            web_users.add_user(engine, name, "annotator")
            users.append(web_users.find_web_user(engine, name))  # type: ignore[attr-defined]
        start = threading.Barrier(2)
        got: dict[str, list[str]] = {"ann": [], "bob": []}

        def judge(user) -> None:  # type: ignore[no-untyped-def]
            start.wait()
            while (pair := rounds.next_pair(engine, user)) is not None:
                got[user.name].append(pair.key)
                rounds.submit(engine, user, pair.key, "left")

        threads = [threading.Thread(target=judge, args=(u,)) for u in users]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        with engine.connect() as connection:
            per_assignment = connection.execute(
                text(
                    "SELECT a.slots, count(*), count(DISTINCT j.user_id) FROM web_assignments a "
                    "JOIN web_judgments j ON j.assignment_id = a.id WHERE j.outcome = 'left' "
                    "GROUP BY a.id, a.slots"
                )
            ).all()
    assert len(per_assignment) == opened.assignments  # every slot was judged
    # each judged as often as asked (a pair planned twice has two slots) by different
    # people, so at most twice by these two
    assert all(count == people == min(slots, 2) for slots, count, people in per_assignment)
    assert got["ann"] and got["bob"]  # both took part
    assert not set(got["ann"]) & set(got["bob"])
