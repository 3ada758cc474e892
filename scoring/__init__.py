"""scoring: RDQ and the standard baselines over ordered reference lists (ORLs).

The pure scoring core of orlbuild; it imports nothing from :mod:`orlbuild`.

>>> from scoring import ORL, rdq
>>> orl = ORL.from_tiers([["d1"], ["d2", "d3"]])
>>> round(rdq(orl, ["d2", "d1", "d3"], 3, penalty="m1"), 4)
0.8148
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scoring.lazy_names import lazy_getattr

if TYPE_CHECKING:
    from scoring.baselines import (
        average_precision,
        compatibility,
        kendall_tau,
        ndcg,
        precision,
        rank_biased_precision,
        rank_correlation,
        rbp_residual,
        reciprocal_rank,
        spearman_rho,
    )
    from scoring.errors import ScoringError, UnknownMeasureError
    from scoring.evaluation import EvaluationResult, evaluate_run
    from scoring.measures import MEASURES, Measure, parse_measure, parse_measures, with_rel_level
    from scoring.orl import ORL
    from scoring.penalties import register_penalty
    from scoring.rank_deviation import rdq
    from scoring.run import rankings_from_frame
    from scoring.weights import WEIGHT_PRESETS, Weights

#: Public name -> module that defines it, loaded on first use (PEP 562): the
#: command line's option declarations import :mod:`scoring.vocabulary`, and
#: must not pay for NumPy and pandas.
_HOME = {
    "EvaluationResult": "evaluation",
    "evaluate_run": "evaluation",
    "MEASURES": "measures",
    "Measure": "measures",
    "ORL": "orl",
    "ScoringError": "errors",
    "UnknownMeasureError": "errors",
    "WEIGHT_PRESETS": "weights",
    "Weights": "weights",
    "average_precision": "baselines",
    "compatibility": "baselines",
    "kendall_tau": "baselines",
    "ndcg": "baselines",
    "parse_measure": "measures",
    "parse_measures": "measures",
    "precision": "baselines",
    "rank_biased_precision": "baselines",
    "rank_correlation": "baselines",
    "rankings_from_frame": "run",
    "rbp_residual": "baselines",
    "rdq": "rank_deviation",
    "reciprocal_rank": "baselines",
    "register_penalty": "penalties",
    "spearman_rho": "baselines",
    "with_rel_level": "measures",
}

__all__ = [
    "MEASURES",
    "ORL",
    "WEIGHT_PRESETS",
    "EvaluationResult",
    "Measure",
    "ScoringError",
    "UnknownMeasureError",
    "Weights",
    "average_precision",
    "compatibility",
    "evaluate_run",
    "kendall_tau",
    "ndcg",
    "parse_measure",
    "parse_measures",
    "precision",
    "rank_biased_precision",
    "rank_correlation",
    "rankings_from_frame",
    "rbp_residual",
    "rdq",
    "reciprocal_rank",
    "register_penalty",
    "spearman_rho",
    "with_rel_level",
]


__getattr__ = lazy_getattr(__name__, _HOME)
