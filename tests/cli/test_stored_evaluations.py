"""``orlbuild score|compare|power|results`` through CliRunner on a migrated store.

The store holds graded and listwise judgments of 30 queries and four systems'
runs: ``ideal`` (by grade), ``twin`` (the same lists), ``reversed`` (each list
backwards) and ``partial`` (answers only the first 20 queries, noisy order).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from evaluation_store import N_QUERIES, evaluation_store
from store_cli import cli, cli_json

from orlbuild.orl_io.eval_files import read_run_file
from orlbuild.store import load_run
from orlbuild.store.builds import load_build_orls
from scoring import evaluate_run
from scoring.settings import TestSettings
from scoring.statistics import score_panels, system_comparison
from tests.stores import store_engine

MEASURES = ["RDQm2-a1@5", "nDCG(grade=native)@5", "AP@5", "KendallTau"]


def measure_args(names: list[str]) -> list[str]:
    return [arg for name in names for arg in ("-m", name)]


@pytest.fixture
def store(migrated_db_url: str, tmp_path: Path) -> str:
    return evaluation_store(migrated_db_url, tmp_path)


def expected_scores(url: str, system: str, measures: list[str], missing: str) -> pd.DataFrame:
    with store_engine(url) as engine:
        orls = load_build_orls(engine, "graded")
        run = load_run(engine, "default", system)
        return evaluate_run(orls, run, measures, missing=missing).to_frame()  # type: ignore[arg-type]


def assert_document_matches(doc: dict, expected: pd.DataFrame) -> None:  # type: ignore[type-arg]
    assert list(doc["per_query"]) == list(expected.index)
    for query, row in expected.iterrows():
        for measure, value in row.items():
            got = doc["per_query"][query][measure]
            assert (got is None) if np.isnan(value) else got == pytest.approx(value, abs=1e-12)
    for measure in expected.columns:
        mean = expected[measure].mean(skipna=True)
        got = doc["mean"][measure]
        assert (got is None) if np.isnan(mean) else got == pytest.approx(mean, abs=1e-12)


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_score_equals_scoring_evaluate(store: str, missing: str) -> None:
    for system in ("ideal", "partial"):
        doc = cli_json(
            store, "score", "--build", "graded", "--system", system,
            *measure_args(MEASURES), "--missing", missing,
        )  # fmt: skip
        assert doc["system"] == system and doc["build"]["name"] == "graded"
        assert doc["conventions"]["missing"].startswith(missing)
        assert_document_matches(doc, expected_scores(store, system, MEASURES, missing))
    assert len(doc["per_query"]) == (N_QUERIES if missing == "zero" else 20)


def test_score_run_file_equals_scoring_evaluate(store: str, tmp_path: Path) -> None:
    run_file = tmp_path / "reversed.trec"
    doc = cli_json(store, "score", "-b", "graded", "--run", str(run_file), *measure_args(MEASURES))
    with store_engine(store) as engine:
        orls = load_build_orls(engine, "graded")
    assert doc["system"] == "reversed"
    assert_document_matches(doc, evaluate_run(orls, read_run_file(run_file), MEASURES).to_frame())


def test_score_table_csv_and_errors(store: str) -> None:
    code, out, _ = cli(
        store, "score", "-b", "graded", "-s", "ideal", "-m", "AP@5", "--format", "csv"
    )
    assert code == 0 and out.splitlines()[0] == "measure,mean"
    code, out, _ = cli(store, "score", "-b", "graded", "-s", "ideal", "-m", "AP@5", "--per-query")
    assert code == 0 and "q29" in out and "mean" in out
    code, _, err = cli(store, "score", "-b", "lists", "-s", "ideal", "-m", "nDCG(grade=native)@5")
    assert code == 1 and "needs native grades" in err and "listwise" in err
    assert "Traceback" not in err
    code, _, err = cli(store, "score", "-b", "graded", "-m", "AP@5")
    assert code == 1 and "exactly one of --system" in err
    code, _, err = cli(store, "score", "-b", "graded", "-s", "nobody", "-m", "AP@5")
    assert code == 1 and "no system 'nobody'" in err
    code, _, err = cli(store, "score", "-b", "graded", "-s", "ideal", "-m", "APP@5", "-m", "RDQ@x")
    assert code == 1 and "'APP@5'" in err and "'RDQ@x'" in err
    code, _, err = cli(store, "score", "-b", "nope", "-s", "ideal", "-m", "AP@5")
    assert code == 1 and "no build 'nope'" in err


def test_saved_results_list_show_export(store: str, tmp_path: Path) -> None:
    names = ["RDQm2-a1@5", "KendallTau"]
    args = ["score", "-b", "graded", "-s", "partial", *measure_args(names), "--missing", "skip"]
    scored = cli_json(store, *args, "--save")
    saved_id = scored["evaluation"]["id"]
    cli_json(store, "score", "-b", "lists", "-s", "ideal", "-m", "AP@5", "--save")

    listed = cli_json(store, "results", "list")["evaluations"]
    assert [e["id"] for e in listed] == [saved_id + 1, saved_id]
    only = cli_json(store, "results", "list", "--build", "graded", "--system", "partial")
    assert [e["id"] for e in only["evaluations"]] == [saved_id]
    assert only["evaluations"][0]["measures"] == "RDQm2-a1@5, KendallTau"

    shown = cli_json(store, "results", "show", str(saved_id))
    for key in ("build", "system", "mean", "per_query", "conventions"):
        assert shown[key] == scored[key]
    assert shown["evaluation"]["missing"] == "skip"

    code, out, _ = cli(store, "results", "export", str(saved_id))
    exported = pd.read_csv(io.StringIO(out), index_col="query")
    expected = expected_scores(store, "partial", names, "skip")
    pd.testing.assert_frame_equal(
        exported, expected, check_names=False, check_index_type=False, rtol=0, atol=1e-15
    )
    target = tmp_path / "export.json"
    code, _, _ = cli(
        store, "results", "export", str(saved_id), "--format", "json", "-o", str(target)
    )
    assert code == 0 and json.loads(target.read_text())["per_query"] == scored["per_query"]
    code, _, err = cli(store, "results", "show", "999")
    assert code == 1 and "no saved evaluation 999" in err


def test_compare_matches_the_library_and_finds_real_differences(store: str) -> None:
    systems = ["ideal", "twin", "reversed"]
    names = ["RDQm2-a1@5", "AP@5"]
    args = ["compare", "-b", "graded", *[a for s in systems for a in ("-s", s)]]
    doc = cli_json(store, *args, *measure_args(names), "--permutations", "500", "--seed", "3")
    pairs = pd.DataFrame(doc["pairs"])
    assert len(pairs) == 2 * 3
    by_pair = pairs.set_index(["measure", "a", "b"])
    for measure in names:
        same = by_pair.loc[(measure, "ideal", "twin")]
        assert same["p_value"] == 1.0 and not same["significant"]
        assert (same["wins"], same["ties"], same["losses"]) == (0, N_QUERIES, 0)
        reverse = by_pair.loc[(measure, "ideal", "reversed")]
        assert reverse["p_value"] < 0.01 and reverse["significant"]
        assert reverse["diff"] > 0 and reverse["wins"] > 25

    frames = {s: expected_scores(store, s, names, "zero") for s in systems}
    # three systems: the default test is max-t (step-down Tukey HSD: family-wise, no correction)
    expected = system_comparison(
        score_panels(frames, names), TestSettings(test=None, permutations=500, seed=3)
    ).pairs
    pd.testing.assert_frame_equal(pairs, expected, check_dtype=False)
    assert doc["settings"]["test"] == "max-t" and doc["settings"]["correction"] is None
    assert doc["settings"]["queries"]["AP@5"] == 30
    # rank intervals: ideal and twin are tied and above reversed, which is last for sure
    ranks = {(r["measure"], r["system"]): (r["rank_lo"], r["rank_hi"]) for r in doc["systems"]}
    for measure in names:
        assert ranks[(measure, "ideal")] == ranks[(measure, "twin")] == (1, 2)
        assert ranks[(measure, "reversed")] == (3, 3)

    t_doc = cli_json(store, *args, "-m", "AP@5", "--test", "t", "--correction", "none")
    assert t_doc["pairs"][1]["p_value"] < 1e-6 and t_doc["settings"]["permutations"] is None


def test_compare_needs_two_systems_and_drops_undefined_queries(store: str) -> None:
    code, _, err = cli(store, "compare", "-b", "graded", "-s", "ideal", "-m", "AP@5")
    assert code == 1 and "at least two --system" in err
    code, _, err = cli(
        store, "compare", "-b", "graded", "-s", "ideal", "-s", "partial", "-m", "AP@5",
        "--missing", "skip",
    )  # fmt: skip
    assert code == 0 and "10 queries left out" in err
    assert "partial: 10 ORL queries are missing from the run (left out)" in err


def test_power_json_plot_and_reproducibility(store: str, tmp_path: Path) -> None:
    plot = tmp_path / "power.png"
    args = [
        "power", "-b", "graded", "-s", "ideal", "-s", "reversed", "-s", "twin", "--test",
        "randomization",
        "-m", "RDQm2-a1@5", "-m", "AP@5", "--budgets", "5,10,20",
        "--subsamples", "30", "--permutations", "200", "--seed", "1",
    ]  # fmt: skip
    doc = cli_json(store, *args, "--plot", str(plot))
    assert set(doc["measures"]) == {"RDQm2-a1@5", "AP@5"}
    rdq = doc["measures"]["RDQm2-a1@5"]
    assert set(rdq["power"]) == {"5", "10", "20"} and set(rdq["stability"]) == {"5", "10", "20"}
    assert rdq["discriminative_power"] == pytest.approx(2 / 3)  # ideal and twin are equal
    assert rdq["power"]["20"]["median"] > rdq["power"]["5"]["median"]
    assert rdq["n80"] in (5, 10, 20)
    assert rdq["stability"]["20"] >= rdq["stability"]["5"]
    assert plot.read_bytes()[:4] == b"\x89PNG" and plot.stat().st_size > 20_000
    assert cli_json(store, *args) == doc  # same seed, same numbers

    code, out, _ = cli(store, *args, "--format", "csv")
    assert code == 0 and out.splitlines()[0].startswith("measure,budget,power_median,power_p90")
    code, _, err = cli(store, *args[:-8], "--budgets", "10,50")
    assert code == 1 and "between 1 and the 30 shared queries" in err
    code, _, err = cli(store, *args[:-8], "--budgets", "10,x")
    assert code == 1 and "'x' is not a positive whole number" in err
