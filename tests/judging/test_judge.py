"""``orlbuild judge`` against a fake endpoint on the loopback (docs/llm-judges.md)."""

from __future__ import annotations

import csv
import json
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from fake_judge import FakeJudge, serving

from orlbuild.errors import ConfigError
from orlbuild.judging.chat_client import ChatSettings, JudgeRequestError
from orlbuild.judging.prompts import parse_verdict
from orlbuild.services.judging import JudgeOptions, judge_plan, sidecar_path
from orlbuild.vocabulary import Verdict

KEY = "sk-test-very-secret-0123456789"


def write_plan(path: Path, pairs: int, *, items: int = 40, seed: int = 0) -> dict[str, float]:
    """A plan with texts: ``pairs`` pairs over ``items`` items per query, strengths in the texts."""
    rng = random.Random(seed)
    strengths = {f"d{i}": rng.gauss(0, 1.5) for i in range(items)}
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(
            ["query", "query_text", "item_a", "item_a_text", "item_b", "item_b_text", "winner"]
        )
        seen = 0
        while seen < pairs:
            a, b = rng.sample(sorted(strengths), 2)
            q = f"q{seen % 5}"
            writer.writerow(
                [
                    q,
                    f"query {q}",
                    a,
                    f"[id {a}] strength={strengths[a]:.4f}",
                    b,
                    f"[id {b}] strength={strengths[b]:.4f}",
                    "",
                ]
            )
            seen += 1
    return strengths


def options(url: str, **chat: object) -> JudgeOptions:
    settings = {
        "base_url": url,
        "model": "fake-1",
        "concurrency": 8,
        "timeout": 0.5,
        "retries": 3,
        "backoff": 0.01,
    }
    settings.update(chat)
    return JudgeOptions(chat=ChatSettings(**settings), api_key_env="ORLB_TEST_KEY")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        ("Verdict: A", Verdict.a),
        ("reasoning\n**Verdict: B**", Verdict.b),
        ("[[A]]", Verdict.a),
        ("final verdict: tie.", Verdict.tie),
        ('```json\n{"verdict": "b"}\n```', Verdict.b),
        ('{"winner": "tie", "why": "same"}', Verdict.tie),
        ('{"verdict": "maybe"}', Verdict.unparseable),
        ("A is better, but B is longer", Verdict.unparseable),
        ("Verdict: A\nActually no.", Verdict.unparseable),
        ("", Verdict.unparseable),
    ],
)
def test_parse_rule(answer: str, verdict: Verdict) -> None:
    assert parse_verdict(answer) is verdict


def test_faults_are_retried_or_recorded_and_resume_asks_only_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORLB_TEST_KEY", KEY)
    plan = tmp_path / "plan.tsv"
    write_plan(plan, 30)
    rows = list(csv.DictReader(plan.open(), delimiter="\t"))
    faults = {}
    for row, fault in zip(rows, ["429", "500", "timeout", "drop", "malformed"], strict=False):
        faults[f"{row['item_a']}|{row['item_b']}"] = [fault]
    lost = rows[5]
    faults[f"{lost['item_a']}|{lost['item_b']}"] = ["500"] * 4  # one more than the 3 retries
    judge = FakeJudge(faults=faults, seed=1)
    out = tmp_path / "answered.tsv"
    with serving(judge) as url:
        summary = judge_plan(plan, out, options(url))
        assert summary.questions == 60
        assert summary.failed == 1  # the one whose retries ran out: recorded, not cached
        assert summary.asked == 59
        first = len(judge.requests)
        again = judge_plan(plan, out, options(url))
    assert again.cached == 59 and again.asked == 1 and again.failed == 0
    assert len(judge.requests) - first == 1  # only the unanswered question was asked again
    side = [json.loads(line) for line in sidecar_path(out).read_text().splitlines()]
    assert len(side) == 60
    answered = list(csv.DictReader(out.open(), delimiter="\t"))
    unparseable = sum(r["verdict"] == "unparseable" for r in side)
    assert len(answered) == 60 - unparseable
    assert {r["annotator"] for r in answered} == {"llm:fake-1"}
    # the key: sent, never written
    assert set(judge.headers) == {f"Bearer {KEY}"}
    for path in tmp_path.iterdir():
        assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in repr(summary)


def test_refused_request_stops_without_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORLB_TEST_KEY", KEY)
    plan = tmp_path / "plan.tsv"
    write_plan(plan, 3)
    row = next(csv.DictReader(plan.open(), delimiter="\t"))
    judge = FakeJudge(faults={f"{row['item_a']}|{row['item_b']}": ["401"]})
    with serving(judge) as url, pytest.raises(JudgeRequestError) as caught:
        judge_plan(plan, tmp_path / "a.tsv", options(url, concurrency=1))
    assert KEY not in str(caught.value) and "401" in str(caught.value)


def test_missing_key_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ORLB_TEST_KEY", raising=False)
    plan = tmp_path / "plan.tsv"
    write_plan(plan, 1)
    with pytest.raises(ConfigError, match="ORLB_TEST_KEY"):
        judge_plan(plan, tmp_path / "a.tsv", options("http://127.0.0.1:9/v1"))


def test_interrupt_keeps_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORLB_TEST_KEY", KEY)
    plan = tmp_path / "plan.tsv"
    write_plan(plan, 40)
    out = tmp_path / "a.tsv"
    calls = {"n": 0}

    def stop_after_ten(answers: int, tokens: int) -> None:
        calls["n"] += 1
        if answers == 10:
            raise KeyboardInterrupt

    judge = FakeJudge()
    with serving(judge) as url:
        summary = judge_plan(plan, out, options(url, concurrency=1), progress=stop_after_ten)
        assert summary.interrupted and summary.asked == 10
        asked_before = len(judge.requests)
        rest = judge_plan(plan, out, options(url))
    assert rest.cached == 10 and rest.asked == 70
    assert len(judge.requests) - asked_before == 70


def test_first_position_and_flip_rate_recovered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,000 pairs in both orders: first-position rate 0.7 +- 0.03, flip rate as injected."""
    from judge_figures import judge_figures_from_files

    monkeypatch.setenv("ORLB_TEST_KEY", KEY)
    plan = tmp_path / "plan.tsv"
    strengths = write_plan(plan, 2000)
    out = tmp_path / "a.tsv"
    with serving(FakeJudge(rho=0.4, seed=3)) as url:
        summary = judge_plan(plan, out, options(url, concurrency=16))
    assert summary.unparseable > 0
    figures, expected_flip = judge_figures_from_files(out, plan, strengths, rho=0.4)
    assert abs(figures["first_position_rate"] - 0.7) < 0.03
    assert abs(figures["flip_rate"] - expected_flip) < 0.03
    assert figures["first_position_low"] < 0.7 < figures["first_position_high"]
    assert not math.isnan(figures["inconsistent_share"])


def test_fake_answers_do_not_depend_on_arrival_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One request at a time or 16 at once, with faults retried: the same answered file."""
    monkeypatch.setenv("ORLB_TEST_KEY", KEY)
    plan = tmp_path / "plan.tsv"
    write_plan(plan, 200)
    rows = list(csv.DictReader(plan.open(), delimiter="\t"))
    outputs = []
    for concurrency, faulty in ((1, False), (16, True)):
        faults = {f"{r['item_a']}|{r['item_b']}": ["500"] for r in rows[:20]} if faulty else {}
        out = tmp_path / f"a{concurrency}.tsv"
        with serving(FakeJudge(seed=7, faults=faults)) as url:
            judge_plan(plan, out, options(url, concurrency=concurrency))
        outputs.append((out.read_text(), sidecar_path(out).read_text()))
    assert outputs[0] == outputs[1]
    assert "unparseable" in outputs[0][1] and "\tb\n" in outputs[0][0]


def test_any_plan_source_plugs_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A source other than a file (as a round of the store will be) gives the same answers."""
    from orlbuild.services.judging import PlanFile, PlanRow, read_plan_rows

    @dataclass(frozen=True)
    class Rows:
        held: tuple[PlanRow, ...]

        def rows(self) -> Iterator[PlanRow]:
            return iter(self.held)

    monkeypatch.setenv("ORLB_TEST_KEY", KEY)
    plan = tmp_path / "plan.tsv"
    write_plan(plan, 30)
    with serving(FakeJudge(seed=2)) as url:
        shared = replace(options(url), cache=tmp_path / "cache.sqlite")
        judge_plan(PlanFile(plan), tmp_path / "file.tsv", shared)
        held = Rows(tuple(read_plan_rows(plan)))
        summary = judge_plan(held, tmp_path / "rows.tsv", shared)
    assert summary.pairs == 30 and summary.cached == 60  # the same questions, by key
    assert (tmp_path / "rows.tsv").read_text() == (tmp_path / "file.tsv").read_text()
