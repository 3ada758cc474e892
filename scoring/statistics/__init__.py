"""Significance tests, system tiers, power and stability (docs/comparing-systems.md, "Comparing many
systems"); tiers, letters and rank intervals from one relation (docs/comparing-systems.md,
"One family of decisions").

Pure NumPy/SciPy/pandas: nothing here imports :mod:`orlbuild`. The input is a
per-query score panel, a DataFrame with one column per system and one row per
query (or the float64 matrix of a :class:`ScorePanel`).
"""

from scoring.settings import TestSettings
from scoring.statistics.comparison import (
    COMPARISON_COLUMNS,
    SystemComparison,
    system_comparison,
    wins_ties_losses,
)
from scoring.statistics.correction import (
    CORRECTIONS,
    adjust_pvalues,
    bonferroni_adjust,
    holm_adjust,
)
from scoring.statistics.max_t import max_t_pvalues
from scoring.statistics.paired_tests import PAIRED_TESTS, get_paired_test, paired_t_pvalues
from scoring.statistics.panel import ScorePanel, as_panel, score_panels
from scoring.statistics.power import (
    PowerResult,
    ProgressCallback,
    default_budgets,
    power_analysis,
    power_analysis_steps,
)
from scoring.statistics.procedures import TestPlan, default_test, plan_test, resolve_test
from scoring.statistics.randomization import (
    exact_randomization_pvalues,
    pairwise_randomization_pvalues,
    randomization_pvalues,
)
from scoring.statistics.rank_intervals import (
    RankIntervals,
    gaussian_rank_intervals,
    system_rank_intervals,
)
from scoring.statistics.stability import first_budget_reaching, kendall_tau_rows, normalised_auc
from scoring.statistics.tiers import (
    TIER_COLUMNS,
    compact_letters,
    leader_tiers,
    system_tiers,
    verdict_relation,
)
from scoring.statistics.tukey import permutation_ranges, tukey_hsd_pvalues
from scoring.statistics.verdicts import closed_verdicts, rank_bounds_from_verdicts
from scoring.vocabulary import CorrectionName, SignificanceTest

__all__ = [
    "COMPARISON_COLUMNS",
    "CORRECTIONS",
    "PAIRED_TESTS",
    "TIER_COLUMNS",
    "CorrectionName",
    "PowerResult",
    "ProgressCallback",
    "RankIntervals",
    "ScorePanel",
    "SignificanceTest",
    "SystemComparison",
    "TestPlan",
    "TestSettings",
    "adjust_pvalues",
    "as_panel",
    "bonferroni_adjust",
    "closed_verdicts",
    "compact_letters",
    "default_budgets",
    "default_test",
    "exact_randomization_pvalues",
    "first_budget_reaching",
    "gaussian_rank_intervals",
    "get_paired_test",
    "holm_adjust",
    "kendall_tau_rows",
    "leader_tiers",
    "max_t_pvalues",
    "normalised_auc",
    "paired_t_pvalues",
    "pairwise_randomization_pvalues",
    "permutation_ranges",
    "plan_test",
    "power_analysis",
    "power_analysis_steps",
    "randomization_pvalues",
    "rank_bounds_from_verdicts",
    "resolve_test",
    "score_panels",
    "system_comparison",
    "system_rank_intervals",
    "system_tiers",
    "tukey_hsd_pvalues",
    "verdict_relation",
    "wins_ties_losses",
]
