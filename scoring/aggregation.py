"""The ``all`` row: how the queries' values of a measure combine (docs/conventions.md,
"Aggregation").

As trec_eval: the mean over queries, undefined (NaN) values left out; the
counting measures (``NumRet``, ``NumRel``, ``NumRelRet``: trec_eval's
``num_ret``, ``num_rel``, ``num_rel_ret``) are summed.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from scoring.errors import UnknownMeasureError
from scoring.measures import Measure, parse_measure

__all__ = ["aggregate", "aggregate_columns", "aggregation_of"]


def aggregation_of(name: str | Measure) -> str:
    """``"sum"`` for a counting measure, ``"mean"`` otherwise (also for a label that names
    no measure, such as a column read back from a file)."""
    if isinstance(name, Measure):
        return name.AGGREGATE
    try:
        return parse_measure(name).AGGREGATE
    except UnknownMeasureError:
        return "mean"


def aggregate(name: str | Measure, values: np.ndarray | Sequence[float]) -> float:
    """The ``all`` value of one measure over its per-query values.

    Examples
    --------
    >>> aggregate("NumRelRet", [71.0, 50.0, 10.0]), aggregate("AP", [0.5, float("nan"), 0.25])
    (131.0, 0.375)
    """
    array = np.asarray(values, dtype=np.float64)
    if aggregation_of(name) == "sum":
        return float(np.nansum(array))
    if not len(array) or np.isnan(array).all():
        return float("nan")
    return float(np.nanmean(array))


def aggregate_columns(names: Sequence[str], matrix: np.ndarray) -> dict[str, float]:
    """:func:`aggregate` of every column of ``matrix`` (queries x measures), by name."""
    values = np.asarray(matrix, dtype=np.float64).reshape(-1, len(names))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return {name: aggregate(name, values[:, j]) for j, name in enumerate(names)}
