"""What a report shows, as plain inputs: per-query scores, comparisons, ORLs, power.

The report never reads the database itself: a caller (the pipeline, the
``orlbuild report`` command, a notebook) gathers these inputs and hands them to
:func:`orlbuild.report.render_report`. ORLs and tie decisions are the build
records of :mod:`orlbuild.records` (``QueryORL``, ``TieDecision``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from orlbuild.errors import OrlbuildError
from orlbuild.records import QueryORL
from scoring.settings import TestSettings
from scoring.statistics import PowerResult

__all__ = ["ReportData", "ReportTexts"]


@dataclass(frozen=True)
class ReportTexts:
    """The stored texts shown when hovering a query or an item (``orlbuild ingest text``).

    Attributes
    ----------
    queries
        Query -> its text.
    items
        Item -> its title and text (``title: text``).
    """

    queries: Mapping[str, str] = field(default_factory=dict)
    items: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ReportData:
    """Everything one report shows.

    Attributes
    ----------
    title
        Page title.
    per_query
        System -> per-query scores (rows: queries, columns: measures), as
        in ``per_query`` of :func:`scoring.evaluate_run`. Every system has the same measures.
    comparisons
        Pairwise tests, one row per (measure, pair), with the columns of
        ``scoring.statistics.COMPARISON_COLUMNS``; may be empty.
    orls
        The build's ORLs, one per query (drawn as tiers with their audit).
    build
        Build metadata shown in the header (name, id, method, parameters...).
    power
        Measure -> :class:`scoring.statistics.PowerResult`, or ``None`` when not computed.
    notes
        Free-text lines shown under the header (conventions, warnings).
    alpha
        Significance level used by the comparisons.
    correction
        Multiple-comparison correction used (shown in the legend).
    test
        The test as run, in words (``TestPlan.describe``), shown in the legend.
    level
        Confidence level of the per-system intervals.
    interval_method
        ``"t"`` (t-interval over per-query scores) or ``"bootstrap"`` (BCa).
    seed
        Seed of the bootstrap intervals.
    reference
        Pair verdicts under reference resampling (the pairs' columns plus
        ``holds`` and ``fragile``), or ``None`` when not computed.
    reference_resamples
        How many rebuilt references ``reference`` rests on.
    max_queries
        At most this many queries (in natural order) get a heatmap row and a drawn
        ORL, so that a report on thousands of queries stays small; the page says
        how many were left out. Means, intervals and tests always use every query.
    next_round
        What the next round of judgments would buy, one row per query
        (``orlbuild.services.plans.status_frame``: status, open decisions,
        planned comparisons, decisions they are expected to settle), or ``None``.
    texts
        The queries' and items' stored texts, shown on hover (always escaped), or ``None``.
    """

    title: str
    per_query: Mapping[str, pd.DataFrame]
    comparisons: pd.DataFrame
    orls: Sequence[QueryORL] = ()
    build: Mapping[str, Any] = field(default_factory=dict)
    power: Mapping[str, PowerResult] | None = None
    notes: Sequence[str] = ()
    alpha: float = TestSettings.alpha
    correction: str = "holm"
    test: str = ""
    level: float = 0.95
    interval_method: str = "t"
    seed: int = 0
    max_queries: int = 1000
    next_round: pd.DataFrame | None = None
    reference: pd.DataFrame | None = None
    reference_resamples: int = 0
    texts: ReportTexts | None = None

    def __post_init__(self) -> None:
        if not self.per_query:
            raise OrlbuildError("a report needs per-query scores of at least one system")
        columns = {tuple(frame.columns) for frame in self.per_query.values()}
        if len(columns) != 1:
            raise OrlbuildError("every system in a report must have the same measures")
        if not next(iter(columns)):
            raise OrlbuildError("a report needs at least one measure")
        if self.interval_method not in ("t", "bootstrap"):
            raise OrlbuildError(
                f"interval_method must be 't' or 'bootstrap' (got {self.interval_method!r})"
            )
        if not 0.0 < self.level < 1.0:
            raise OrlbuildError(f"level must lie in (0, 1) (got {self.level!r})")
        if self.max_queries < 1:
            raise OrlbuildError(f"max_queries must be >= 1 (got {self.max_queries!r})")

    @property
    def systems(self) -> list[str]:
        """System names in input order."""
        return list(self.per_query)

    @property
    def measures(self) -> list[str]:
        """Measure names, in column order."""
        return [str(c) for c in next(iter(self.per_query.values())).columns]
