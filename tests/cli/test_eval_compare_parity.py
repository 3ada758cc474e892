"""``orlbuild eval --compare`` and ``orlbuild compare`` give the same verdicts on the same data.

A build of the sample collection is exported as qrels; ``eval --compare``
scores the run files against that file, ``compare`` scores the same runs
ingested into the store against the build. Both use the same test settings and
defaults (``scoring.settings.TestSettings``), so with three or four runs both
run max-t and every pair gets the same p-value and verdict.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orlbuild.cli.main import app
from tests.sample_store import SAMPLE, SYSTEMS, graded_sample_store

MEASURES = ("RDQm2-a1@10", "RDQm1@10")
runner = CliRunner()


def _ok(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, f"{args}\n{result.output}"
    return result.stdout


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path]:
    folder = tmp_path_factory.mktemp("parity")
    db = ["--db", str(folder / "orlbuild.db")]
    graded_sample_store(db, _ok)
    qrels = folder / "g.qrels"
    _ok([*db, "orl", "export", "g", "--format", "qrels", "-o", str(qrels)])
    return db, qrels


def _verdicts(pairs: list[dict]) -> dict[tuple[str, str, str], tuple[float, bool]]:
    return {
        (p["measure"], *sorted((p["a"], p["b"]))): (p["p_adjusted"], p["significant"])
        for p in pairs
    }


@pytest.mark.parametrize("systems", [SYSTEMS[:2], SYSTEMS[:3], SYSTEMS])
@pytest.mark.parametrize("options", [[], ["--test", "randomization"], ["--alpha", "0.2"]])
def test_eval_compare_and_compare_agree(
    store: tuple[list[str], Path], systems: tuple[str, ...], options: list[str]
) -> None:
    db, qrels = store
    measures = [w for m in MEASURES for w in ("-m", m)]
    settings = ["--permutations", "400", "--seed", "5", *options]
    runs = [str(SAMPLE / "runs" / f"{s}.trec") for s in systems]
    evaluated = json.loads(
        _ok(["eval", str(qrels), *runs, *measures, "--compare", *settings, "--format", "json"])
    )
    chosen = [w for s in systems for w in ("--system", s)]
    compared = json.loads(
        _ok([*db, "compare", "--build", "g", *chosen, *measures, *settings, "--format", "json"])
    )
    got, want = _verdicts(evaluated["pairs"]), _verdicts(compared["pairs"])
    assert (
        got.keys() == want.keys()
        and len(got) == len(MEASURES) * len(systems) * (len(systems) - 1) // 2
    )
    for key, (p_adjusted, significant) in want.items():
        assert got[key][0] == pytest.approx(p_adjusted), key
        assert got[key][1] == significant, key
    # one JSON shape (issue 38): the same settings, naming the test, permutations and seed
    assert evaluated["settings"] == compared["settings"]
    assert evaluated["settings"]["seed"] == 5 and evaluated["settings"]["permutations"] >= 400
    pair_keys = {frozenset(p) for p in compared["pairs"]}
    assert {frozenset(p) for p in evaluated["pairs"]} == pair_keys
    expected_test = "max-t" if len(systems) > 2 and options[:1] != ["--test"] else None
    if expected_test:
        assert compared["settings"]["test"] == expected_test
