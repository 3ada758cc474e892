"""Comparing per-query scores: pairs, power, and measures that are undefined everywhere."""

from __future__ import annotations

import numpy as np
import pandas as pd

from orlbuild.services.build_evaluation import (
    BuildEvaluation,
    PowerSpec,
    comparable_panels,
    comparison_power,
)
from orlbuild.services.comparisons import compare_panels
from scoring.settings import TestSettings
from scoring.statistics import SignificanceTest


def compare_scores(
    per_query: dict[str, pd.DataFrame],
    measures: list[str],
    *,
    compare: TestSettings,
    power: PowerSpec | None = None,
) -> tuple[pd.DataFrame, dict | None]:
    """The comparison and power steps of ``evaluate_stored_build`` on scores in memory."""
    panels = comparable_panels(per_query, measures)
    if not panels:
        return pd.DataFrame(), None
    comparison = compare_panels(panels, compare)
    results = None if power is None else comparison_power(panels, comparison, power)
    return comparison.pairs, results


MEASURES = ["KendallTau@10", "RDQm2-a1@10"]


def scores(seed: int = 0) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    queries = pd.Index([f"q{i}" for i in range(20)], name="query")
    frames = {}
    for system, level in (("good", 0.8), ("fair", 0.6), ("poor", 0.3)):
        values = np.clip(level + rng.normal(0, 0.1, size=20), 0, 1)
        frames[system] = pd.DataFrame(
            {"KendallTau@10": np.nan, "RDQm2-a1@10": values}, index=queries
        )
    return frames


def test_pairs_of_every_defined_measure_and_power() -> None:
    power = PowerSpec(
        budgets=(5, 10, 50), subsamples=20, permutations=100, seed=1, measures=tuple(MEASURES)
    )
    pairs, results = compare_scores(
        scores(),
        MEASURES,
        compare=TestSettings(test=SignificanceTest.randomization, permutations=200, seed=1),
        power=power,
    )
    assert set(pairs["measure"]) == {"RDQm2-a1@10"}  # Kendall tau is never defined here
    assert len(pairs) == 3 and pairs["significant"].all()
    assert results is not None and list(results) == ["RDQm2-a1@10"]
    assert results["RDQm2-a1@10"].budgets == (5, 10)  # 50 > 20 queries is left out


def test_one_system_or_nothing_defined_gives_no_comparison() -> None:
    one = {"good": scores()["good"]}
    assert compare_scores(one, MEASURES, compare=TestSettings())[0].empty
    frames = {s: f[["KendallTau@10"]] for s, f in scores().items()}
    pairs, results = compare_scores(frames, ["KendallTau@10"], compare=TestSettings())
    assert pairs.empty and results is None


def test_the_evaluation_carries_the_test_plan_to_the_report_and_the_summary() -> None:
    """Default test for three systems, what the plan changed, tiers in the JSON summary."""
    per_query = scores()
    power = PowerSpec(
        budgets=(10,), subsamples=10, permutations=100, seed=1, measures=("RDQm2-a1@10",)
    )
    panels = comparable_panels(per_query, MEASURES)
    hsd = compare_panels(panels, TestSettings(permutations=100, seed=1))
    assert hsd.plans["RDQm2-a1@10"].test is SignificanceTest.max_t
    results = comparison_power(panels, hsd, power)
    assert results is not None and results["RDQm2-a1@10"].test == "max-t"  # same test
    evaluation = BuildEvaluation(
        build={},
        orls={},
        per_query=per_query,
        comparisons=hsd.pairs,
        compare=TestSettings(permutations=100),
        plans=hsd.plans,
    )
    note = "Note: max-t: 100 permutations raised to 200"
    assert evaluation.plan_messages()[0].startswith(note)
    data = evaluation.report_data("t")
    assert any(line.startswith(note) for line in data.notes)
    assert "Tukey HSD" in data.test and data.correction == "family-wise (max-T)"
    summary = evaluation.comparison_summary()
    assert summary["test"] == "max-t" and summary["correction"] is None
    assert [t["system"] for t in summary["tiers"]] == ["good", "fair", "poor"]
