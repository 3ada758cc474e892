"""The one path from stored scores to panels, tests and power (services/evaluations).

Power figures are identical serially, on two local processes and on a
two-worker Dask cluster; the progress bar's total is the work actually done;
``compare``, ``power`` and ``report`` test the same panels.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from evaluation_store import evaluation_store
from store_cli import cli, cli_json

from orlbuild.executor import Executor, resolve_executor
from orlbuild.services.build_evaluation import PowerSpec, evaluate_stored_build
from orlbuild.services.comparisons import (
    compare_panels,
    power_budgets,
    power_for_panels,
    power_steps,
)
from orlbuild.services.evaluations import panels_for_systems
from orlbuild.vocabulary import ExecutorKind
from scoring.settings import TestSettings
from tests.stores import store_engine

POWER_ARGS = [
    "power", "-b", "graded", "-s", "ideal", "-s", "reversed", "-s", "partial",
    "-m", "RDQm2-a1@5", "-m", "AP@5", "--budgets", "5,10,15,20",
    "--subsamples", "20", "--permutations", "100", "--seed", "3",
]  # fmt: skip


@pytest.fixture
def store(migrated_db_url: str, tmp_path: Path) -> str:
    return evaluation_store(migrated_db_url, tmp_path)


def noisy_panels(seed: int = 0) -> dict[str, pd.DataFrame]:
    """Four systems of growing quality on 60 queries, two measures."""
    rng = np.random.default_rng(seed)
    base = rng.random((60, 1))
    panels = {}
    for measure in ("m1", "m2"):
        values = base + 0.05 * np.arange(4) + rng.normal(0.0, 0.2, (60, 4))
        panels[measure] = pd.DataFrame(values, columns=["a", "b", "c", "d"])
    return panels


def power_documents(executor: Executor | None) -> dict[str, dict[str, object]]:
    panels = noisy_panels()
    plan = power_budgets(panels, [10, 20, 30, 40, 50])
    steps: list[int] = []
    results = power_for_panels(
        panels,
        plan,
        subsamples=25,
        permutations=200,
        seed=7,
        executor=executor,
        advance=lambda n=1: steps.append(n),
    )
    assert sum(steps) == power_steps(plan, 25)  # the bar counts every subsample once
    return {m: r.to_dict() for m, r in results.items()}


def test_power_on_two_processes_equals_serial() -> None:
    serial = power_documents(None)
    assert power_documents(resolve_executor(2)) == serial
    assert power_documents(Executor(ExecutorKind.PROCESSES, jobs=3)) == serial
    # a different seed does change the figures (the comparison can fail)
    panels = noisy_panels()
    other = power_for_panels(
        panels,
        power_budgets(panels, [10, 20, 30, 40, 50]),
        subsamples=25,
        permutations=200,
        seed=8,
    )
    assert {m: r.to_dict() for m, r in other.items()} != serial


def test_power_on_a_dask_cluster_equals_serial(dask_scheduler: str) -> None:
    assert power_documents(resolve_executor(1, dask_scheduler)) == power_documents(None)


def test_power_command_same_document_for_any_jobs(
    store: str, dask_scheduler: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial = cli_json(store, *POWER_ARGS)
    assert cli_json(store, *POWER_ARGS, "--jobs", "2") == serial
    assert cli_json(store, *POWER_ARGS, "--scheduler", dask_scheduler) == serial
    monkeypatch.setenv("ORLBUILD_SCHEDULER", dask_scheduler)
    assert cli_json(store, *POWER_ARGS) == serial
    monkeypatch.delenv("ORLBUILD_SCHEDULER")
    code, _, err = cli(store, *POWER_ARGS, "--jobs", "0")
    assert code != 0 and "--jobs must be a positive number of processes or -1" in err
    code, _, err = cli(store, *POWER_ARGS, "--scheduler", "localhost")
    assert code != 0 and "tcp://HOST:PORT" in err


def test_report_power_on_two_processes_equals_serial(store: str, tmp_path: Path) -> None:
    args = [
        "report", "-b", "graded", "-s", "ideal", "-s", "reversed", "-s", "partial",
        "-m", "RDQm2-a1@5", "--budgets", "10,20", "--subsamples", "15",
        "--permutations", "100",
    ]  # fmt: skip
    pages = []
    for jobs in ("1", "2"):
        out = tmp_path / f"report{jobs}.html"
        code, _, err = cli(store, *args, "--jobs", jobs, "-o", str(out))
        assert code == 0, err
        pages.append(out.read_text(encoding="utf-8"))
    assert "Power" in pages[0]
    assert pages[0].count("<svg") == pages[1].count("<svg")


def test_report_progress_total_is_the_work_done(store: str) -> None:
    """Regression: the total came from the first system's queries and every power measure.

    With ``--missing skip`` and the ``partial`` system, panels hold 20 of 30
    queries, so budget 25 does not fit them; KendallTau is undefined for every
    query (runs do not retrieve exactly the ORL's items) and has no panel. The
    old total counted both; the bar then never reached its end.
    """
    totals: list[int] = []
    done: list[int] = []

    class Bar:
        def __init__(self, total: int) -> None:
            totals.append(total)

        def __enter__(self) -> object:
            return lambda n=1: done.append(n)

        def __exit__(self, *exc: object) -> None:
            return None

    with store_engine(store) as engine:
        evaluation = evaluate_stored_build(
            engine,
            "graded",
            ["RDQm2-a1@5", "KendallTau"],
            systems=["ideal", "reversed", "partial"],
            missing="skip",
            compare=TestSettings(permutations=100),
            power=PowerSpec((10, 20, 25), 10, 100, 0.05, 0, ("RDQm2-a1@5", "KendallTau")),
            progress=Bar,
        )
    assert evaluation.power is not None and set(evaluation.power) == {"RDQm2-a1@5"}
    assert evaluation.power["RDQm2-a1@5"].budgets == (10, 20)
    assert totals == [sum(done)] == [2 * 10 + 1]


def test_report_and_compare_test_the_same_panels(store: str) -> None:
    """``report`` and ``compare`` lay out and test the same panels (one code path).

    The report's old panels were an outer join re-sorted by query id,
    compare's kept the first system's order; with stored ORLs (sorted by
    query) the two orders agree, so this guards the shared path rather than
    reproducing an observed difference. Under ``--missing skip`` the first
    system (``partial``) answers 20 of 30 queries.
    """
    systems = ["partial", "ideal", "reversed"]
    with store_engine(store) as engine:
        scored = panels_for_systems(engine, "graded", systems, measures=["AP@5"], missing="skip")
        direct = compare_panels(scored.panels, TestSettings(permutations=200, seed=4))
        evaluation = evaluate_stored_build(
            engine,
            "graded",
            ["AP@5"],
            systems=systems,
            missing="skip",
            compare=TestSettings(permutations=200, seed=4),
        )
    panel = scored.panels["AP@5"]
    assert list(panel.index) == list(scored.scores["partial"].per_query.index)
    pd.testing.assert_frame_equal(
        evaluation.comparisons.reset_index(drop=True), direct.pairs.reset_index(drop=True)
    )
    doc = json.loads(json.dumps(evaluation.comparison_summary()))
    assert doc["test"] == direct.plans["AP@5"].test.value


def test_pipeline_with_two_jobs_equals_serial(tmp_path: Path) -> None:
    """The sample pipeline's scores, tests and power: the same with ``--jobs 2``."""
    import shutil

    from typer.testing import CliRunner

    from orlbuild.cli.main import app

    sample = Path(__file__).resolve().parents[2] / "sample_data"
    documents = []
    for jobs in ("1", "2"):
        target = tmp_path / f"jobs{jobs}"
        shutil.copytree(sample, target, ignore=shutil.ignore_patterns("*.db*", "*.html", "*.png"))
        result = CliRunner().invoke(
            app,
            [
                "--quiet",
                "pipeline",
                str(target / "pipeline.toml"),
                "--format",
                "json",
                "--jobs",
                jobs,
            ],
        )
        assert result.exit_code == 0, result.stderr
        documents.append(json.loads(result.stdout))
    serial, parallel = documents
    assert serial["power"], "the sample config runs a power analysis"
    for key in ("mean", "significant", "pairs", "comparison", "power", "warnings"):
        assert parallel[key] == serial[key], key


def test_report_and_power_parse_budgets_alike(store: str, tmp_path: Path) -> None:
    """Regression: ``report --budgets`` had its own parser (exit 2, other wording)."""
    base = ["-b", "graded", "-s", "ideal", "-s", "reversed", "-m", "AP@5"]
    for command in (["power", *base], ["report", *base, "-o", str(tmp_path / "r.html")]):
        code, _, err = cli(store, *command, "--budgets", "10,x")
        assert code == 1, command
        assert "--budgets: 'x' is not a positive whole number" in err, command
    assert not (tmp_path / "r.html").exists()
