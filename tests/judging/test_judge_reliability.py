"""The judge in the build: judge plus people against people alone, and both orders in the
likelihood (docs/llm-judges.md, "Both orders in the likelihood")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fake_judge import FakeJudge, serving
from judge_figures import answered_preferences, build_ari, fill_cache, write_tiered_plan

from orlbuild.builders.audit.judge_quality import judge_figures
from orlbuild.services.judging import JudgeOptions, judge_plan
from orlbuild.vocabulary import Disagreement
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


def _both_readings(tmp_path: Path, seed: int) -> tuple[float, float, float, Path, Path]:
    """ARI of people alone, with the judge under keep, and under tie; the two answered files."""
    plan = tmp_path / f"plan{seed}.tsv"
    tiered = write_tiered_plan(plan, seed=seed)
    chat = options("http://127.0.0.1:9/v1").chat  # nothing is asked: the cache holds it all
    cache = tmp_path / f"cache{seed}.sqlite"
    fill_cache(cache, plan, JudgeOptions(chat=chat), seed=seed, rho=RHO)
    files = []
    for reading in (Disagreement.keep, Disagreement.tie):
        out = tmp_path / f"{reading.value}{seed}.tsv"
        summary = judge_plan(plan, out, JudgeOptions(chat=chat, cache=cache, disagreement=reading))
        assert summary.asked == 0 and summary.cached == 4000
        files.append(out)
    people = build_ari(tiered.people, tiered.truth)
    keep, tie = (build_ari(_with_judge(tiered.people, f), tiered.truth) for f in files)
    return people, keep, tie, files[0], files[1]


@pytest.mark.slow
def test_both_orders_in_the_likelihood_keep_against_tie(tmp_path: Path) -> None:
    """Seeds 0-9 (docs/llm-judges.md, "Both orders in the likelihood"): people alone 0.34,
    with the judge 0.67 (keep) and 0.72 (tie), mean adjusted Rand. Tie reads closer to the
    truth, but it erases the judge's position bias from what is stored: quality then sees a
    first-position rate of 0.5 and no flips, so keep stays the default."""
    figures = np.array([_both_readings(tmp_path, seed)[:3] for seed in range(10)])
    people, keep, tie = figures.mean(axis=0)
    assert (figures[:, 1] >= figures[:, 0]).all() and (figures[:, 2] >= figures[:, 0]).all()
    assert keep - people > 0.25 and tie - people > 0.25
    assert 0.0 < tie - keep < 0.1
    _, _, _, kept, tied = _both_readings(tmp_path, 0)
    seen = {}
    for name, path in (("keep", kept), ("tie", tied)):
        frame = answered_preferences(path)
        seen[name] = judge_figures(frame).iloc[0]
    assert abs(seen["keep"]["first_position_rate"] - 0.7) < 0.03
    # near 0.5: only the pairs with one order parsed still show the bias
    assert abs(seen["tie"]["first_position_rate"] - 0.5) < 0.03
    assert seen["tie"]["flip_rate"] == 0.0 < seen["keep"]["flip_rate"]
