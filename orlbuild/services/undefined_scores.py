"""Why a measure is undefined for some queries (``score``, ``eval``, and the queries left
out of a comparison's paired panels: ``compare``, ``eval --compare``, ``report``, ``power``,
the pipeline): one reason per query, counted (docs/measures.md, "Undefined values")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scoring import ORL, EvaluationResult

__all__ = [
    "NOT_EVERY_SYSTEM",
    "NO_RESULTS",
    "ONE_TIER",
    "OTHER_ITEMS",
    "UNKNOWN",
    "left_out_reasons",
    "reasons_words",
    "undefined_reasons",
]

#: The reasons, in the words the warnings use.
ONE_TIER = "one tier in the ORL"
NO_RESULTS = "the run has no results for the query"
OTHER_ITEMS = "the run's items (to the cutoff) are not the ORL's items"
UNKNOWN = "undefined by the measure"
#: A query left out of a paired panel for another reason than a one-tier ORL.
NOT_EVERY_SYSTEM = "undefined or not scored for some system"


def reasons_words(reasons: Mapping[str, int]) -> str:
    """``one tier in the ORL (48), the run has no results for the query (2)``."""
    return ", ".join(f"{reason} ({count})" for reason, count in reasons.items())


def left_out_reasons(
    measure: str, queries: Sequence[str], tiers: Mapping[str, int]
) -> dict[str, int]:
    """Why queries were left out of ``measure``'s paired panel, counted per query.

    A rank correlation is undefined for every system on a query whose ORL is
    one tier (:data:`ONE_TIER`, ``tiers``: query -> its ORL's tiers); any
    other query left out is undefined, or not scored, for at least one system
    (:data:`NOT_EVERY_SYSTEM`).

    Returns
    -------
    dict
        ``{reason: queries}``, by decreasing count.
    """
    from scoring import parse_measures

    correlation = hasattr(parse_measures([measure])[0], "correlation")
    counts: Counter[str] = Counter()
    for query in queries:
        one_tier = correlation and tiers.get(str(query), 2) <= 1
        counts[ONE_TIER if one_tier else NOT_EVERY_SYSTEM] += 1
    return dict(counts.most_common())


def undefined_reasons(
    evaluation: EvaluationResult, orls: Mapping[str, ORL]
) -> dict[str, dict[str, int]]:
    """Per measure with undefined (NaN) queries, how many are undefined for each reason.

    The rank correlations (``KendallTau``, ``SpearmanRho``) are defined only
    when the ORL has more than one tier and the run, to the cutoff, holds
    exactly the ORL's items (docs/measures.md): a query is counted under
    :data:`ONE_TIER` when its ORL is one tier (whatever the run), else under
    :data:`NO_RESULTS` when the run does not answer it, else under
    :data:`OTHER_ITEMS`. Another measure's undefined value is :data:`UNKNOWN`.

    Returns
    -------
    dict
        ``{measure: {reason: queries}}``, reasons by decreasing count; only
        measures with an undefined query.
    """
    from scoring import parse_measures

    scores = evaluation.scores
    columns = list(scores.measures)
    undefined = np.isnan(scores.matrix)
    if not undefined.any():
        return {}
    measures = dict(zip(columns, parse_measures(columns), strict=True))
    missing = set(evaluation.missing_queries)
    queries = [str(q) for q in scores.queries]
    out: dict[str, dict[str, int]] = {}
    for j, name in enumerate(columns):
        rows = np.flatnonzero(undefined[:, j])
        if not rows.size:
            continue
        correlation = hasattr(measures[name], "correlation")
        counts: Counter[str] = Counter()
        for row in rows.tolist():
            query = queries[row]
            orl = orls.get(query)
            if not correlation:
                counts[UNKNOWN] += 1
            elif orl is not None and orl.n_tiers <= 1:
                counts[ONE_TIER] += 1
            elif query in missing:
                counts[NO_RESULTS] += 1
            else:
                counts[OTHER_ITEMS] += 1
        out[name] = dict(counts.most_common())
    return out
