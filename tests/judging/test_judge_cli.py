"""`orlbuild judge`, then `ingest pairwise`, `build`, `quality`: the judge audited like people."""

from __future__ import annotations

import csv
import math
import random
import time
from pathlib import Path

import pytest
from fake_judge import FakeJudge, serving
from store_cli import cli, cli_json, one_error_line

from orlbuild.judging.chat_client import JudgeUnreachableError
from orlbuild.services.judging import judge_plan
from tests.judging.test_judge import KEY, options, write_plan


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


@pytest.mark.parametrize(
    ("base_url", "words"),
    [
        ("http://127.0.0.1:{port}/v1", ("cannot reach the judge", "connection refused")),
        # the key in the URL's user part is not shown either
        (f"http://user:{KEY}@no-such-host.invalid/v1?key={KEY}", ("cannot reach the judge",)),
    ],
)
def test_unreachable_endpoint_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base_url: str, words: tuple[str, ...]
) -> None:
    """Connection refused or a host that does not resolve: one line, exit 1, no key."""
    from fake_judge import _free_port

    monkeypatch.setenv("ORLB_TEST_KEY", KEY)
    plan = tmp_path / "plan.tsv"
    write_plan(plan, 50)
    out = tmp_path / "answered.tsv"
    url = base_url.format(port=_free_port())
    args = ["judge", str(plan), "-o", str(out), "--base-url", url, "--model", "fake-1"]
    started = time.monotonic()
    result = cli(f"sqlite:///{tmp_path / 'store.db'}", *args, "--api-key-env", "ORLB_TEST_KEY")
    line = one_error_line(*result, *words)
    assert time.monotonic() - started < 10  # not 5 retries with backoff per question
    assert KEY not in line
    for path in tmp_path.iterdir():
        assert KEY.encode() not in path.read_bytes(), path


def test_endpoint_gone_mid_run_stops_after_the_retries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server answers, then goes away: the next question's retries run out and the run
    stops with what was answered kept (a rerun against a live server asks only the rest)."""
    monkeypatch.setenv("ORLB_TEST_KEY", KEY)
    plan = tmp_path / "plan.tsv"
    write_plan(plan, 20)
    out = tmp_path / "answered.tsv"
    judge = FakeJudge()

    def stop_after_five(answers: int, tokens: int) -> None:
        if answers == 5:
            judge.stop()

    with (
        serving(judge) as url,
        pytest.raises(JudgeUnreachableError, match="after 4 attempts") as caught,
    ):
        judge_plan(plan, out, options(url, concurrency=1), progress=stop_after_five)
    assert KEY not in str(caught.value) and "connection refused" in str(caught.value)
    with serving(FakeJudge(port=judge.port)) as again:  # the same URL: the same cache keys
        rest = judge_plan(plan, out, options(again))
    assert rest.cached == 5 and rest.asked == 35
