"""``orlbuild calibrate --design``: designs compared at equal budgets (docs/planning.md,
"What planning buys"); small seeded simulations, no database."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from orlbuild.cli.main import app

runner = CliRunner()
SMALL = ["--queries", "6", "--items", "8", "--start", "24", "--budget-per-query", "16"]


def _run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["--quiet", "calibrate", *args])
    return result.exit_code, result.stdout, result.stderr


def test_designs_share_the_start_and_spend_equal_budgets() -> None:
    code, out, err = _run(
        "--design", "complete", "--design", "uniform", "--design", "planned",
        *SMALL, "--rounds", "2", "--tiers", "2-3", "--gap", "1.5", "--seed", "3",
        "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    rows = json.loads(out)
    keys = {(r["design"], r["round"], r["tiering"]) for r in rows}
    assert len(rows) == len(keys) == 3 * 3 * 2  # designs x (start + 2 rounds) x 2 tierings
    assert {r["judgments_per_query"] for r in rows} == {24, 40, 56}
    for column in ("ari", "tau_b", "wrong_orders", "top_size", "settled"):
        assert all(r[column] == r[column] for r in rows), column  # measured, not NaN
    start = {(r["design"], r["tiering"]): r["ari"] for r in rows if r["round"] == 0}
    # the same start judgments for every design: the same round-0 build
    assert len({v for (d, t), v in start.items() if t == "simultaneous"}) == 1
    assert len({v for (d, t), v in start.items() if t == "model"}) == 1
    again = _run(
        "--design", "complete", "--design", "uniform", "--design", "planned",
        *SMALL, "--rounds", "2", "--tiers", "2-3", "--gap", "1.5", "--seed", "3",
        "--format", "json",
    )  # fmt: skip
    assert json.loads(again[1]) == [
        {**r, "seconds": a["seconds"]} for r, a in zip(rows, json.loads(again[1]), strict=True)
    ]


def test_false_splits_under_planned_designs_are_measured() -> None:
    code, out, err = _run(
        "--design", "planned", "--scenario", "equal", *SMALL, "--rounds", "1",
        "--tiering", "simultaneous", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    rows = json.loads(out)
    assert [r["round"] for r in rows] == [0, 1]
    assert all(0.0 <= r["false_split"] <= 1.0 for r in rows)


def test_design_options_are_checked() -> None:
    code, _, err = _run("--design", "planned", "--items", "5-9")
    assert code == 1 and "--items must be one number with --design" in err
    code, _, err = _run("--design", "planned", "--max-per-query", "0")
    assert code == 1 and "--max-per-query must be >= 1" in err
    code, _, err = _run("--design", "planned", "--margin", "-1")
    assert code == 1 and "--margin must be a finite number > 0" in err
    # a word option like every other: Typer's usage error names the words (exit 2)
    code, _, err = _run("--design", "planned", "--scenario", "other")
    assert code == 2 and "'other' is not one of 'mixed', 'equal', 'sparse'" in err


def test_posterior_designs_plan_from_the_posterior() -> None:
    """``--tiering posterior`` with ``--design``: every design measured, its predicted share
    beside the realised one, the rows reproducible; the sparse scenario and a bad ``--fdr``
    are refused with one line."""
    args = ["--design", "uniform", "--design", "planned", "--tiering", "posterior", *SMALL,
            "--rounds", "1", "--tiers", "2-3", "--gap", "1.5", "--format", "json"]  # fmt: skip
    code, out, err = _run(*args)
    assert code == 0, err
    rows = json.loads(out)
    assert [(r["design"], r["round"], r["tiering"]) for r in rows] == [
        ("uniform", 0, "posterior"), ("uniform", 1, "posterior"),
        ("planned", 0, "posterior"), ("planned", 1, "posterior"),
    ]  # fmt: skip
    assert {r["judgments_per_query"] for r in rows} == {24, 40}
    assert all(0.0 <= r["predicted_share"] <= 0.05 + 1e-9 for r in rows)
    assert rows[0]["ari"] == rows[2]["ari"]  # the same start
    again = json.loads(_run(*args)[1])
    assert [{**r, "seconds": 0} for r in again] == [{**r, "seconds": 0} for r in rows]
    for bad, word in ((["--scenario", "sparse"], "sparse"), (["--fdr", "1.5"], "--fdr")):
        code, _, err = _run("--design", "planned", "--tiering", "posterior", *SMALL, *bad)
        assert code == 1 and word in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1
