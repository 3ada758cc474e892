"""Significance tests, power and stability for comparing systems (RDQ.md section 9).

Pure NumPy/SciPy/pandas: nothing here imports :mod:`orlbuild`. The input is a
per-query score panel, a DataFrame with one column per system and one row per
query (or the float64 matrix of a :class:`ScorePanel`).
"""

from scoring.statistics.comparison import COMPARISON_COLUMNS, compare_systems, wins_ties_losses
from scoring.statistics.correction import (
    CORRECTIONS,
    adjust_pvalues,
    bonferroni_adjust,
    holm_adjust,
)
from scoring.statistics.paired_tests import PAIRED_TESTS, get_paired_test, paired_t_pvalues
from scoring.statistics.panel import ScorePanel, as_panel, score_panels
from scoring.statistics.power import (
    PowerResult,
    ProgressCallback,
    default_budgets,
    power_analysis,
    power_analysis_steps,
)
from scoring.statistics.randomization import (
    exact_randomization_pvalues,
    pairwise_randomization_pvalues,
    randomization_pvalues,
)
from scoring.statistics.stability import first_budget_reaching, kendall_tau_rows, normalised_auc

__all__ = [
    "COMPARISON_COLUMNS",
    "CORRECTIONS",
    "PAIRED_TESTS",
    "PowerResult",
    "ProgressCallback",
    "ScorePanel",
    "adjust_pvalues",
    "as_panel",
    "bonferroni_adjust",
    "compare_systems",
    "default_budgets",
    "exact_randomization_pvalues",
    "first_budget_reaching",
    "get_paired_test",
    "holm_adjust",
    "kendall_tau_rows",
    "normalised_auc",
    "paired_t_pvalues",
    "pairwise_randomization_pvalues",
    "power_analysis",
    "power_analysis_steps",
    "randomization_pvalues",
    "score_panels",
    "wins_ties_losses",
]
