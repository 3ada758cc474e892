"""Confidence intervals of a system's mean score over queries."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["INTERVAL_COLUMNS", "mean_interval", "mean_intervals"]

INTERVAL_COLUMNS = ("system", "measure", "n", "mean", "low", "high")


def mean_interval(
    values: np.ndarray,
    *,
    level: float = 0.95,
    method: str = "t",
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Mean of per-query scores with a two-sided confidence interval.

    Parameters
    ----------
    values
        Per-query scores; NaN (undefined) values are left out.
    level
        Confidence level.
    method
        ``"t"``: Student-t interval ``mean +- t(n-1) * s / sqrt(n)``;
        ``"bootstrap"``: BCa bootstrap interval of the mean (``scipy.stats.bootstrap``).
    resamples
        Bootstrap resamples.
    seed
        Seed of the bootstrap.

    Returns
    -------
    tuple of float
        ``(mean, low, high)``; NaN when there is no defined value, and
        ``low == high == mean`` when fewer than two values or all are equal.
    """
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[~np.isnan(finite)]
    if finite.size == 0:
        return (np.nan, np.nan, np.nan)
    mean = float(finite.mean())
    if finite.size < 2 or np.ptp(finite) == 0.0:
        return (mean, mean, mean)
    if method == "bootstrap":
        result = stats.bootstrap(
            (finite,),
            np.mean,
            confidence_level=level,
            n_resamples=resamples,
            method="BCa",
            random_state=np.random.default_rng(seed),  # `rng=` needs scipy >= 1.15
        )
        low, high = result.confidence_interval
    else:
        low, high = stats.t.interval(level, finite.size - 1, loc=mean, scale=stats.sem(finite))
    return (mean, float(low), float(high))


def mean_intervals(
    per_query: Mapping[str, pd.DataFrame],
    *,
    level: float = 0.95,
    method: str = "t",
    seed: int = 0,
) -> pd.DataFrame:
    """Mean and confidence interval of every (system, measure).

    Parameters
    ----------
    per_query
        System -> per-query scores (rows: queries, columns: measures).
    level, method, seed
        See :func:`mean_interval`.

    Returns
    -------
    pandas.DataFrame
        Columns ``system, measure, n, mean, low, high`` (``n``: defined values).
    """
    rows = []
    for system, frame in per_query.items():
        for measure in frame.columns:
            values = frame[measure].to_numpy(dtype=np.float64)
            mean, low, high = mean_interval(values, level=level, method=method, seed=seed)
            n = int(np.count_nonzero(~np.isnan(values)))
            rows.append((system, str(measure), n, mean, low, high))
    return pd.DataFrame(rows, columns=list(INTERVAL_COLUMNS))
