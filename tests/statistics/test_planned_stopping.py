"""The stopping rule on planned data: settled queries keep their tiers when every pair judged so
far is asked once more (orlbuild.builders.design_calibration.stopping_rule_check)."""

from __future__ import annotations

from orlbuild.builders.design_calibration import DesignStudy, stopping_rule_check


def test_settled_queries_keep_their_tiers_after_planned_rounds() -> None:
    study = DesignStudy(
        items=6, tiers=(1, 3), gap=1.5, queries=80, start=60, budget_per_query=30, seed=5
    )
    check = stopping_rule_check(study, planned_rounds=2)
    assert check["settled"] >= 0.25  # enough settled queries for the share to mean something
    assert check["kept"] >= 0.9
    assert check["kept"] > check["kept_open"]
