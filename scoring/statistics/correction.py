"""Multiple-comparison adjustment of p-values: ``holm``, ``bonferroni`` or ``none``.

SciPy offers only false-discovery-rate control
(:func:`scipy.stats.false_discovery_control`, Benjamini-Hochberg/Yekutieli);
the family-wise corrections are a few lines each and are written here
(statsmodels' ``multipletests`` is not a dependency).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from scoring.errors import ScoringError
from scoring.statistics.panel import FloatVector
from scoring.vocabulary import CorrectionName

__all__ = ["CORRECTIONS", "adjust_pvalues", "bonferroni_adjust", "holm_adjust"]


def holm_adjust(pvalues: npt.ArrayLike) -> FloatVector:
    """Holm's step-down adjusted p-values (Holm 1979).

    With the ``m`` p-values sorted ascending, the ``i``-th (1-based) becomes
    ``max_{j <= i} min(1, (m - j + 1) * p_(j))``; the result is returned in the
    input order. Rejecting where the adjusted value is below ``alpha`` controls
    the family-wise error rate at ``alpha``.

    Parameters
    ----------
    pvalues
        Raw p-values, 1-D.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values in the input order.
    """
    p = _pvalue_vector(pvalues)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    adjusted = np.empty(m, dtype=np.float64)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return adjusted


def bonferroni_adjust(pvalues: npt.ArrayLike) -> FloatVector:
    """Bonferroni-adjusted p-values: ``min(1, m * p)``."""
    p = _pvalue_vector(pvalues)
    return np.minimum(1.0, p * p.size)


def _unadjusted(pvalues: npt.ArrayLike) -> FloatVector:
    """The raw p-values (no correction)."""
    return _pvalue_vector(pvalues).copy()


CORRECTIONS: dict[CorrectionName, Callable[[npt.ArrayLike], FloatVector]] = {
    CorrectionName.holm: holm_adjust,
    CorrectionName.bonferroni: bonferroni_adjust,
    CorrectionName.none: _unadjusted,
}


def adjust_pvalues(pvalues: npt.ArrayLike, method: str = "holm") -> FloatVector:
    """Adjust a family of p-values with the correction called ``method``.

    Parameters
    ----------
    pvalues
        Raw p-values of one family (for :func:`compare_systems`: all pairs of
        one measure).
    method
        ``holm`` (default), ``bonferroni`` or ``none``.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values in the input order.
    """
    try:
        correction = CORRECTIONS[CorrectionName(method)]
    except ValueError:
        valid = ", ".join(CORRECTIONS)
        raise ScoringError(f"unknown correction {method!r}; valid corrections: {valid}") from None
    return correction(pvalues)


def _pvalue_vector(pvalues: npt.ArrayLike) -> FloatVector:
    """Validate p-values as a 1-D float64 array in [0, 1]."""
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ScoringError(f"p-values must be 1-D, got shape {p.shape}")
    if np.any(~((p >= 0.0) & (p <= 1.0))):
        raise ScoringError("p-values must lie in [0, 1]")
    return p
