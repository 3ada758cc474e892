"""Shared rendering of per-query score frames (``orlbuild eval`` and ``orlbuild score``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from scoring.messages import first_and_more

if TYPE_CHECKING:
    import pandas as pd

    from scoring import EvaluationResult


def _means(values: np.ndarray, columns: list[str]) -> dict[str, float]:
    """The ``all`` value per column of ``values`` (queries x measures): the mean with NaN
    left out, the sum for a counting measure (trec_eval's; :func:`scoring.aggregation.aggregate`);
    NaN for no query."""
    from scoring.aggregation import aggregate_columns

    if not len(values):
        return dict.fromkeys(columns, float("nan"))
    return aggregate_columns(columns, values)


def _per_query(
    index: list[object], columns: list[str], values: np.ndarray
) -> dict[str, dict[str, float]]:
    """``{query: {measure: value}}`` (column by column: no per-row pandas objects)."""
    return {
        str(q): dict(zip(columns, row, strict=True))
        for q, row in zip(index, values.tolist(), strict=True)
    }


def _reasons_words(reasons: Mapping[str, int]) -> str:
    """``one tier in the ORL (48), the run has no results for the query (2)``."""
    return ", ".join(f"{reason} ({count})" for reason, count in reasons.items())


def score_payload(
    evaluation: EvaluationResult,
    extra: dict[str, Any] | None = None,
    reasons: Mapping[str, Mapping[str, int]] | None = None,
) -> dict[str, Any]:
    """The JSON view of an evaluation (see :func:`score_report`), without a table (nor pandas).

    ``reasons`` (:func:`orlbuild.services.undefined_scores.undefined_reasons`) says why
    each measure is undefined where it is: named in its warning and given as
    ``undefined_reasons``.
    """
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
        why = (reasons or {}).get(measure)
        notes.append(
            f"{measure} is undefined for {count} queries (left out of its mean)"
            + (f": {_reasons_words(why)}" if why else "")
        )
    return {
        **(extra or {}),
        "queries": len(scores.queries),
        "mean": means,
        "per_query": _per_query(scores.queries, columns, values),
        "undefined": undefined,
        "undefined_reasons": {m: dict(r) for m, r in (reasons or {}).items()},
        "conventions": dict(evaluation.conventions),
        "warnings": notes,
    }


def score_report(
    evaluation: EvaluationResult,
    *,
    per_query: bool,
    extra: dict[str, Any] | None = None,
    reasons: Mapping[str, Mapping[str, int]] | None = None,
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
    reasons
        Why each measure is undefined where it is (see :func:`score_payload`).

    Returns
    -------
    tuple
        The table to print and the JSON payload ``{..., "queries", "mean",
        "per_query", "undefined", "conventions", "warnings"}``; ``per_query``
        is always present in JSON.
    """
    import pandas as pd

    payload = score_payload(evaluation, extra, reasons)
    frame, means = evaluation.per_query, payload["mean"]
    if per_query:
        table = pd.concat([frame, pd.DataFrame([means], index=pd.Index(["mean"], name="query"))])
        table.index.name = "query"
    else:
        table = pd.DataFrame({"measure": list(means), "mean": list(means.values())})
    return table, payload
