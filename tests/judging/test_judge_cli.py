"""`orlbuild judge`, then `ingest pairwise`, `build`, `quality`: the judge audited like people."""

from __future__ import annotations

import csv
import math
import random
from pathlib import Path

import pytest
from fake_judge import FakeJudge, serving
from store_cli import cli, cli_json

from tests.judging.test_judge import KEY, write_plan


def people_file(plan: Path, strengths: dict[str, float], path: Path, seed: int = 0) -> None:
    """Two people answering every planned pair by Bradley-Terry, in the plan's order."""
    rng = random.Random(seed)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["query", "annotator", "item_a", "item_b", "winner"])
        for row in csv.DictReader(plan.open(), delimiter="\t"):
            a, b = row["item_a"], row["item_b"]
            p = 1 / (1 + math.exp(strengths[b] - strengths[a]))
            for person in ("ann", "bob"):
                writer.writerow([row["query"], person, a, b, "a" if rng.random() < p else "b"])


def test_judge_ingest_build_quality(
    migrated_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORLB_TEST_KEY", KEY)
    plan = tmp_path / "plan.tsv"
    strengths = write_plan(plan, 400, items=12)
    people = tmp_path / "people.tsv"
    people_file(plan, strengths, people)
    answered = tmp_path / "answered.tsv"
    with serving(FakeJudge(rho=0.4, seed=5)) as url:
        code, _, err = cli(
            migrated_db_url,
            "judge",
            str(plan),
            "-o",
            str(answered),
            "--base-url",
            url,
            "--model",
            "fake-1",
            "--api-key-env",
            "ORLB_TEST_KEY",
            "--concurrency",
            "8",
        )
    assert code == 0, err
    assert KEY not in err and "400 pairs, 800 questions" in err
    for path in (people, answered):
        code, _, err = cli(migrated_db_url, "ingest", "pairwise", str(path))
        assert code == 0, err
    build = cli_json(migrated_db_url, "build", "--source", "pairwise", "--seed", "1")["build"]
    doc = cli_json(migrated_db_url, "quality", str(build))
    (judge,) = doc["judges"]
    assert judge["annotator"] == "llm:fake-1"
    assert abs(judge["first_position_rate"] - 0.7) < 0.06
    assert judge["first_position_low"] < judge["first_position_rate"] < judge["first_position_high"]
    assert 0 < judge["kappa_people"] < 0.8  # a biased judge agrees with people, partly
    assert judge["kappa_low"] <= judge["kappa_people"] <= judge["kappa_high"]
    assert 0.5 < judge["majority_agreement"] < 1
    people_rows = [a for a in doc["annotators"] if a["annotator"] in ("ann", "bob")]
    assert len(people_rows) == 2
    code, out, err = cli(migrated_db_url, "quality", str(build))
    assert code == 0 and "LLM judges" in out, err
