"""Planned data keep the build's guarantee (docs/planning.md, "What planning does not change").

Seeded calibration: all-equal queries, a uniform start, then rounds planned by
``orlbuild plan`` on the build of the data so far; after every round the
share of queries split into several tiers (false splits) must stay at most
0.08 at ``sig = 0.05`` (the target the unplanned builds meet), even though the
planner chose the pairs from the very estimates the build then tests.
"""

from __future__ import annotations

import numpy as np

from orlbuild.builders.calibration.designs import DesignStudy, compare_designs, stopping_rule_check


def test_false_splits_stay_at_sig_under_planned_sampling() -> None:
    study = DesignStudy(
        scenario="equal", items=8, queries=150, start=24, budget_per_query=24, rounds=2, seed=11
    )
    table = compare_designs(study, ["planned"], ["simultaneous"])
    rates = table["false_split"].to_numpy()
    assert len(rates) == 3 and np.all(np.isfinite(rates))
    assert rates.max() <= 0.08, table
    # measured at the start and after each planned round
    assert list(table["judgments_per_query"]) == [24, 48, 72]


def test_model_false_splits_stay_at_sig_when_planned_for_model() -> None:
    """The same with ``--tiering model``, the rounds planned for model's own open cuts.

    ``model`` splits about ``sig`` of all-equal queries before any planning (0.077 here,
    300 queries), so 300 queries keep the binomial noise (0.015) below the gap to 0.08
    that planning must not cross; planning must not raise the rate above the start's."""
    study = DesignStudy(
        scenario="equal", items=8, queries=300, start=24, budget_per_query=24, rounds=2, seed=13
    )
    table = compare_designs(study, ["planned"], ["model"])
    rates = table["false_split"].to_numpy()
    assert list(table["tiering"]) == ["model"] * 3
    assert rates.max() <= 0.08, table
    assert rates[1:].max() <= rates[0] + 0.02, table


def test_settled_queries_keep_their_tiers_when_the_judgments_double() -> None:
    """The stopping rule (docs/planning.md, "Settled"): of the queries the planner calls
    settled, at least 90% keep their tiers when as many fresh judgments again are added."""
    study = DesignStudy(items=6, tiers=(1, 3), gap=1.5, start=120, queries=300, seed=5)
    figures = stopping_rule_check(study)
    assert figures["settled"] >= 0.1  # the rule does settle queries on this design
    assert figures["kept"] >= 0.9, figures
    # settling means something: open queries change far more often
    assert figures["kept_open"] < figures["kept"] - 0.2, figures
