"""Planned data keep the build's guarantee (docs/planning.md, "What planning does not change").

Seeded calibration: all-equal queries, a uniform start, then rounds planned by
``orlbuild plan`` on the build of the data so far; after every round the
share of queries split into several tiers (false splits) must stay at most
0.08 at ``sig = 0.05`` (the target the unplanned builds meet), even though the
planner chose the pairs from the very estimates the build then tests.
"""

from __future__ import annotations

import numpy as np

from orlbuild.builders.design_calibration import DesignStudy, compare_designs


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
