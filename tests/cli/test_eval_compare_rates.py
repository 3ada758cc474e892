"""Error rates of ``orlbuild eval --compare --test randomization`` (+ Holm), by seeded simulation.

``--compare`` calls :func:`scoring.statistics.system_comparison` with the
settings of ``orlbuild compare`` on the per-query panels of the runs; with
``--test randomization`` (Holm by default) these simulations measure what it
guarantees: a family-wise error rate
per measure of at most ``alpha`` when no run differs, and power when one does.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scoring.settings import TestSettings
from scoring.statistics import system_comparison

ALPHA = 0.05
EXPERIMENTS = 400
QUERIES = 40


def _panel(rng: np.random.Generator, shift: float) -> pd.DataFrame:
    """Per-query scores of three runs: a query effect, noise, and ``shift`` added to run c."""
    query_effect = rng.beta(2, 2, size=(QUERIES, 1))
    scores = np.clip(query_effect + rng.normal(0, 0.1, size=(QUERIES, 3)), 0, 1)
    scores[:, 2] = np.clip(scores[:, 2] + shift, 0, 1)
    return pd.DataFrame(scores, columns=["a", "b", "c"])


def _rejections(shift: float, seed: int) -> np.ndarray:
    """Per experiment, which of the pairs (a,b), (a,c), (b,c) were declared significant."""
    rng = np.random.default_rng(seed)
    out = np.zeros((EXPERIMENTS, 3), dtype=bool)
    for i in range(EXPERIMENTS):
        pairs = system_comparison(
            _panel(rng, shift),
            TestSettings(
                test="randomization", permutations=400, correction="holm", alpha=ALPHA, seed=i
            ),
        ).pairs
        out[i] = pairs["significant"].to_numpy(dtype=bool)
    return out


def test_family_wise_error_rate_under_the_null_is_at_most_alpha() -> None:
    rejected = _rejections(shift=0.0, seed=11)
    fwer = rejected.any(axis=1).mean()
    # Binomial standard error at alpha: sqrt(.05 * .95 / 400) = 0.011; allow 2 SE.
    assert fwer <= ALPHA + 2 * np.sqrt(ALPHA * (1 - ALPHA) / EXPERIMENTS), fwer
    assert fwer > 0.0  # the test is not vacuous: the null is sometimes rejected


def test_power_against_a_real_difference() -> None:
    rejected = _rejections(shift=0.1, seed=12)
    # Pairs (a,c) and (b,c) differ by 0.1, per-query noise sd 0.14, 40 queries: z ~ 4.5.
    assert rejected[:, 1].mean() > 0.9
    assert rejected[:, 2].mean() > 0.9
    # The pair with no difference keeps its error rate.
    assert rejected[:, 0].mean() <= ALPHA + 2 * np.sqrt(ALPHA * (1 - ALPHA) / EXPERIMENTS)
