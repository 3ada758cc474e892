"""Several systems scored on the executor (the pipeline's and ``report``'s scoring) equal serial.

Each system is one task; the values, missing queries and warnings are those
of a serial run, on two local processes and on a two-worker Dask cluster.
Runs shorter than
:data:`~orlbuild.services.evaluations.SCORE_PARALLEL_MIN_ENTRIES` are scored
in this process; the tests lower the threshold to send their small runs out.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from evaluation_store import evaluation_store

import orlbuild.services.evaluations as service
from orlbuild.errors import InputError
from orlbuild.executor import resolve_executor
from tests.stores import store_engine

MEASURES = ["RDQm2-a1@5", "nDCG(grade=native)@5", "AP", "KendallTau"]
SYSTEMS = ["ideal", "reversed", "partial", "twin"]


@pytest.fixture
def store(migrated_db_url: str, tmp_path: Path) -> str:
    return evaluation_store(migrated_db_url, tmp_path)


@pytest.fixture
def sent_out(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every run goes to the executor; records how many systems each parallel map got."""
    calls: list[int] = []
    original = service.map_ordered

    def spy(*args: object, **kwargs: object) -> object:
        calls.append(int(kwargs["n_tasks"]))  # type: ignore[call-overload]
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(service, "SCORE_PARALLEL_MIN_ENTRIES", 0)
    monkeypatch.setattr(service, "map_ordered", spy)
    return calls


def scored(url: str, executor: object, missing: str = "zero") -> dict[str, object]:
    with store_engine(url) as engine:
        result = service.score_systems(
            engine,
            "graded",
            SYSTEMS,
            measures=MEASURES,
            missing=missing,  # type: ignore[arg-type]
            executor=executor,  # type: ignore[arg-type]
        )
    return {
        name: (s.per_query, s.missing_queries, s.queries_without_orl, s.evaluation.warnings)
        for name, s in result.items()
    }


def assert_same(got: dict[str, object], expected: dict[str, object]) -> None:
    assert list(got) == list(expected)
    for name, (frame, *rest) in expected.items():  # type: ignore[misc]
        other, *other_rest = got[name]  # type: ignore[misc]
        pd.testing.assert_frame_equal(other, frame)
        assert other_rest == rest, name


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_systems_scored_one_task_each_equal_serial(
    store: str, dask_scheduler: str, missing: str, sent_out: list[int]
) -> None:
    serial = scored(store, None, missing)
    assert sent_out == []
    assert serial["partial"][1]  # type: ignore[index]  # it misses queries
    for executor in (
        resolve_executor(2),
        resolve_executor(3),
        resolve_executor(scheduler=dask_scheduler),
    ):
        assert_same(scored(store, executor, missing), serial)
    assert sent_out == [len(SYSTEMS)] * 3
    # the comparison can fail: another missing policy gives other values
    other = scored(store, None, "skip" if missing == "zero" else "zero")
    assert not other["partial"][0].equals(serial["partial"][0])  # type: ignore[index]


def test_short_runs_are_scored_here(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Below the threshold ``--jobs 2`` scores in this process: nothing is sent out."""
    calls: list[object] = []
    monkeypatch.setattr(service, "map_ordered", lambda *a, **k: calls.append(a))
    assert_same(scored(store, resolve_executor(2)), scored(store, None))
    assert calls == []


def test_a_failing_system_stops_parallel_scoring_like_serial(
    store: str, monkeypatch: pytest.MonkeyPatch, sent_out: list[int]
) -> None:
    """A run with no ORL query among several systems: the same InputError, serial or not."""
    original = service.load_run

    def no_orl_query(bind: object, collection: str, system: str) -> pd.DataFrame:
        run = original(bind, collection, system)  # type: ignore[arg-type]
        return run.assign(query="nowhere") if system == "partial" else run

    monkeypatch.setattr(service, "load_run", no_orl_query)
    messages = []
    for executor in (None, resolve_executor(2)):
        with pytest.raises(InputError) as caught:
            scored(store, executor)
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and "partial" in messages[0]
    assert sent_out == [len(SYSTEMS)]
