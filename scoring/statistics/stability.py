"""Ranking stability: Kendall's tau between subset and full-query system orderings.

docs/comparing-systems.md, "Comparing many systems": for a query budget ``n``, the systems are
ordered by their mean score on each random subset of ``n`` queries and compared with the
ordering on all queries by Kendall's tau (tau-b, which handles tied means).
The curve of mean tau against the budget is summarised by the smallest budget
whose mean tau reaches 0.8 and by the normalised area under the curve.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from scoring.statistics.panel import FloatMatrix, FloatVector

__all__ = ["first_budget_reaching", "kendall_tau_rows", "normalised_auc"]


def kendall_tau_rows(orderings: npt.ArrayLike, reference: npt.ArrayLike) -> FloatVector:
    """Kendall's tau-b between each row of ``orderings`` and ``reference``.

    Parameters
    ----------
    orderings
        System scores, shape ``(n_rows, n_systems)`` (e.g. mean scores on each
        query subset).
    reference
        Reference scores, shape ``(n_systems,)`` (mean scores on all queries).

    Returns
    -------
    numpy.ndarray
        tau-b per row, equal to :func:`scipy.stats.kendalltau` row by row,
        vectorised over the ``m (m - 1) / 2`` system pairs. NaN where either
        side has all systems tied (tau-b is then undefined).
    """
    rows = np.atleast_2d(np.asarray(orderings, dtype=np.float64))
    ref = np.asarray(reference, dtype=np.float64)
    first, second = np.triu_indices(ref.size, k=1)
    row_signs = np.sign(rows[:, first] - rows[:, second])
    ref_signs = np.sign(ref[first] - ref[second])
    n_pairs = first.size
    untied_rows = np.count_nonzero(row_signs, axis=1)
    untied_ref = np.count_nonzero(ref_signs)
    denominator = np.sqrt(untied_rows.astype(np.float64) * float(untied_ref))
    numerator = row_signs @ ref_signs
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = np.where(denominator > 0, numerator / denominator, np.nan)
    return np.asarray(tau if n_pairs else np.full(rows.shape[0], np.nan), dtype=np.float64)


def first_budget_reaching(
    budgets: Sequence[int], values: npt.ArrayLike, threshold: float = 0.8
) -> int | None:
    """Smallest budget whose value reaches ``threshold`` (``None`` if none does).

    Used for N80 (median power >= 0.8) and for the stability budget (mean
    tau >= 0.8). NaN values never reach the threshold.
    """
    reached = np.flatnonzero(np.asarray(values, dtype=np.float64) >= threshold)
    return int(budgets[reached[0]]) if reached.size else None


def normalised_auc(budgets: Sequence[int], values: npt.ArrayLike) -> float:
    """Area under the value-vs-budget curve divided by the budget range.

    The trapezoidal area between the smallest and the largest budget is divided
    by ``max(budgets) - min(budgets)``, so the result is the curve's average
    height on the same scale as tau (1 = perfect agreement at every budget) and
    does not grow with the range of budgets. With a single budget it is that
    budget's value.
    """
    from scipy.integrate import trapezoid  # lazy: keeps scoring.statistics light to import

    curve: FloatMatrix = np.asarray(values, dtype=np.float64)
    x = np.asarray(budgets, dtype=np.float64)
    if x.size == 1:
        return float(curve[0])
    return float(trapezoid(curve, x) / (x[-1] - x[0]))
