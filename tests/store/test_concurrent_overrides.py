"""Two auditors override different queries of one build at the same moment: no lost update.

Each auditor runs in its own thread with its own engine. A barrier holds both
after they have read the build and before either writes, so that their
transactions really race. By build name the second override is derived from
the first (the newest build holds both); by build id the second is refused
with "build changed since you read it".
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

import orlbuild.services.builds as builds_service
from orlbuild.builders.parameters import BuildParameters
from orlbuild.errors import StoreError
from orlbuild.records import OverrideRequest
from orlbuild.services.builds import build_and_store, override_build
from orlbuild.store import open_store
from orlbuild.store.builds import get_build, list_builds
from tests.builders.store_data import store_judgments
from tests.store_cli import cli
from tests.stores import store_engine


def _stored_build(url: str) -> int:
    """A listwise build named ``audited``: queries q1, q2, q3, each with tiers [a] [b] [c]."""
    frame = pd.DataFrame(
        [(q, item, rank) for q in ("q1", "q2", "q3") for rank, item in enumerate("abc", 1)],
        columns=["query", "item", "rank"],
    )
    store_judgments(url, "listwise", frame)
    with store_engine(url) as engine:
        build_id = build_and_store(engine, BuildParameters(source="listwise"), name="audited").id
    return build_id


def _race(
    url: str, monkeypatch: pytest.MonkeyPatch, ref: str, queries: tuple[str, str]
) -> list[Any]:
    """Both auditors read, wait for each other, then write; each thread's outcome."""
    barrier = threading.Barrier(2, timeout=30)
    real = builds_service.store_build
    first_attempt: set[int] = set()

    def held(*args: Any, **kwargs: Any) -> int:
        me = threading.get_ident()
        if me not in first_attempt:  # only the first attempt waits: both have read by then
            first_attempt.add(me)
            barrier.wait()
        return real(*args, **kwargs)

    monkeypatch.setattr(builds_service, "store_build", held)
    outcomes: list[Any] = [None, None]

    def auditor(index: int) -> None:
        engine = open_store(url)
        try:
            outcomes[index] = override_build(
                engine, ref, OverrideRequest(queries[index], f"auditor {index}", merge_tier=1)
            )
        except StoreError as error:
            outcomes[index] = error
        finally:
            engine.dispose()

    threads = [threading.Thread(target=auditor, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return outcomes


def _newest_overrides(url: str) -> list[str]:
    with store_engine(url) as engine:
        newest = int(list_builds(engine)["id"].max())
        return sorted(o["query"] for o in get_build(engine, newest).overrides)


def test_overrides_by_name_at_the_same_moment_keep_both(
    migrated_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = _stored_build(migrated_db_url)
    outcomes = _race(migrated_db_url, monkeypatch, "audited", ("q1", "q2"))
    assert all(isinstance(o, int) for o in outcomes), outcomes
    assert _newest_overrides(migrated_db_url) == ["q1", "q2"]
    with store_engine(migrated_db_url) as engine:
        second = get_build(engine, max(outcomes))
        assert get_build(engine, second.parent_id or 0).parent_id == original  # a chain


def test_overrides_by_id_at_the_same_moment_refuse_the_second(
    migrated_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = _stored_build(migrated_db_url)
    outcomes = _race(migrated_db_url, monkeypatch, str(original), ("q1", "q2"))
    kept = [o for o in outcomes if isinstance(o, int)]
    refused = [o for o in outcomes if isinstance(o, StoreError)]
    assert len(kept) == 1 and len(refused) == 1, outcomes
    message = str(refused[0])
    assert "changed since you read it" in message and "rerun" in message
    assert f"build {kept[0]}" in message
    assert len(_newest_overrides(migrated_db_url)) == 1  # nothing else was stored


def test_same_query_by_name_at_the_same_moment_is_refused(
    migrated_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second auditor's tier numbers referred to the ORL before the first override."""
    _stored_build(migrated_db_url)
    outcomes = _race(migrated_db_url, monkeypatch, "audited", ("q1", "q1"))
    assert sorted(type(o).__name__ for o in outcomes) == ["BuildChangedError", "int"]


def test_a_sequential_override_of_an_old_id_is_still_allowed(migrated_db_url: str) -> None:
    """Deriving twice from one id on purpose is not a race: the auditor read both states."""
    original = _stored_build(migrated_db_url)
    run: Callable[..., tuple[int, str, str]] = cli
    for query in ("q1", "q2"):
        code, _, err = run(
            migrated_db_url, "audit", "override", str(original), "--query", query,
            "--merge-tiers", "1", "--reason", "check",
        )  # fmt: skip
        assert code == 0, err


def test_the_cli_refusal_is_one_line(migrated_db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    original = _stored_build(migrated_db_url)
    with store_engine(migrated_db_url) as engine:
        override_build(engine, original, OverrideRequest("q1", "first", merge_tier=1))
    real = builds_service.derived_builds
    monkeypatch.setattr(builds_service, "derived_builds", lambda bind, i: ())  # read before it
    code, out, err = cli(
        migrated_db_url, "audit", "override", str(original), "--query", "q2",
        "--merge-tiers", "1", "--reason", "second",
    )  # fmt: skip
    monkeypatch.setattr(builds_service, "derived_builds", real)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "changed since you read it" in err and "Traceback" not in err
