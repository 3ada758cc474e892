"""The stopping rule on planned data: settled queries keep their tiers when every pair judged so
far is asked once more (orlbuild.builders.calibration.designs.stopping_rule_check)."""

from __future__ import annotations

from orlbuild.builders.calibration.designs import DesignStudy, stopping_rule_check


def test_settled_queries_keep_their_tiers_after_planned_rounds() -> None:
    study = DesignStudy(
        items=6, tiers=(1, 3), gap=1.5, queries=80, start=60, budget_per_query=30, seed=5
    )
    check = stopping_rule_check(study, planned_rounds=2)
    assert check["settled"] >= 0.25  # enough settled queries for the share to mean something
    assert check["kept"] >= 0.9
    assert check["kept"] > check["kept_open"]


def test_settled_model_queries_keep_their_tiers_after_planned_rounds() -> None:
    """``model``'s stopping rule (docs/planning.md, "Settled"): the chance that doubling
    changes a cut or moves an item is at most ``MODEL_SETTLE_RISK``."""
    study = DesignStudy(
        items=6, tiers=(1, 3), gap=1.5, queries=80, start=60, budget_per_query=30, seed=6
    )
    check = stopping_rule_check(study, planned_rounds=2, tiering="model")
    assert check["settled"] >= 0.1
    assert check["kept"] >= 0.9, check
    assert check["kept"] > check["kept_open"]
