"""``build --jobs/--scheduler`` and ``[execution]``: the same stored build, the same errors."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import func, select
from store_cli import cli, cli_json

from orlbuild.builders import BuildParameters
from orlbuild.errors import ConfigError
from orlbuild.executor import resolve_executor
from orlbuild.pipeline.config import load_config
from orlbuild.pipeline.runner import run_pipeline
from orlbuild.pipeline.specs import ExecutionSpec
from orlbuild.services.builds import build_and_store
from orlbuild.store.builds import get_build, load_query_orls
from orlbuild.store.models import Build, OrlEntry, TieDecisionRow
from tests.builders.store_data import store_judgments
from tests.stores import store_engine

SAMPLE = Path(__file__).parents[2] / "sample_data"


def pairwise_frame(seed: int, n_queries: int, n_items: int, per_query: int) -> pd.DataFrame:
    """Bradley-Terry comparisons, strengths spread over two units per query."""
    rng = np.random.default_rng(seed)
    strengths = np.linspace(0.0, -2.0, n_items)
    frames = []
    for q in range(n_queries):
        first = rng.integers(0, n_items, per_query)
        second = (first + rng.integers(1, n_items, per_query)) % n_items
        first_wins = rng.random(per_query) < 1 / (1 + np.exp(strengths[second] - strengths[first]))
        frames.append(
            pd.DataFrame(
                {
                    "query": f"q{q:02d}",
                    "annotator": [f"a{k}" for k in rng.integers(0, 3, per_query)],
                    "winner": [f"d{i}" for i in np.where(first_wins, first, second)],
                    "loser": [f"d{i}" for i in np.where(first_wins, second, first)],
                    "tie": False,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def stored(url: str, build: int) -> tuple[str, list[str], dict[str, object]]:
    """Everything a build stored that must not depend on where it ran."""
    code, tsv, err = cli(url, "orl", "export", str(build), "--format", "tsv")
    assert code == 0, err
    decisions = cli_json(url, "audit", str(build))["decisions"]
    with store_engine(url) as engine:
        orls = load_query_orls(engine, build)
        parameters = get_build(engine, build).parameters
    rows = [repr({k: v for k, v in d.items() if k != "build"}) for d in decisions]
    return tsv + repr(orls), rows, parameters


def test_jobs_and_scheduler_store_the_same_bootstrap_build(
    migrated_db_url: str, dask_scheduler: str
) -> None:
    url = migrated_db_url
    store_judgments(url, "pairwise", pairwise_frame(7, n_queries=10, n_items=7, per_query=60))
    options = ["build", "--source", "pairwise", "--method", "rank-centrality"]
    options += ["--bootstrap", "30", "--seed", "4"]
    runs = {
        "serial": ("--jobs", "1"),
        "two processes": ("--jobs", "2"),
        "dask": ("--scheduler", dask_scheduler),
    }
    builds = {where: cli_json(url, *options, *extra)["build"] for where, extra in runs.items()}
    results = {where: stored(url, build) for where, build in builds.items()}
    serial_orls, serial_decisions, serial_params = results["serial"]
    assert len(serial_decisions) > 10
    assert any("separated" in d for d in serial_decisions)
    assert "jobs" not in serial_params and "scheduler" not in serial_params
    for where in ("two processes", "dask"):
        orls, decisions, params = results[where]
        assert orls == serial_orls, where
        assert decisions == serial_decisions, where
        assert params == serial_params, where


def test_a_failing_query_in_a_worker_is_one_line_and_stores_nothing(
    migrated_db_url: str, dask_scheduler: str
) -> None:
    url = migrated_db_url
    frame = pairwise_frame(3, n_queries=8, n_items=5, per_query=40)
    # q05 gets two items compared only with each other: two components, which
    # fails the query (--disconnected fail, the default).
    lone = pd.DataFrame(
        {"query": "q05", "annotator": "a0", "winner": ["x1"], "loser": ["x2"], "tie": False}
    )
    store_judgments(url, "pairwise", pd.concat([frame, lone], ignore_index=True))
    errors = []
    for extra in (("--jobs", "1"), ("--jobs", "2"), ("--scheduler", dask_scheduler)):
        code, out, err = cli(url, "build", "--source", "pairwise", "--seed", "1", *extra)
        assert code == 1, (extra, out, err)
        assert out == ""
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "q05" in lines[0] and "Traceback" not in err, err
        errors.append(lines[0])
    assert len(set(errors)) == 1, errors
    with store_engine(url) as engine, engine.connect() as connection:
        counts = [
            connection.scalar(select(func.count()).select_from(table))
            for table in (Build, OrlEntry, TieDecisionRow)
        ]
    assert counts == [0, 0, 0]


def test_bad_jobs_and_scheduler_are_one_line_errors(migrated_db_url: str) -> None:
    for extra, expected in (
        (("--jobs", "0"), "--jobs must be a positive number"),
        (("--scheduler", "localhost"), "--scheduler must be an address"),
    ):
        code, _, err = cli(migrated_db_url, "build", "--source", "pairwise", *extra)
        assert code == 1 and expected in err and len(err.strip().splitlines()) == 1, err


def test_pipeline_execution_table(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "data")
    config_path = tmp_path / "data" / "pipeline.toml"
    text = config_path.read_text(encoding="utf-8")
    assert load_config(config_path).execution == ExecutionSpec()
    config_path.write_text(text + '\n[execution]\njobs = 0\nscheduler = "x"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="2 problems") as caught:
        load_config(config_path)
    assert "execution.jobs: --jobs must be a positive number" in str(caught.value)
    assert "execution.scheduler: --scheduler must be an address" in str(caught.value)
    config_path.write_text(text + "\n[execution]\njobs = 2\n", encoding="utf-8")
    config = load_config(config_path)
    assert config.execution == ExecutionSpec(jobs=2)
    lines: list[str] = []
    parallel = run_pipeline(
        config, db_url=f"sqlite:///{tmp_path / 'parallel.db'}", log=lines.append
    )
    assert "builds run on 2 processes" in lines
    config_path.write_text(text, encoding="utf-8")
    serial = run_pipeline(load_config(config_path), db_url=f"sqlite:///{tmp_path / 'serial.db'}")
    assert [b.name for b in parallel.builds] == [b.name for b in serial.builds]
    for result, db in ((parallel, "parallel.db"), (serial, "serial.db")):
        with store_engine(f"sqlite:///{tmp_path / db}") as engine:
            orls = [repr(load_query_orls(engine, b.build_id)) for b in result.builds]
        lines.append(repr(orls))
    assert lines[-1] == lines[-2]
    assert "q01" in lines[-1]


def test_progress_counts_finished_queries_on_two_processes(migrated_db_url: str) -> None:
    store_judgments(
        migrated_db_url, "pairwise", pairwise_frame(9, n_queries=12, n_items=5, per_query=30)
    )
    calls: list[int] = []
    totals: list[int] = []

    @contextmanager
    def progress(total: int) -> Iterator[Callable[[int], None]]:
        totals.append(total)
        yield calls.append

    with store_engine(migrated_db_url) as engine:
        build_and_store(
            engine,
            BuildParameters(source="pairwise", seed=1),
            progress=progress,
            executor=resolve_executor(2),
        )
    assert totals == [12]
    assert sum(calls) == 12 and len(calls) > 1  # chunk by chunk, as queries finish
