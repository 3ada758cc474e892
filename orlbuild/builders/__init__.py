"""ORL builders: graded, listwise and pairwise routes, significance-based tiers, audit records.

Pure functions over pandas/NumPy inputs (no store access). The entry point is
:func:`build_orls`; the routes, estimators and tiering are importable from
their modules for reuse and testing.

The names below are loaded on first use (PEP 562): the store imports the light
record types from here, and should not pay for choix, SciPy and networkx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scoring.lazy_names import lazy_getattr

if TYPE_CHECKING:
    from orlbuild.builders.audit.overrides import merge_adjacent_tiers, split_tier_at
    from orlbuild.builders.audit.quality import QualityReport, build_quality, raw_preferences
    from orlbuild.builders.build import build_orls
    from orlbuild.builders.parameters import BuildParameters, resolve_parameters
    from orlbuild.builders.tiering.walk import tiers_from_scores
    from orlbuild.records import (
        BuildOutcome,
        QueryBuildError,
        QueryFailure,
        QueryORL,
        TieDecision,
    )

_HOME = {
    "BuildOutcome": "orlbuild.records",
    "BuildParameters": "parameters",
    "QualityReport": "orlbuild.builders.audit.quality",
    "QueryBuildError": "orlbuild.records",
    "QueryFailure": "orlbuild.records",
    "QueryORL": "orlbuild.records",
    "TieDecision": "orlbuild.records",
    "build_orls": "build",
    "build_quality": "orlbuild.builders.audit.quality",
    "merge_adjacent_tiers": "orlbuild.builders.audit.overrides",
    "raw_preferences": "orlbuild.builders.audit.quality",
    "resolve_parameters": "parameters",
    "split_tier_at": "orlbuild.builders.audit.overrides",
    "tiers_from_scores": "orlbuild.builders.tiering.walk",
}

__all__ = [
    "BuildOutcome",
    "BuildParameters",
    "QualityReport",
    "QueryBuildError",
    "QueryFailure",
    "QueryORL",
    "TieDecision",
    "build_orls",
    "build_quality",
    "merge_adjacent_tiers",
    "raw_preferences",
    "resolve_parameters",
    "split_tier_at",
    "tiers_from_scores",
]


__getattr__ = lazy_getattr(__name__, _HOME)
