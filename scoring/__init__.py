"""scoring: RDQ and the standard baselines over ordered reference lists (ORLs).

The pure scoring core of orlbuild; it imports nothing from :mod:`orlbuild`.

>>> from scoring import ORL, rdq
>>> orl = ORL.from_tiers([["d1"], ["d2", "d3"]])
>>> round(rdq(orl, ["d2", "d1", "d3"], 3, penalty="m1"), 4)
0.8148
"""

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
from scoring.evaluate import EvaluationResult, evaluate, evaluate_run
from scoring.measures import MEASURES, Measure, parse_measure, parse_measures
from scoring.orl import ORL
from scoring.penalties import register_penalty
from scoring.rdq import rdq
from scoring.run import rankings_from_frame
from scoring.weights import WEIGHT_PRESETS, Weights

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
    "evaluate",
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
]
