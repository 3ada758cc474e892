"""``--tiering``: the procedures that decide tiers from a query's scores (docs/tiers-and-audit.md,
"How tiers are decided and audited").

Each takes a :class:`TieringCase` (the query's items, their uncertainty, the
score model, the resolved parameters and the family-wise evidence) and returns
the tiers and the decisions with the procedure's evidence:

* ``simultaneous`` - backed boundaries under the max-t critical values of the
  query (:mod:`orlbuild.builders.tiering.critical_values`; Romano-Wolf step-down unless
  ``step_down`` is off; Monte Carlo from ``N(0, C)`` with ``mc_draws`` draws
  seeded by the build's seed for Fisher, sandwich and EP covariances, the
  studentized bootstrap replicates otherwise): a boundary is placed only
  where every pair of well-measured items across it is separated
  (:mod:`orlbuild.builders.tiering.backed_orders`), so every order the tiers state
  between well-measured items is backed by a test;
* ``model`` - the selection-adjusted BIC partition
  (:mod:`orlbuild.builders.tiering.model_selection`);
* ``leader`` - one test per item against its leader at ``sig``.

``--sig 0`` means a strict order for every procedure (exact score ties still tie).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from orlbuild.builders.arrays import FloatArray
from orlbuild.builders.estimation.strength_models import StrengthModel
from orlbuild.builders.estimation.uncertainty import ScoreUncertainty
from orlbuild.builders.parameters import BuildParameters
from orlbuild.builders.tiering.backed_orders import (
    Separations,
    backed_cuts,
    placed_cuts,
    separation_matrix,
    under_judged_items,
)
from orlbuild.builders.tiering.critical_values import (
    blocked_single_step_critical,
    blocked_step_down_critical,
    bootstrap_null,
    covariance_null,
)
from orlbuild.builders.tiering.model_selection import model_tiers
from orlbuild.builders.tiering.walk import EXACT_TIE, SeparationWalk, tiers_from_scores
from orlbuild.records import TieDecision

__all__ = [
    "TIERING_PROCEDURES",
    "TieringCase",
    "TieringEvidence",
    "simultaneous_critical",
    "tiering_evidence",
]

Tiering = tuple[list[list[str]], list[TieDecision]]


def simultaneous_critical(
    uncertainty: ScoreUncertainty, *, sig: float, draws: int, seed: int, step_down: bool = True
) -> FloatArray:
    """The query's max-t critical value of every pair, ``(n, n)`` (``inf`` outside the family).

    From the covariance (Monte Carlo from ``N(0, C)``) or the bootstrap
    replicates; with ``step_down`` the Romano-Wolf values, else the
    single-step ``c`` for every pair. The null is computed a block of pairs at
    a time (:func:`~orlbuild.builders.tiering.critical_values.blocked_step_down_critical`),
    so its memory is bounded whatever the draws and the items.
    """
    if uncertainty.samples is not None:
        null = bootstrap_null(uncertainty.scores, uncertainty.samples, uncertainty.se)
    elif uncertainty.cov is not None:
        null = covariance_null(uncertainty.cov, uncertainty.se, draws=draws, seed=seed)
    else:
        raise ValueError("the simultaneous rule needs a covariance or bootstrap replicates")
    n = len(uncertainty.scores)
    critical = np.full((n, n), np.inf)
    first, second = null.first, null.second
    if len(first) == 0:
        return critical
    if step_down:
        diff = uncertainty.scores[first] - uncertainty.scores[second]
        observed = np.abs(diff) / uncertainty.se[first, second]
        values = blocked_step_down_critical(null, observed, sig)
    else:
        values = np.full(len(first), blocked_single_step_critical(null, sig))
    critical[first, second] = values
    critical[second, first] = values
    return critical


@dataclass(frozen=True)
class TieringEvidence:
    """What every procedure decides with: the family-wise separations and the well-measured items.

    Attributes
    ----------
    critical
        ``(n, n)`` max-t critical values (``None`` with ``--sig 0``).
    separations
        The pairs the family-wise procedure separates (``None`` with ``--sig 0``).
    measured
        ``False`` for under-judged items
        (:func:`~orlbuild.builders.tiering.backed_orders.under_judged_items`).
    """

    critical: FloatArray | None
    separations: Separations | None
    measured: npt.NDArray[np.bool_]


def tiering_evidence(uncertainty: ScoreUncertainty, params: BuildParameters) -> TieringEvidence:
    """The critical values, separations and well-measured items of one query."""
    n = len(uncertainty.scores)
    if params.sig == 0.0 or n < 2:
        return TieringEvidence(None, None, np.ones(n, dtype=bool))
    critical = simultaneous_critical(
        uncertainty,
        sig=params.sig,
        draws=params.mc_draws,
        seed=int(params.seed or 0),
        step_down=params.step_down,
    )
    return TieringEvidence(
        critical, separation_matrix(uncertainty, critical), ~under_judged_items(uncertainty.se)
    )


@dataclass(frozen=True)
class TieringCase:
    """One query's tiering problem: what a ``--tiering`` procedure decides from.

    Attributes
    ----------
    query
        Query id.
    items
        Item ids, aligned with the scores of ``uncertainty``.
    uncertainty
        The items' scores, intervals and pairwise tests.
    model
        The fitted strength model (``model`` tiering refits its likelihood).
    params
        The resolved build parameters.
    evidence
        :func:`tiering_evidence` of ``uncertainty`` and ``params``.
    """

    query: str
    items: npt.NDArray[np.object_]
    uncertainty: ScoreUncertainty
    model: StrengthModel
    params: BuildParameters
    evidence: TieringEvidence


def _leader(case: TieringCase) -> Tiering:
    return tiers_from_scores(case.query, case.items, case.uncertainty, sig=case.params.sig)


def _simultaneous(case: TieringCase) -> Tiering:
    query, items, uncertainty = case.query, case.items, case.uncertainty
    params, evidence = case.params, case.evidence
    if params.sig == 0.0 or evidence.separations is None or evidence.critical is None:
        return tiers_from_scores(query, items, uncertainty, sig=0.0, procedure="leader")
    if not params.backed:  # the max-t leader walk of earlier builds
        return tiers_from_scores(
            query,
            items,
            uncertainty,
            sig=params.sig,
            procedure="simultaneous",
            critical=evidence.critical,
        )
    scores = uncertainty.scores
    n = len(scores)
    walk = SeparationWalk(query, items, uncertainty)
    order = walk.order
    seps, measured = evidence.separations, evidence.measured
    chosen = placed_cuts(order, scores, backed_cuts(order, scores, seps, measured), measured)
    family = n * (n - 1) // 2
    level = f"over {family} pairs (sig {params.sig:g})"
    leader = int(order[0])
    for k in range(1, n):
        index = int(order[k])
        if chosen[k]:
            rule = f"backed boundary: every crossing pair separated, max-t {level}"
        elif scores[leader] - scores[index] <= EXACT_TIE:
            rule = "exact score tie"
        elif seps.separated[leader, index]:
            rule = f"boundary not backed: a crossing pair is not separated, max-t {level}"
        else:
            rule = f"max-t z <= c {level}"
        if not measured[index]:
            rule += "; under-judged item placed by its estimate"
        walk.add(bool(chosen[k]), rule, critical=float(evidence.critical[leader, index]))
        if chosen[k]:
            leader = index
    return walk.tiers(procedure="simultaneous", family_size=family)


def _model(case: TieringCase) -> Tiering:
    query, items, uncertainty, params = case.query, case.items, case.uncertainty, case.params
    if params.sig == 0.0:
        return tiers_from_scores(query, items, uncertainty, sig=0.0, procedure="leader")
    alpha = params.reg / len(items)
    likelihood = case.model.likelihood()
    return model_tiers(query, items, uncertainty, likelihood, sig=params.sig, alpha=alpha)


#: ``--tiering`` name -> procedure.
TIERING_PROCEDURES: dict[str, Callable[[TieringCase], Tiering]] = {
    "simultaneous": _simultaneous,
    "model": _model,
    "leader": _leader,
}
