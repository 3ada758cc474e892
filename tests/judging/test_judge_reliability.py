"""The judge in the build: judge plus people against people alone, and both orders in the
likelihood (docs/llm-judges.md, "Both orders in the likelihood")."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from fake_judge import FakeJudge, serving
from judge_figures import answered_preferences, build_ari, fill_cache, write_tiered_plan

from orlbuild.services.judging import JudgeOptions, judge_plan
from tests.judging.test_judge import KEY, options

RHO = 0.4  # the fake names the item shown first this often: first-position rate 0.7


def _with_judge(people: pd.DataFrame, answered: Path) -> pd.DataFrame:
    return pd.concat([people, answered_preferences(answered).drop(columns="first")])


@pytest.mark.slow
def test_judge_and_people_are_at_least_as_close_to_the_truth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,000 pairs judged over HTTP in both orders (first-position rate 0.7, 5% unparseable);
    people answered half of them, once each. Under --annotators reliability the build from judge
    plus people is at least as close to the true tiers (adjusted Rand) as people alone."""
    monkeypatch.setenv("ORLB_TEST_KEY", KEY)
    plan = tmp_path / "plan.tsv"
    tiered = write_tiered_plan(plan, seed=0)
    out = tmp_path / "answered.tsv"
    with serving(FakeJudge(rho=RHO, seed=0)) as url:
        summary = judge_plan(plan, out, options(url, concurrency=16))
    assert summary.asked == 4000 and summary.failed == 0 and summary.unparseable > 100
    people = build_ari(tiered.people, tiered.truth)
    both = build_ari(_with_judge(tiered.people, out), tiered.truth)
    assert both >= people, (both, people)
    assert both - people > 0.1  # seed 0: 0.27 people alone, 0.53 with the judge (keep)
    # the cache filled in-process holds the same answers as the HTTP run (the simulation
    # below relies on it)
    filled = tmp_path / "filled.tsv"
    chat = options(url).chat
    fill_cache(tmp_path / "filled.sqlite", plan, options(url), seed=0, rho=RHO)
    judge_plan(plan, filled, JudgeOptions(chat=chat, cache=tmp_path / "filled.sqlite"))
    assert filled.read_text() == out.read_text()
