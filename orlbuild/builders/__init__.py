"""ORL builders: graded, listwise and pairwise routes, significance-based tiers, audit records.

Pure functions over pandas/NumPy inputs (no store access). The entry point is
:func:`build_orls`; the routes, estimators and tiering are importable from
their modules for reuse and testing.
"""

from orlbuild.builders.build import build_orls
from orlbuild.builders.overrides import merge_adjacent_tiers, split_tier_at
from orlbuild.builders.parameters import BuildParameters, resolve_parameters
from orlbuild.builders.quality import QualityReport, build_quality, raw_preferences
from orlbuild.builders.results import (
    BuildOutcome,
    QueryBuildError,
    QueryFailure,
    QueryORL,
    TieDecision,
)
from orlbuild.builders.tiering import tiers_from_scores

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
