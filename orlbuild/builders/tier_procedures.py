"""``--tiering``: the procedures that decide tiers from a query's scores (docs/tiers-and-audit.md,
"How tiers are decided and audited").

Each takes the query's items, their uncertainty, the score model, the
resolved parameters and the query's random generator, and returns the tiers
and the decisions with the procedure's evidence:

* ``simultaneous`` - the leader walk with the max-t critical values of the
  query (:mod:`orlbuild.builders.critical_values`; Romano-Wolf step-down unless
  ``step_down`` is off): Monte Carlo from ``N(0, C)``
  (``mc_draws`` draws seeded by the build's seed) for Fisher, sandwich and EP
  covariances, the studentized bootstrap replicates otherwise;
* ``model`` - the selection-adjusted BIC partition (:mod:`orlbuild.builders.model_tiers`);
* ``leader`` - one test per item against its leader at ``sig``.

``--sig 0`` means a strict order for every procedure (exact score ties still tie).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from orlbuild.builders.critical_values import (
    null_draws_from_bootstrap,
    null_draws_from_covariance,
    single_step_critical,
    step_down_critical,
)
from orlbuild.builders.model_tiers import model_tiers
from orlbuild.builders.pairwise_data import FloatArray
from orlbuild.builders.parameters import BuildParameters
from orlbuild.builders.strength_models import StrengthModel
from orlbuild.builders.tiering import tiers_from_scores
from orlbuild.builders.uncertainty import ScoreUncertainty
from orlbuild.records import TieDecision

__all__ = ["TIERING_PROCEDURES", "simultaneous_critical"]

Tiering = tuple[list[list[str]], list[TieDecision]]


def simultaneous_critical(
    uncertainty: ScoreUncertainty, *, sig: float, draws: int, seed: int, step_down: bool = True
) -> FloatArray:
    """The query's max-t critical value of every pair, ``(n, n)`` (``inf`` outside the family).

    From the covariance (Monte Carlo from ``N(0, C)``) or the bootstrap
    replicates; with ``step_down`` the Romano-Wolf values, else the
    single-step ``c`` for every pair.
    """
    if uncertainty.samples is not None:
        first, second, null = null_draws_from_bootstrap(
            uncertainty.scores, uncertainty.samples, uncertainty.se
        )
    elif uncertainty.cov is not None:
        first, second, null = null_draws_from_covariance(
            uncertainty.cov, uncertainty.se, draws=draws, seed=seed
        )
    else:
        raise ValueError("the simultaneous rule needs a covariance or bootstrap replicates")
    n = len(uncertainty.scores)
    critical = np.full((n, n), np.inf)
    if len(first) == 0:
        return critical
    if step_down:
        diff = uncertainty.scores[first] - uncertainty.scores[second]
        observed = np.abs(diff) / uncertainty.se[first, second]
        values = step_down_critical(null, observed, sig)
    else:
        values = np.full(len(first), single_step_critical(null, sig))
    critical[first, second] = values
    critical[second, first] = values
    return critical


def _leader(
    query: str,
    items: npt.NDArray[np.object_],
    uncertainty: ScoreUncertainty,
    model: StrengthModel,
    params: BuildParameters,
    rng: np.random.Generator,
) -> Tiering:
    return tiers_from_scores(query, items, uncertainty, sig=params.sig)


def _simultaneous(
    query: str,
    items: npt.NDArray[np.object_],
    uncertainty: ScoreUncertainty,
    model: StrengthModel,
    params: BuildParameters,
    rng: np.random.Generator,
) -> Tiering:
    if params.sig == 0.0:
        return tiers_from_scores(query, items, uncertainty, sig=0.0, procedure="leader")
    critical = simultaneous_critical(
        uncertainty,
        sig=params.sig,
        draws=params.mc_draws,
        seed=int(params.seed or 0),
        step_down=params.step_down,
    )
    return tiers_from_scores(
        query, items, uncertainty, sig=params.sig, procedure="simultaneous", critical=critical
    )


def _model(
    query: str,
    items: npt.NDArray[np.object_],
    uncertainty: ScoreUncertainty,
    model: StrengthModel,
    params: BuildParameters,
    rng: np.random.Generator,
) -> Tiering:
    if params.sig == 0.0:
        return tiers_from_scores(query, items, uncertainty, sig=0.0, procedure="leader")
    alpha = params.reg / len(items)
    return model_tiers(query, items, uncertainty, model.likelihood(), sig=params.sig, alpha=alpha)


#: ``--tiering`` name -> procedure.
TIERING_PROCEDURES: dict[
    str,
    Callable[
        [
            str,
            npt.NDArray[np.object_],
            ScoreUncertainty,
            StrengthModel,
            BuildParameters,
            np.random.Generator,
        ],
        Tiering,
    ],
] = {"simultaneous": _simultaneous, "model": _model, "leader": _leader}
