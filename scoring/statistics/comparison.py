"""Compare every pair of systems on every measure (docs/comparing-systems.md, "Comparing many
systems").

For each measure the systems' per-query scores form a :class:`ScorePanel`;
:func:`~scoring.statistics.procedures.plan_test` chooses the test and its
draws, and every pair ``(a, b)`` (column order, ``a`` before ``b``) gets its means, the
mean difference, a two-sided paired p-value, the p-value adjusted over all
pairs of that measure, and per-query wins, ties and losses of ``a``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.errors import ScoringError
from scoring.settings import TestSettings
from scoring.statistics.correction import adjust_pvalues
from scoring.statistics.paired_tests import get_paired_test
from scoring.statistics.panel import FloatMatrix, ScorePanel, as_panel
from scoring.statistics.procedures import TestPlan, plan_test
from scoring.statistics.randomization import exact_randomization_pvalues
from scoring.statistics.tiers import system_tiers, verdict_relation
from scoring.statistics.verdicts import (
    monte_carlo_error,
    near_alpha,
    overlap_sentence,
    overlapping_significant_pairs,
    permutations_to_decide,
    rank_bounds_from_verdicts,
)

__all__ = [
    "COMPARISON_COLUMNS",
    "SystemComparison",
    "borderline_notes",
    "overlap_notes",
    "system_comparison",
    "wins_ties_losses",
]

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
    "implied",
    "p_error",
    "near_alpha",
    "permutations_to_decide",
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


@dataclass(frozen=True)
class SystemComparison:
    """Every pair of systems tested, per measure, with the plan of each test.

    Attributes
    ----------
    pairs
        One row per (measure, pair), the columns of :data:`COMPARISON_COLUMNS`:
        ``significant`` is the verdict of the family (the test's ``p_adjusted <
        alpha``, or ``implied`` by transitivity); ``p_error`` is the Monte Carlo
        standard error of ``p_adjusted`` (NaN for exact and t-test p-values),
        ``near_alpha`` flags a p-value within :data:`~scoring.statistics.verdicts.MC_Z`
        errors of alpha and ``permutations_to_decide`` the draws that would
        settle it.
    plans
        Measure -> the :class:`TestPlan` its pairs were tested with.
    ranks
        One row per (measure, system): ``rank_lo``, ``rank_hi``, the rank
        interval the verdicts give (docs/comparing-systems.md, "One family of
        decisions"; ``None`` when not computed).
    """

    pairs: pd.DataFrame
    plans: Mapping[str, TestPlan]
    ranks: pd.DataFrame | None = None

    @property
    def notes(self) -> list[str]:
        """What was changed from the request (raised permutations...), the pairs within
        Monte Carlo error of alpha, and why significant pairs may share ranks, each line once."""
        return _unique(
            [
                *(p.note for p in self.plans.values()),
                *borderline_notes(self.pairs),
                *overlap_notes(self.pairs),
            ]
        )

    @property
    def warnings(self) -> list[str]:
        """Configurations that can reject only very clear differences, or none, each once."""
        return _unique(p.warning for p in self.plans.values())

    def tiers(self) -> pd.DataFrame:
        """System tiers, letters and rank intervals per measure (:func:`system_tiers`)."""
        return system_tiers(self.pairs)


def _unique(lines: Iterable[str | None]) -> list[str]:
    """The non-empty lines, first occurrence kept."""
    return list(dict.fromkeys(line for line in lines if line))


def borderline_notes(pairs: pd.DataFrame) -> list[str]:
    """One line per measure whose pairs include p-values within Monte Carlo error of alpha.

    Each names the first such pair, its adjusted p-value and error, and the
    ``--permutations`` that would decide all of them.
    """
    if pairs.empty or "near_alpha" not in pairs:
        return []
    lines = []
    flagged = pairs[pairs["near_alpha"].astype(bool)]
    for measure, rows in flagged.groupby("measure", sort=False):
        first = rows.iloc[0]
        count = len(rows)
        needed = int(rows["permutations_to_decide"].max())
        lines.append(
            f"{measure}: {count} pair{'s' if count != 1 else ''} within Monte Carlo error of "
            f"alpha (e.g. {first['a']} vs {first['b']}: adjusted p = "
            f"{first['p_adjusted']:.4g} +- {first['p_error']:.2g}); --permutations "
            f"{needed:,} would decide {'them' if count != 1 else 'it'}"
        )
    return lines


def overlap_notes(pairs: pd.DataFrame) -> list[str]:
    """Per measure, the sentence of :func:`~scoring.statistics.verdicts.overlap_sentence`
    when some significant pair's rank intervals share a rank."""
    if pairs.empty:
        return []
    lines = []
    for measure, rows in pairs.groupby("measure", sort=False):
        means = dict(zip(rows["a"], rows["mean_a"], strict=True))
        means.update(zip(rows["b"], rows["mean_b"], strict=True))
        systems = sorted(means, key=lambda s: (-means[s], s))
        above = verdict_relation(rows, systems)
        lower, upper = rank_bounds_from_verdicts(above)
        overlapping = overlapping_significant_pairs(above, lower, upper)
        named = [(systems[i], systems[j]) for i, j in overlapping]
        sentence = overlap_sentence(str(measure), named)
        if sentence is not None:
            lines.append(sentence)
    return lines


def system_comparison(
    scores: PanelLike | Mapping[str, PanelLike],
    settings: TestSettings | None = None,
    *,
    measure: str = "score",
) -> SystemComparison:
    """Test every pair of systems, per measure (docs/comparing-systems.md, "Comparing many
    systems").

    Parameters
    ----------
    scores
        One panel (DataFrame with one column per system and one row per query,
        or a :class:`ScorePanel`), or a mapping ``measure -> panel``.
    settings
        Default ``TestSettings()``. The test (``randomization``: paired two-sided sign-flip
        test; ``t``; ``tukey-hsd``: randomized Tukey HSD; ``max-t``: its studentized
        step-down form; ``None``: ``max-t`` for more than two systems, else
        ``randomization``), the requested draws (a minimum, raised or replaced by exact
        enumeration by :func:`plan_test` when the smallest attainable adjusted p-value would
        not be below ``alpha / 10``), the correction over the pairs of one measure
        (``None``: ``holm``; not used by ``max-t`` and ``tukey-hsd``), ``alpha`` (a pair is
        ``significant`` when its adjusted p-value is below it, or when a chain of such
        pairs orders it: ``implied``, docs/comparing-systems.md, "One family of
        decisions") and the seed. Every measure
        uses the same random stream, so a measure's result does not depend on which other
        measures are compared.
    measure
        Name used in the ``measure`` column when ``scores`` is a single panel.

    Returns
    -------
    SystemComparison
        The pairs (``diff = mean_a - mean_b``; for ``max-t`` and ``tukey-hsd`` ``p_value``
        and ``p_adjusted`` are both the family-wise p-value) and the plans.
    """
    settings = settings or TestSettings()
    alpha = settings.alpha
    if not 0.0 < alpha < 1.0:
        raise ScoringError(f"alpha must lie in (0, 1), got {alpha}")
    panels = {measure: scores} if isinstance(scores, PanelLike) else dict(scores)
    if not panels:
        raise ScoringError("no measure to compare")
    entropy = np.random.SeedSequence(settings.seed).entropy
    frames = []
    rank_frames: list[pd.DataFrame] = []
    plans = {}
    for name, panel_like in panels.items():
        panel = as_panel(panel_like)
        plan = plan_test(
            settings.test,
            settings.correction,
            n_systems=panel.n_systems,
            n_queries=panel.n_queries,
            permutations=settings.permutations,
            alpha=alpha,
        )
        plans[name] = plan
        diffs = panel.pair_differences()
        # every draw is made on the sorted panel: no p-value depends on the order of
        # the systems or the queries given
        canon = panel.canonical()
        if plan.exact:
            canon_p = exact_randomization_pvalues(canon.pair_differences())
        else:
            rng = np.random.default_rng(np.random.SeedSequence(entropy))
            canon_p = get_paired_test(plan.test.value)(
                canon.scores, canon.pair_index, permutations=plan.permutations or 0, rng=rng
            )
        canon_adjusted = adjust_pvalues(canon_p, plan.correction or "none")
        pvalues, adjusted = _in_panel_order(panel, canon, canon_p, canon_adjusted)
        wins, ties, losses = wins_ties_losses(diffs)
        means = panel.scores.mean(axis=0)
        first, second = panel.pair_index
        frame = pd.DataFrame(
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
        above = verdict_relation(frame, list(panel.systems))
        closed = (above | above.T)[first, second]
        direct = frame["significant"].to_numpy(dtype=bool)
        frame["significant"] = direct | closed
        frame["implied"] = closed & ~direct
        _add_monte_carlo_columns(frame, plan, alpha)
        frames.append(frame)
        lower, upper = rank_bounds_from_verdicts(above)
        rank_frames.append(
            pd.DataFrame(
                {"measure": name, "system": list(panel.systems), "rank_lo": lower, "rank_hi": upper}
            )
        )
    pairs = pd.concat(frames, ignore_index=True).loc[:, list(COMPARISON_COLUMNS)]
    return SystemComparison(
        pairs=pairs, plans=plans, ranks=pd.concat(rank_frames, ignore_index=True)
    )


def _in_panel_order(
    panel: ScorePanel, canon: ScorePanel, *values: npt.NDArray[np.float64]
) -> list[npt.NDArray[np.float64]]:
    """Per-pair values computed on ``canon`` (:meth:`ScorePanel.canonical`), in ``panel``'s
    pair order (a pair's p-value does not depend on which of its systems comes first)."""
    where = {frozenset(pair): k for k, pair in enumerate(canon.pair_names)}
    order = np.array([where[frozenset(pair)] for pair in panel.pair_names], dtype=np.int64)
    return [np.asarray(v, dtype=np.float64)[order] for v in values]


def _add_monte_carlo_columns(frame: pd.DataFrame, plan: TestPlan, alpha: float) -> None:
    """``p_error``, ``near_alpha`` and ``permutations_to_decide`` of one measure's pairs.

    Exact enumeration and the t-test have no Monte Carlo error (NaN, never flagged).
    """
    draws = plan.permutations
    if plan.exact or not draws:
        frame["p_error"] = np.nan
        frame["near_alpha"] = False
        frame["permutations_to_decide"] = pd.array([pd.NA] * len(frame), dtype="Int64")
        return
    p_value = frame["p_value"].to_numpy(dtype=np.float64)
    p_adjusted = frame["p_adjusted"].to_numpy(dtype=np.float64)
    error = monte_carlo_error(p_value, p_adjusted, draws)
    flagged = near_alpha(p_adjusted, error, alpha)
    frame["p_error"] = error
    frame["near_alpha"] = flagged
    frame["permutations_to_decide"] = pd.array(
        [
            permutations_to_decide(float(p), float(q), alpha, draws) if flag else pd.NA
            for p, q, flag in zip(p_value, p_adjusted, flagged, strict=True)
        ],
        dtype="Int64",
    )
