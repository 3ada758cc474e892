"""Compare every pair of systems on every measure (RDQ.md section 9).

For each measure the systems' per-query scores form a :class:`ScorePanel`;
every pair ``(a, b)`` (column order, ``a`` before ``b``) gets its means, the
mean difference, a two-sided paired p-value, the p-value adjusted over all
pairs of that measure, and per-query wins, ties and losses of ``a``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.errors import ScoringError
from scoring.statistics.correction import adjust_pvalues
from scoring.statistics.paired_tests import get_paired_test
from scoring.statistics.panel import FloatMatrix, ScorePanel, as_panel

__all__ = ["COMPARISON_COLUMNS", "compare_systems", "wins_ties_losses"]

COMPARISON_COLUMNS: Final = (
    "measure",
    "a",
    "b",
    "mean_a",
    "mean_b",
    "diff",
    "p_value",
    "p_adjusted",
    "significant",
    "wins",
    "ties",
    "losses",
)

PanelLike = pd.DataFrame | ScorePanel


def wins_ties_losses(
    diffs: FloatMatrix,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Count the queries where ``a`` beats, ties or loses to ``b``, per pair.

    Parameters
    ----------
    diffs
        Per-query differences ``score_a - score_b``, shape ``(n_queries, n_pairs)``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(wins, ties, losses)``, each of shape ``(n_pairs,)``. A tie is an
        exactly equal score (both systems scored by the same code path).
    """
    wins = np.count_nonzero(diffs > 0, axis=0).astype(np.int64)
    losses = np.count_nonzero(diffs < 0, axis=0).astype(np.int64)
    return wins, diffs.shape[0] - wins - losses, losses


def compare_systems(
    scores: PanelLike | Mapping[str, PanelLike],
    *,
    measure: str = "score",
    test: str = "randomization",
    permutations: int = 1000,
    correction: str = "holm",
    alpha: float = 0.05,
    seed: int | None = None,
) -> pd.DataFrame:
    """Test every pair of systems, per measure.

    Parameters
    ----------
    scores
        One panel (DataFrame with one column per system and one row per query,
        or a :class:`ScorePanel`), or a mapping ``measure -> panel``.
    measure
        Name used in the ``measure`` column when ``scores`` is a single panel.
    test
        ``randomization`` (paired two-sided sign-flip test, the default) or ``t``.
    permutations
        Number of random sign vectors of the randomization test.
    correction
        ``holm`` (default), ``bonferroni`` or ``none``; the family is all pairs
        of one measure.
    alpha
        A pair is ``significant`` when its adjusted p-value is below ``alpha``.
    seed
        Seed of the sign flips. Every measure uses the same random stream, so a
        measure's result does not depend on which other measures are compared.

    Returns
    -------
    pandas.DataFrame
        One row per (measure, pair) with the columns of
        :data:`COMPARISON_COLUMNS`; ``diff = mean_a - mean_b``.
    """
    if not 0.0 < alpha < 1.0:
        raise ScoringError(f"alpha must lie in (0, 1), got {alpha}")
    paired_test = get_paired_test(test)
    adjust_pvalues([], correction)  # reject an unknown correction before any work
    panels = {measure: scores} if isinstance(scores, PanelLike) else dict(scores)
    if not panels:
        raise ScoringError("no measure to compare")
    entropy = np.random.SeedSequence(seed).entropy
    frames = []
    for name, panel_like in panels.items():
        panel = as_panel(panel_like)
        diffs = panel.pair_differences()
        rng = np.random.default_rng(np.random.SeedSequence(entropy))
        pvalues = paired_test(panel.scores, panel.pair_index, permutations=permutations, rng=rng)
        adjusted = adjust_pvalues(pvalues, correction)
        wins, ties, losses = wins_ties_losses(diffs)
        means = panel.scores.mean(axis=0)
        first, second = panel.pair_index
        frames.append(
            pd.DataFrame(
                {
                    "measure": name,
                    "a": [panel.systems[i] for i in first],
                    "b": [panel.systems[j] for j in second],
                    "mean_a": means[first],
                    "mean_b": means[second],
                    "diff": diffs.mean(axis=0),
                    "p_value": pvalues,
                    "p_adjusted": adjusted,
                    "significant": adjusted < alpha,
                    "wins": wins,
                    "ties": ties,
                    "losses": losses,
                }
            )
        )
    return pd.concat(frames, ignore_index=True).loc[:, list(COMPARISON_COLUMNS)]
