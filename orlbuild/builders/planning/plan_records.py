"""What the planner reads and what it proposes: one query's evidence, a proposed pair, a
query's status and the plan (docs/planning.md, "Planning the next judgments")."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.planning.model_cuts import ModelCuts

__all__ = ["Plan", "PlannedPair", "QueryEvidence", "QueryPlan"]


@dataclass(frozen=True)
class QueryEvidence:
    """What the planner needs to know about one query of a build.

    Attributes
    ----------
    query
        Query id.
    items
        Item ids, aligned with every array below.
    scores
        Scores (log-strengths; higher is better).
    cov
        ``(n, n)`` covariance of the scores.
    critical
        ``(n, n)`` critical value each pair is separated with (``inf`` on the diagonal).
    single
        The single-step max-t critical value (width of the simultaneous intervals).
    tiers
        Tier number of each item (1 best).
    item_comparisons
        Comparisons each item took part in.
    judgments
        Judgments of the query.
    model
        The ``model`` tiering's cuts when the build was tiered by ``model``
        (:mod:`orlbuild.builders.planning.model_cuts`): the planner then targets
        them instead of the max-t decisions; ``None`` otherwise.
    """

    query: str
    items: npt.NDArray[np.object_]
    scores: FloatArray
    cov: FloatArray
    critical: FloatArray
    single: float
    tiers: IntArray
    item_comparisons: IntArray
    judgments: int
    model: ModelCuts | None = None


@dataclass(frozen=True)
class PlannedPair:
    """One proposed comparison and the open decision it serves."""

    query: str
    item_a: str
    item_b: str
    serves: str
    decision: str
    value: float

    def to_json(self) -> dict[str, Any]:
        """``query, item_a, item_b, serves, decision, value``."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class QueryPlan:
    """A query's status and open decisions before the plan, and what the plan gives it.

    Attributes
    ----------
    query
        Query id.
    status
        ``settled`` or ``open``.
    open_decisions
        Unbacked boundaries (with their weakest crossing pair), poorly measured
        items, and the ties most likely to be decided (at most
        :data:`~orlbuild.builders.planning.query_status.LISTED_TIES`).
    open_counts
        Number of open decisions of each kind (every open tie pair counted).
    split_risk
        Chance that doubling the judgments splits a tie (plug-in).
    expected_judgments
        Judgments expected to settle the query on top of today's (plug-in,
        spread as today's; ``None`` when more than
        :data:`~orlbuild.builders.planning.query_status.MAX_FACTOR` times today's or no
        decision can be reached by more data).
    planned
        Comparisons this plan proposes for the query.
    pair_states
        How many pairs of the query are separated, equivalent, undecided.
    expected_decided
        Open pairs this plan's comparisons are expected to decide (plug-in
        preposterior, with the information the planned pairs add).
    """

    query: str
    status: str
    open_decisions: list[dict[str, Any]]
    open_counts: dict[str, int]
    split_risk: float
    expected_judgments: int | None
    planned: int = 0
    pair_states: dict[str, int] = field(default_factory=dict)
    expected_decided: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """JSON-ready mapping: every field but ``query`` (the key it is listed under)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "query"}


@dataclass
class Plan:
    """Proposed comparisons (queries mixed) and every query's status."""

    pairs: list[PlannedPair]
    queries: dict[str, QueryPlan] = field(default_factory=dict)
