"""What a build produces for each query: tiers, scores, intervals and the audit trail.

The records here are plain frozen dataclasses so that the store, the CLI and
the tests can read them without knowing which route produced them
(docs/tiers-and-audit.md, "Audit").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from orlbuild.errors import BuildError

__all__ = [
    "BuildOutcome",
    "EstimationError",
    "QueryBuildError",
    "QueryFailure",
    "QueryORL",
    "TieDecision",
]


@dataclass(frozen=True)
class TieDecision:
    """One tie-or-separate decision (docs/tiers-and-audit.md, "Audit").

    Attributes
    ----------
    query, leader, item
        The query, the leader of the tier the item was tested against, the item.
    score_leader, score_item
        Their scores (grades for the graded route, annotator tiers for ``direct``).
    diff
        ``score_leader - score_item`` (>= 0).
    se
        Standard error of the difference (Fisher / sandwich), the bootstrap
        standard deviation of the difference, or ``None`` when no test was run.
    p_value
        Two-sided p-value of the test, ``None`` when no test was run.
    decision
        ``"tied"`` or ``"separated"``.
    rule
        Why, e.g. ``"leader test p >= 0.05"``, ``"exact score tie"``, ``"same grade"``.
    variance
        Which variance the test used, e.g. ``"fisher"``, ``"sandwich(annotators)"``,
        ``"bootstrap(comparisons, B=200)"``, or ``"none"``.
    procedure
        The ``--tiering`` procedure that took the decision (``simultaneous``,
        ``leader``, ``model``), ``None`` for rule-based decisions.
    family_size
        Number of comparisons the procedure controls per query: every pair
        ``n (n - 1) / 2`` for ``simultaneous``, the ``n - 1`` tests for
        ``leader``, the ``n - 1`` candidate boundaries for ``model``.
    critical
        The critical value ``z`` was compared with: the max-t quantile for
        ``simultaneous``, the normal quantile of ``sig`` for ``leader``.
    z
        ``diff / se``, the studentized difference.
    bic_penalty
        ``model``: the BIC penalty of one more group, ``log(n_observations)``.
    loglik_gain
        ``model``: log-likelihood gained by a boundary before this item
        (partition with the boundary minus partition without it).
    bic_change
        ``model``: BIC with the boundary minus BIC without it (negative: the
        boundary is worth its parameter, the item is separated).
    """

    query: str
    leader: str
    item: str
    score_leader: float
    score_item: float
    diff: float
    se: float | None
    p_value: float | None
    decision: str
    rule: str
    variance: str
    procedure: str | None = None
    family_size: int | None = None
    critical: float | None = None
    z: float | None = None
    bic_penalty: float | None = None
    loglik_gain: float | None = None
    bic_change: float | None = None

    @classmethod
    def without_test(
        cls,
        query: str,
        leader: str,
        item: str,
        score_leader: float,
        score_item: float,
        *,
        tied: bool,
        rule: str,
    ) -> TieDecision:
        """A decision taken by a rule, not a test (grades, annotator tiers, overrides)."""
        return cls(
            query=query,
            leader=leader,
            item=item,
            score_leader=score_leader,
            score_item=score_item,
            diff=abs(score_leader - score_item),
            se=None,
            p_value=None,
            decision="tied" if tied else "separated",
            rule=rule,
            variance="none",
        )


@dataclass
class QueryORL:
    """The built ORL of one query with its evidence.

    Attributes
    ----------
    query
        The query id.
    tiers
        Items tier by tier, best tier first (each tier sorted by score, then id).
    scores
        Item -> score on the method's scale (higher is better).
    intervals
        Item -> (low, high) 95% interval of the score, ``None`` when not estimated.
    decisions
        The tie decisions taken while tiering, in walking order.
    native_grades
        Item -> aggregated native grade (graded route only).
    components
        The comparison graph's connected components when there were several
        (``--disconnected tiers``), else empty.
    warnings
        Human-readable notes about this query.
    """

    query: str
    tiers: list[list[str]]
    scores: dict[str, float]
    intervals: dict[str, tuple[float, float] | None]
    decisions: list[TieDecision]
    native_grades: dict[str, float] | None = None
    components: list[list[str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ranks(self) -> dict[str, int]:
        """Item -> ORL rank (1 is best), the mapping ``scoring.ORL`` accepts."""
        return {item: rank for rank, tier in enumerate(self.tiers, start=1) for item in tier}


@dataclass(frozen=True)
class QueryFailure:
    """Why one query got no ORL."""

    query: str
    cause: str


class EstimationError(Exception):
    """An estimator failed on one query's data (choix did not converge, found
    several absorbing classes, returned non-finite scores...).

    Internal: the routes turn it into a :class:`QueryBuildError` naming the query.
    """


class QueryBuildError(BuildError):
    """The build of one query failed; the message names the query and the cause."""

    def __init__(self, query: str, cause: str) -> None:
        self.query = query
        self.cause = cause
        super().__init__(f"query {query!r}: {cause}")


@dataclass
class BuildOutcome:
    """Result of building every query of a data set.

    Attributes
    ----------
    orls
        Query -> built ORL, for the queries that succeeded (sorted by query id).
    failures
        The queries that failed (only with ``on_error="skip"``).
    warnings
        Build-level notes (per-query warnings prefixed with the query).
    """

    orls: dict[str, QueryORL]
    failures: list[QueryFailure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
