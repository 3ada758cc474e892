"""Discriminative power, power@n and ranking stability (docs/comparing-systems.md, "Comparing many
systems").

For each query budget ``n``, ``S`` random query subsets of size ``n`` are drawn
without replacement. On each subset every pair of systems is tested (one shared
sign matrix per subset: ``bits (B x n) @ scores (n x systems)``) and the systems
are ordered by their mean score. The power of a pair at ``n`` is the share of
subsets where its test rejects at ``alpha``; the stability at ``n`` is the mean
Kendall tau between the subset orderings and the all-query ordering.

Randomness: the subsets and sign flips of budget ``n`` come from the stream
``SeedSequence(seed, spawn_key=(1, n))`` and those of the all-query test from
``spawn_key=(0,)``, so a budget's result is the same whichever other budgets are
requested, and the same seed reproduces everything.

Parallel work: each budget is one task (:func:`budget_power`, a module-level
function of plain data), so a ``mapper`` (a ``map``-like callable returning
results in task order, e.g. a process pool or a Dask cluster from the
services layer) can run the budgets anywhere: a budget's stream depends only
on ``(seed, n)``, so the figures are identical for any mapper.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from scoring.errors import ScoringError
from scoring.settings import TestSettings
from scoring.statistics.paired_tests import get_paired_test
from scoring.statistics.panel import (
    FloatMatrix,
    FloatVector,
    IndexVector,
    ScorePanel,
    as_panel,
)
from scoring.statistics.procedures import resolve_test
from scoring.statistics.stability import (
    first_budget_reaching,
    kendall_tau_rows,
    normalised_auc,
)
from scoring.vocabulary import SignificanceTest

__all__ = [
    "POWER_THRESHOLD",
    "TAU_THRESHOLD",
    "BudgetTask",
    "PowerMapper",
    "PowerResult",
    "ProgressCallback",
    "budget_power",
    "default_budgets",
    "power_analysis",
    "power_analysis_steps",
]

#: Median power that defines N80.
POWER_THRESHOLD = 0.8
#: Mean Kendall tau that defines the stability budget.
TAU_THRESHOLD = 0.8


#: Called with the number of work steps just completed (one per subsample).
ProgressCallback = Callable[[int], None]


@dataclass(frozen=True, eq=False)
class BudgetTask:
    """The work of one query budget: plain data, picklable, sent to a worker.

    Attributes
    ----------
    scores
        Per-query scores, shape ``(n_queries, n_systems)``.
    pairs
        Row and column indices of the system pairs (``ScorePanel.pair_index``).
    budget
        Queries per subset.
    subsamples
        Subsets drawn.
    permutations
        Draws per test.
    alpha
        Significance level.
    test
        The resolved test name.
    entropy
        Entropy of the root ``SeedSequence``; the budget's stream is
        ``SeedSequence(entropy, spawn_key=(1, budget))``.
    """

    scores: FloatMatrix
    pairs: tuple[IndexVector, IndexVector]
    budget: int
    subsamples: int
    permutations: int
    alpha: float
    test: str
    entropy: int | Sequence[int] | None


#: How budgets are mapped: ``map``-like, results in task order.
PowerMapper = Callable[
    [Callable[[BudgetTask], "tuple[FloatVector, FloatVector]"], Iterable[BudgetTask]],
    Iterable["tuple[FloatVector, FloatVector]"],
]


@dataclass(frozen=True, eq=False)
class PowerResult:
    """Power and stability of one measure over a set of query budgets.

    Attributes
    ----------
    budgets
        Query budgets, ascending.
    pairs
        System pairs ``(a, b)``, in the column order of :attr:`pair_power`.
    pair_power
        Share of subsets where the pair's test rejects, shape ``(n_budgets, n_pairs)``.
    taus
        Kendall tau of every subset ordering against the all-query ordering,
        shape ``(n_budgets, subsamples)``.
    full_pvalues
        p-value of every pair on all queries, shape ``(n_pairs,)``.
    alpha
        Significance level of every test.
    test
        The test used (``max-t`` and ``tukey-hsd`` p-values are family-wise adjusted).
    permutations
        Draws per test (``None`` for the t-test).
    """

    budgets: tuple[int, ...]
    pairs: tuple[tuple[str, str], ...]
    pair_power: FloatMatrix
    taus: FloatMatrix
    full_pvalues: FloatVector
    alpha: float
    test: str = "randomization"
    permutations: int | None = None

    @property
    def discriminative_power(self) -> float:
        """Share of system pairs with ``p < alpha`` on all queries."""
        return float(np.mean(self.full_pvalues < self.alpha))

    @property
    def power_median(self) -> FloatVector:
        """Median power over pairs, per budget."""
        return np.asarray(np.median(self.pair_power, axis=1), dtype=np.float64)

    @property
    def power_p90(self) -> FloatVector:
        """90th percentile of power over pairs (linear interpolation), per budget."""
        return np.asarray(np.percentile(self.pair_power, 90, axis=1), dtype=np.float64)

    @property
    def n80(self) -> int | None:
        """Smallest budget where the median power reaches 0.8 (``None``: never)."""
        return first_budget_reaching(self.budgets, self.power_median, POWER_THRESHOLD)

    @property
    def stability(self) -> FloatVector:
        """Mean Kendall tau per budget."""
        return np.asarray(self.taus.mean(axis=1), dtype=np.float64)

    @property
    def tau80_budget(self) -> int | None:
        """Smallest budget whose mean tau reaches 0.8 (``None``: never)."""
        return first_budget_reaching(self.budgets, self.stability, TAU_THRESHOLD)

    @property
    def auc_tau(self) -> float:
        """Area under the mean-tau curve over the budget range (:func:`normalised_auc`)."""
        return normalised_auc(self.budgets, self.stability)

    def summary(self) -> pd.DataFrame:
        """One row per budget: ``power_median``, ``power_p90``, ``mean_tau``."""
        frame = pd.DataFrame(
            {
                "power_median": self.power_median,
                "power_p90": self.power_p90,
                "mean_tau": self.stability,
            },
            index=pd.Index(self.budgets, name="budget"),
        )
        return frame

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of one measure (issue 5's ``power`` shape)."""
        return {
            "power": {
                str(b): {"median": float(med), "p90": float(p90)}
                for b, med, p90 in zip(self.budgets, self.power_median, self.power_p90, strict=True)
            },
            "n80": self.n80,
            "discriminative_power": self.discriminative_power,
            "stability": {
                str(b): float(tau) for b, tau in zip(self.budgets, self.stability, strict=True)
            },
            "tau80_budget": self.tau80_budget,
            "auc_tau": self.auc_tau,
        }


def default_budgets(n_queries: int, *, step: int = 25, largest: int = 500) -> list[int]:
    """The paper's budgets ``25, 50, ..., 500``, cut at the number of queries.

    With fewer than ``step`` queries the only budget is ``n_queries``.
    """
    budgets = list(range(step, min(largest, n_queries) + 1, step))
    return budgets or [n_queries]


def power_analysis_steps(n_budgets: int, subsamples: int) -> int:
    """Total number of progress steps :func:`power_analysis` reports."""
    return n_budgets * subsamples + 1


def power_analysis(
    scores: pd.DataFrame | ScorePanel,
    *,
    budgets: Sequence[int] | None = None,
    subsamples: int = 300,
    permutations: int = TestSettings.permutations,
    alpha: float = TestSettings.alpha,
    test: str | None = "randomization",
    seed: int | None = None,
    progress: ProgressCallback | None = None,
    mapper: PowerMapper | None = None,
) -> PowerResult:
    """Power@n, N80, discriminative power and ranking stability of one measure.

    Parameters
    ----------
    scores
        Per-query scores: a DataFrame with one column per system and one row per
        query, or a :class:`ScorePanel`.
    budgets
        Query budgets (each between 1 and the number of queries); default
        :func:`default_budgets`.
    subsamples
        Number ``S`` of random query subsets per budget.
    permutations
        Number ``B`` of draws per randomization, Tukey HSD or max-T test.
    alpha
        Significance level of the tests. ``randomization`` and ``t`` are not
        corrected for multiple comparisons (as in the paper's power analysis);
        ``max-t`` and ``tukey-hsd`` are family-wise over all pairs of the subset, so their
        power@n answers "how many queries until this pair separates in a
        comparison of all these systems".
    test
        ``randomization`` (default), ``t``, ``tukey-hsd``, ``max-t``, or ``None``:
        ``max-t`` for more than two systems, else ``randomization``.
    seed
        Seed of the subsets and sign flips (see the module notes).
    progress
        Called with ``1`` after each subsample and after the all-query test;
        the total is :func:`power_analysis_steps`. With a ``mapper`` only the
        all-query test is reported here: the mapper reports the budgets
        (``subsamples`` steps each).
    mapper
        Runs the budgets (:class:`BudgetTask` -> :func:`budget_power`),
        ``map``-like with results in task order. Every budget draws from its
        own stream, so the result is identical for any mapper. Default: a
        plain loop in this process.

    Returns
    -------
    PowerResult
        Per-pair power and per-subset tau; summaries as properties.

    Notes
    -----
    BLAS runs single-threaded here: each product is small (``B x n`` times
    ``n x systems``) and BLAS threads only add synchronisation, which costs a
    factor of four on a busy two-core machine.

    A subset on which all systems tie has no ordering; its tau counts as 0 (no
    agreement) rather than being dropped, which would favour coarse measures.
    If all systems tie on all queries every tau is NaN.
    """
    with threadpool_limits(limits=1, user_api="blas"):
        return _power_analysis(
            as_panel(scores).canonical(),  # draws independent of the systems' order
            budgets,
            subsamples,
            permutations,
            alpha,
            test,
            seed,
            progress,
            mapper,
        )


def _power_analysis(
    panel: ScorePanel,
    budgets: Sequence[int] | None,
    subsamples: int,
    permutations: int,
    alpha: float,
    test: str | None,
    seed: int | None,
    progress: ProgressCallback | None,
    mapper: PowerMapper | None,
) -> PowerResult:
    """:func:`power_analysis` body (with BLAS threads already limited)."""
    chosen = _validated_budgets(budgets, panel.n_queries)
    if subsamples < 1:
        raise ScoringError(f"subsamples must be at least 1, got {subsamples}")
    if not 0.0 < alpha < 1.0:
        raise ScoringError(f"alpha must lie in (0, 1), got {alpha}")
    chosen_test = resolve_test(test, panel.n_systems)
    if permutations < 1:
        raise ScoringError(f"permutations must be at least 1, got {permutations}")
    paired_test = get_paired_test(chosen_test.value)
    advance = progress if progress is not None else _no_progress
    entropy = np.random.SeedSequence(seed).entropy
    pairs = panel.pair_index
    n_pairs = pairs[0].size

    full_rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(0,)))
    full_pvalues = paired_test(panel.scores, pairs, permutations=permutations, rng=full_rng)
    advance(1)

    tasks = [
        BudgetTask(
            panel.scores,
            pairs,
            budget,
            subsamples,
            permutations,
            alpha,
            chosen_test.value,
            entropy,
        )
        for budget in chosen
    ]
    if mapper is None:
        outcomes = [_budget_power(task, advance) for task in tasks]
    else:
        outcomes = list(mapper(budget_power, tasks))
    pair_power = np.empty((len(chosen), n_pairs), dtype=np.float64)
    taus = np.empty((len(chosen), subsamples), dtype=np.float64)
    for row, (power_row, tau_row) in enumerate(outcomes):
        pair_power[row] = power_row
        taus[row] = tau_row
    return PowerResult(
        budgets=tuple(chosen),
        pairs=tuple(panel.pair_names),
        pair_power=pair_power,
        taus=taus,
        full_pvalues=full_pvalues,
        alpha=alpha,
        test=chosen_test.value,
        permutations=None if chosen_test is SignificanceTest.t else permutations,
    )


def budget_power(task: BudgetTask) -> tuple[FloatVector, FloatVector]:
    """Power of every pair and the tau of every subset at one budget (one mapper task).

    Parameters
    ----------
    task
        The budget's data and settings.

    Returns
    -------
    pair_power : numpy.ndarray
        Share of subsets where each pair's test rejects, shape ``(n_pairs,)``.
    taus : numpy.ndarray
        Kendall tau of each subset ordering, shape ``(subsamples,)``.
    """
    with threadpool_limits(limits=1, user_api="blas"):
        return _budget_power(task, _no_progress)


def _budget_power(task: BudgetTask, advance: ProgressCallback) -> tuple[FloatVector, FloatVector]:
    """:func:`budget_power`, reporting each subsample (BLAS threads already limited)."""
    scores = task.scores
    n_queries, n_systems = scores.shape
    paired_test = get_paired_test(task.test)
    rng = np.random.default_rng(np.random.SeedSequence(task.entropy, spawn_key=(1, task.budget)))
    rejections = np.zeros(task.pairs[0].size, dtype=np.int64)
    subset_means = np.empty((task.subsamples, n_systems), dtype=np.float64)
    for sample in range(task.subsamples):
        subset = rng.choice(n_queries, size=task.budget, replace=False)
        subset_scores = scores[subset]
        pvalues = paired_test(subset_scores, task.pairs, permutations=task.permutations, rng=rng)
        rejections += pvalues < task.alpha
        subset_means[sample] = subset_scores.mean(axis=0)
        advance(1)
    full_means = scores.mean(axis=0)
    return rejections / task.subsamples, _subset_taus(subset_means, full_means)


def _subset_taus(subset_means: FloatMatrix, full_means: FloatVector) -> FloatVector:
    """Kendall tau per subset; an all-tied subset ordering counts as 0."""
    taus = kendall_tau_rows(subset_means, full_means)
    if np.all(full_means == full_means[0]):
        return taus
    return np.where(np.isnan(taus), 0.0, taus)


def _validated_budgets(budgets: Sequence[int] | None, n_queries: int) -> list[int]:
    """Sorted unique budgets, each between 1 and ``n_queries``."""
    if budgets is None:
        return default_budgets(n_queries)
    chosen = sorted({int(b) for b in budgets})
    if not chosen:
        raise ScoringError("no query budget given")
    bad = [b for b in chosen if not 1 <= b <= n_queries]
    if bad:
        raise ScoringError(
            f"query budgets must lie between 1 and the {n_queries} shared queries "
            f"(subsets are drawn without replacement), got {bad}"
        )
    return chosen


def _no_progress(n: int = 1) -> None:
    """Progress callback that does nothing."""
