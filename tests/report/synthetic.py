"""Synthetic report inputs: four systems of known quality, ORLs with an audit, power curves."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from orlbuild.report import ReportData
from scoring.settings import TestSettings
from scoring.statistics import power_analysis, system_comparison

SYSTEMS = ("alpha", "beta", "gamma", "delta")
QUALITY = (0.8, 0.75, 0.5, 0.2)
MEASURES = ("RDQm2-a1@10", "nDCG@10")
N_QUERIES = 30


@dataclass(frozen=True)
class Decision:
    """A tie decision with the fields the report reads."""

    leader: str
    item: str
    diff: float
    se: float | None
    p_value: float | None
    decision: str
    rule: str


@dataclass(frozen=True)
class Orl:
    """A query's ORL with scores, intervals and decisions."""

    query: str
    tiers: list[list[str]]
    scores: dict[str, float]
    intervals: dict[str, tuple[float, float] | None]
    decisions: list[Decision] = field(default_factory=list)


def make_orl(query: str, tiers: list[list[str]]) -> Orl:
    """Scores fall by one per tier; every non-leader gets a decision against its tier's leader."""
    scores, intervals, decisions = {}, {}, []
    for t, tier in enumerate(tiers):
        for j, item in enumerate(tier):
            scores[item] = 3.0 - t - 0.1 * j
            intervals[item] = (scores[item] - 0.4, scores[item] + 0.4)
    for t, tier in enumerate(tiers):
        previous_leader = tiers[t - 1][0] if t else None
        if previous_leader is not None:
            diff = scores[previous_leader] - scores[tier[0]]
            decisions.append(
                Decision(
                    previous_leader, tier[0], diff, 0.3, 0.001, "separated", "leader test p < 0.05"
                )
            )
        for item in tier[1:]:
            diff = scores[tier[0]] - scores[item]
            decisions.append(
                Decision(tier[0], item, diff, 0.3, 0.6, "tied", "leader test p >= 0.05")
            )
    return Orl(query, tiers, scores, intervals, decisions)


def per_query_scores(seed: int = 3) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    queries = [f"q{i + 1}" for i in range(N_QUERIES)]
    frames = {}
    for system, quality in zip(SYSTEMS, QUALITY, strict=True):
        values = np.clip(quality + rng.normal(0.0, 0.15, size=(N_QUERIES, len(MEASURES))), 0.0, 1.0)
        frames[system] = pd.DataFrame(
            values, index=pd.Index(queries, name="query"), columns=list(MEASURES)
        )
    frames["delta"].iloc[4, 1] = np.nan  # an undefined value
    return frames


def synthetic_report(
    *, with_power: bool = True, title: str = "Synthetic <evaluation> & co"
) -> ReportData:
    per_query = per_query_scores()
    panels = {m: pd.DataFrame({s: per_query[s][m] for s in SYSTEMS}).fillna(0.0) for m in MEASURES}
    comparisons = system_comparison(
        panels, TestSettings(test="randomization", permutations=500, seed=1)
    ).pairs
    power = None
    if with_power:
        power = {
            m: power_analysis(
                panels[m], budgets=[5, 10, 20], subsamples=40, permutations=200, seed=2
            )
            for m in MEASURES
        }
    orls = [
        make_orl("q1", [["d1"], ["d2", "d3"], ["d4"]]),
        make_orl("q2", [["x<script>alert(1)</script>"]]),
        make_orl("q10", [["a", "b", "c"], ["d", "e"], ["f"], ["g", "h", "i", "j"]]),
    ]
    return ReportData(
        title=title,
        per_query=per_query,
        comparisons=comparisons,
        orls=orls,
        build={
            "name": "synthetic",
            "id": 7,
            "method": "bt",
            "parameters": {"sig": 0.05, "seed": 3},
        },
        power=power,
        notes=["missing queries score 0 (trec_eval -c)"],
        alpha=0.05,
        correction="holm",
    )
