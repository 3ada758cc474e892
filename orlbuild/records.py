"""The records the layers hand each other: the rows of an input file, chunk by chunk,
and what a build produces for each query (tiers, scores, intervals and the audit trail).

The records here are plain dataclasses so that ingest, the store, the CLI and
the tests can read them without knowing which route produced them
(docs/tiers-and-audit.md, "Audit").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from orlbuild.errors import BuildError

__all__ = [
    "AnnotatorReliability",
    "BuildOutcome",
    "EstimationError",
    "NamedChunk",
    "OverrideRequest",
    "PosteriorBoundary",
    "PosteriorInput",
    "QueryBuildError",
    "QueryFailure",
    "QueryORL",
    "QueryPosterior",
    "TieDecision",
]


@dataclass(frozen=True)
class NamedChunk:
    """Checked rows of an input file with their own names, one chunk of a stream.

    :class:`orlbuild.ingest.reading.InputStream` yields them;
    :func:`orlbuild.store.batches.store_batch` writes them.

    Attributes
    ----------
    names
        ``queries``, ``items``, ``annotators`` -> the chunk's distinct names
        (object arrays).
    facts
        Column -> aligned array; the code columns (``query_id``, ``item_id``,
        ...) index ``names``. The other columns hold values (``NaN`` floats
        become SQL NULL when stored).
    """

    names: dict[str, np.ndarray]
    facts: dict[str, np.ndarray]

    def __len__(self) -> int:
        """Rows in the chunk."""
        return len(next(iter(self.facts.values()))) if self.facts else 0


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
    weakest_above, weakest_below
        On a decision that opens a tier (a boundary): the boundary's weakest
        crossing pair of well-measured items, the pair with the smallest
        ``z - c`` under the query's family-wise procedure (docs/tiers-and-audit.md, "How tiers
        are decided and audited").
    weakest_z, weakest_critical
        That pair's studentized difference and critical value.
    crossing_pairs
        Pairs of items across the boundary (every order it states).
    unbacked_pairs
        Crossing pairs no test backs (not separated, or with an under-judged
        item); 0 for a backed boundary of ``simultaneous`` without
        under-judged items.
    state
        What the evidence says about the pair (leader, item), whatever the
        decision: ``separated`` (by the max-t test), ``equivalent`` (its
        simultaneous interval lies within the build's ``--margin``) or
        ``undecided``; ``None`` when no test was run (docs/planning.md).
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
    weakest_above: str | None = None
    weakest_below: str | None = None
    weakest_z: float | None = None
    weakest_critical: float | None = None
    crossing_pairs: int | None = None
    unbacked_pairs: int | None = None
    state: str | None = None

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


@dataclass(frozen=True)
class PosteriorInput:
    """What the build's posterior pass needs of one connected component of a query
    (docs/tiers-and-audit.md, "The posterior computation"), everything in score order.

    Attributes
    ----------
    items
        Item ids, best score first (the tiering walk's order).
    scores
        Their scores.
    se, p_value
        ``(n, n)`` standard errors and p-values of the differences.
    variance
        The uncertainty's label (``fisher``, ``sandwich(annotators)``, ``bootstrap(...)``).
    critical
        ``(n, n)`` max-t critical values when the build computed them, else ``None``.
    """

    items: tuple[str, ...]
    scores: np.ndarray
    se: np.ndarray
    p_value: np.ndarray
    variance: str
    critical: np.ndarray | None = None


@dataclass(frozen=True)
class PosteriorBoundary:
    """One gap of a component's score order and the posterior probability that a tier
    boundary lies there (``1 - P_same`` of the adjacent pair across it).

    Attributes
    ----------
    component
        1, or the component's number with ``--disconnected tiers``.
    position
        The number of the component's items above the gap (1 .. n - 1).
    above, below
        The adjacent items across the gap.
    probability
        The posterior probability of a boundary there.
    stated
        Whether the build's tiers place a boundary there.
    """

    component: int
    position: int
    above: str
    below: str
    probability: float
    stated: bool


@dataclass(frozen=True)
class QueryPosterior:
    """The posterior evidence of one query's tiers, whatever procedure chose them.

    Attributes
    ----------
    expected_wrong
        ``E``: the posterior expected number of wrong stated orders (orders
        between items of one component; across components no order is tested).
    stated
        ``N``: the number of stated orders between items of one component.
    boundaries
        Per gap of each component's score order, its boundary probability.
    top_probability
        Item -> posterior probability that it belongs to its component's top segment.
    k_feasible, k_posterior
        ``posterior`` only: ``K_feas`` and ``K_post`` (summed over components), else ``None``.
    """

    expected_wrong: float
    stated: int
    boundaries: list[PosteriorBoundary] = field(default_factory=list)
    top_probability: dict[str, float] = field(default_factory=dict)
    k_feasible: int | None = None
    k_posterior: int | None = None

    @property
    def wrong_share(self) -> float | None:
        """``E / N``; ``None`` when no order is stated."""
        return self.expected_wrong / self.stated if self.stated else None


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
    under_judged
        Items measured too poorly to be placed: placed by their estimates,
        their orders not backed (docs/tiers-and-audit.md, "How tiers are decided and audited").
    stated_orders, unbacked_orders
        Cross-tier orders the tiers state, and those no family-wise test
        backs (``None`` when no test was run).
    posterior_inputs
        While a build runs: per connected component, what its posterior pass
        needs (emptied once the pass is done).
    posterior
        The posterior evidence of the tiers (scored pairwise and listwise builds).
    """

    query: str
    tiers: list[list[str]]
    scores: dict[str, float]
    intervals: dict[str, tuple[float, float] | None]
    decisions: list[TieDecision]
    native_grades: dict[str, float] | None = None
    components: list[list[str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    under_judged: list[str] = field(default_factory=list)
    stated_orders: int | None = None
    unbacked_orders: int | None = None
    posterior_inputs: list[PosteriorInput] = field(default_factory=list)
    posterior: QueryPosterior | None = None

    @property
    def ranks(self) -> dict[str, int]:
        """Item -> ORL rank (1 is best), the mapping ``scoring.ORL`` accepts."""
        return {item: rank for rank, tier in enumerate(self.tiers, start=1) for item in tier}


@dataclass(frozen=True)
class AnnotatorReliability:
    """One annotator's fitted reliability.

    Attributes
    ----------
    annotator
        Annotator id.
    reliability
        ``eta``: the chance the annotator reports the Bradley-Terry outcome
        (1 careful, 0.5 random, 0 reversed).
    low, high
        95% Wald interval of ``eta`` (clipped to [0, 1]).
    comparisons
        Outcomes the annotator contributed (rows weighted by count).
    flips
        Pairs of items whose stated order (separated or tied) changes when
        the annotator's comparisons are left out (``None`` when not computed).
    """

    annotator: str
    reliability: float
    low: float
    high: float
    comparisons: float
    flips: int | None = None


@dataclass(frozen=True)
class OverrideRequest:
    """One audit override of a query's tiers (docs/tiers-and-audit.md, "Audit").

    Exactly one of ``merge_tier`` (merge that tier, 1-based, with the next) and
    ``split_at`` (split a tier so that this item starts a new one) is given;
    ``reason`` says why and ``by`` who (default: the OS user).
    """

    query: str
    reason: str
    merge_tier: int | None = None
    split_at: str | None = None
    by: str | None = None

    @property
    def action(self) -> str:
        """``merge-tiers`` or ``split-at``."""
        return "merge-tiers" if self.merge_tier is not None else "split-at"

    @property
    def argument(self) -> int | str | None:
        """The tier merged or the item split at."""
        return self.merge_tier if self.merge_tier is not None else self.split_at


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
    reliabilities
        ``--annotators reliability``: each annotator's fitted reliability.
    prior_lambda, prior_tau
        The empirical-Bayes prior of the posterior pass (scored pairwise and
        listwise builds), else ``None``.
    """

    orls: dict[str, QueryORL]
    failures: list[QueryFailure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    reliabilities: list[AnnotatorReliability] = field(default_factory=list)
    prior_lambda: float | None = None
    prior_tau: float | None = None
