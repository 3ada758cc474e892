"""The posterior evidence of builds: what ``build``, ``audit``, ``score`` and the report show
(docs/tiers-and-audit.md, "The posterior computation").

Every scored pairwise or listwise build stores its empirical-Bayes prior and,
per query, ``E`` (the posterior expected number of wrong stated orders) and
``N`` (the orders stated), whatever its tiering, so that a ``model``,
``leader`` or ``simultaneous`` build shows what it risks on the scale of
``posterior``. This module reads them back as tables and words the build-level
facts: the pooled share ``sum E / sum N`` (:func:`risk_line`) and, when most
queries are one tier, the line that says so (:func:`one_tier_note`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from orlbuild.builders.tiering.posterior_summary import one_tier_note, pooled_risk
from orlbuild.store.builds import (
    BOUNDARY_ROW_COLUMNS,
    get_build,
    load_build_entries,
    load_query_posteriors,
)
from orlbuild.store.engine import Bind

__all__ = [
    "PRIOR_COLUMNS",
    "QUERY_COLUMNS",
    "PosteriorAudit",
    "posterior_audit",
    "stored_one_tier_note",
]

#: Columns of :attr:`PosteriorAudit.prior`.
PRIOR_COLUMNS = [
    "build",
    "tiering",
    "fdr",
    "lambda",
    "tau",
    "expected_wrong",
    "stated_orders",
    "wrong_share",
]
#: Columns of :attr:`PosteriorAudit.queries`.
QUERY_COLUMNS = [
    "build",
    "query",
    "expected_wrong",
    "stated_orders",
    "wrong_share",
    "k_feasible",
    "k_posterior",
]
BOUNDARY_COLUMNS = ["build", *BOUNDARY_ROW_COLUMNS]  # the stored row, with its build
TOP_COLUMNS = ["build", "query", "item", "rank", "top_probability"]


def stored_one_tier_note(bind: Bind, build: str | int) -> str | None:
    """:func:`one_tier_note` of a stored build (graded and ``direct`` builds included)."""
    record = get_build(bind, build)
    entries = load_build_entries(bind, record.id)
    counts = entries.groupby("query")["rank"].agg(["size", "nunique"])
    tier_counts = {str(q): (int(r["size"]), int(r["nunique"])) for q, r in counts.iterrows()}
    return one_tier_note(tier_counts, record.name or record.id)


@dataclass(frozen=True)
class PosteriorAudit:
    """The posterior evidence of some builds, as tables.

    Attributes
    ----------
    prior
        :data:`PRIOR_COLUMNS`: per build, its tiering, ``fdr``, prior and pooled ``E``, ``N``,
        ``E / N`` (builds without posterior evidence have no row).
    queries
        :data:`QUERY_COLUMNS`: per query.
    boundaries
        Per gap of each component's score order: the posterior probability that a boundary
        lies there and whether the build states one.
    top
        Per item: its rank and the posterior probability that it belongs to the top segment.
    """

    prior: pd.DataFrame
    queries: pd.DataFrame
    boundaries: pd.DataFrame
    top: pd.DataFrame


def posterior_audit(bind: Bind, ids: Sequence[int], query: str | None = None) -> PosteriorAudit:
    """The posterior evidence of the builds ``ids`` (only ``query`` when given)."""
    priors, queries, boundaries, tops = [], [], [], []
    wanted = None if query is None else [query]
    for build_id in ids:
        record = get_build(bind, build_id)
        posteriors = load_query_posteriors(bind, build_id, wanted)
        if record.posterior_lambda is None and not posteriors:
            continue
        pooled = pooled_risk(posteriors.values()) or (0.0, 0)
        priors.append(
            (
                build_id,
                record.parameters.get("tiering"),
                record.parameters.get("fdr"),
                record.posterior_lambda,
                record.posterior_tau,
                pooled[0],
                pooled[1],
                pooled[0] / pooled[1] if pooled[1] else None,
            )
        )
        ranks = load_build_entries(bind, build_id, wanted).set_index(["query", "item"])["rank"]
        for q, p in posteriors.items():
            queries.append(
                (
                    build_id,
                    q,
                    p.expected_wrong,
                    p.stated,
                    p.wrong_share,
                    p.k_feasible,
                    p.k_posterior,
                )
            )
            boundaries += [
                (build_id, q, b.component, b.position, b.above, b.below, b.probability, b.stated)
                for b in p.boundaries
            ]
            tops += [
                (build_id, q, item, int(ranks.get((q, item), 0)), value)
                for item, value in sorted(p.top_probability.items(), key=lambda kv: -kv[1])
            ]
    return PosteriorAudit(
        pd.DataFrame(priors, columns=PRIOR_COLUMNS),
        pd.DataFrame(queries, columns=QUERY_COLUMNS),
        pd.DataFrame(boundaries, columns=BOUNDARY_COLUMNS),
        pd.DataFrame(tops, columns=TOP_COLUMNS),
    )
