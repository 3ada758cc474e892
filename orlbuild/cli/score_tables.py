"""Shared rendering of per-query score frames (``orlbuild eval`` and ``orlbuild score``)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from scoring.messages import first_and_more

if TYPE_CHECKING:
    import pandas as pd

    from scoring import EvaluationResult


def _means(values: np.ndarray, columns: list[str]) -> dict[str, float]:
    """Column means of ``values`` (queries x measures), NaN left out; NaN for no query."""
    if not len(values):
        return dict.fromkeys(columns, float("nan"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
        means = np.nanmean(values, axis=0).tolist()
    return dict(zip(columns, means, strict=True))


def _per_query(
    index: list[object], columns: list[str], values: np.ndarray
) -> dict[str, dict[str, float]]:
    """``{query: {measure: value}}`` (column by column: no per-row pandas objects)."""
    return {
        str(q): dict(zip(columns, row, strict=True))
        for q, row in zip(index, values.tolist(), strict=True)
    }


def score_payload(
    evaluation: EvaluationResult, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The JSON view of an evaluation (see :func:`score_report`), without a table (nor pandas)."""
    scores = evaluation.scores
    columns = list(scores.measures)
    values = scores.matrix
    means = _means(values, columns)
    nan_counts = np.isnan(values).sum(axis=0).tolist()
    undefined = {c: int(n) for c, n in zip(columns, nan_counts, strict=True) if n}
    notes = []
    if evaluation.queries_without_orl:
        ignored = evaluation.ignored_queries
        names = f": {first_and_more(ignored)}" if ignored else ""
        notes.append(
            f"{evaluation.queries_without_orl} run queries have no ORL and were ignored{names}"
        )
    missing = list(evaluation.missing_queries)
    if evaluation.warnings:
        notes.extend(evaluation.warnings)  # names the ORL queries missing from the run
    elif missing:
        notes.append(
            f"{len(missing)} ORL queries are missing from the run: {first_and_more(missing)}"
        )
    for measure, count in undefined.items():
        notes.append(f"{measure} is undefined for {count} queries (left out of its mean)")
    return {
        **(extra or {}),
        "queries": len(scores.queries),
        "mean": means,
        "per_query": _per_query(scores.queries, columns, values),
        "undefined": undefined,
        "conventions": dict(evaluation.conventions),
        "warnings": notes,
    }


def score_report(
    evaluation: EvaluationResult, *, per_query: bool, extra: dict[str, Any] | None = None
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Table and JSON views of an evaluation.

    Parameters
    ----------
    evaluation
        :func:`scoring.evaluate_run` output: per-query frame (index ``query``,
        one column per measure), conventions, warnings, missing queries.
    per_query
        Show one table row per query (plus the mean) instead of the means only.
    extra
        Members put first in the JSON document (e.g. ``build``, ``system``).

    Returns
    -------
    tuple
        The table to print and the JSON payload ``{..., "queries", "mean",
        "per_query", "undefined", "conventions", "warnings"}``; ``per_query``
        is always present in JSON.
    """
    import pandas as pd

    payload = score_payload(evaluation, extra)
    frame, means = evaluation.per_query, payload["mean"]
    if per_query:
        table = pd.concat([frame, pd.DataFrame([means], index=pd.Index(["mean"], name="query"))])
        table.index.name = "query"
    else:
        table = pd.DataFrame({"measure": list(means), "mean": list(means.values())})
    return table, payload
