"""What the planner knows of each query of a pairwise build: scores, covariance, critical values.

A build stores its tiers, scores and decisions but not the covariance, so the
covariance is recomputed from the judgments the build read with the build's
stored parameters (the same model, estimator, seed and Monte Carlo draws as
the build: docs/planning.md, "Planning the next judgments"). Bootstrap builds
use the covariance of their replicates. The critical values are the
``simultaneous`` procedure's (max-t, step-down as the build asks) whatever the
build's ``--tiering``: the planner aims at decisions that test backs. A build
with ``sig = 0`` is planned at ``sig = 0.05``.

A build tiered by ``model`` also gives each query its cuts (:class:`ModelCuts`):
twice the log-likelihood gain of every boundary of the score order and the
penalty, read from the build's decisions (recomputed with the build's
parameters when they are not given), and the planner targets those instead
(docs/planning.md, "Planning for `--tiering model`").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import log

import numpy as np
import numpy.typing as npt
import pandas as pd

from orlbuild.builders.build import query_rng
from orlbuild.builders.estimation.strength_models import StrengthModel
from orlbuild.builders.estimation.uncertainty import ScoreUncertainty
from orlbuild.builders.pairwise import PAIRWISE_MODELS
from orlbuild.builders.pairwise_data import comparisons_from_arrays, pair_arrays, query_blocks
from orlbuild.builders.parameters import BuildParameters
from orlbuild.builders.planning.model_cuts import ModelCuts
from orlbuild.builders.planning.plan_records import QueryEvidence
from orlbuild.builders.tiering.deciding import simultaneous_critical
from orlbuild.builders.tiering.model_selection import model_tiers, ordered_split_penalty
from orlbuild.builders.tiering.query_orl import score_uncertainty
from orlbuild.records import EstimationError, TieDecision
from orlbuild.vocabulary import TieringProcedure

__all__ = ["PLANNING_SIG", "model_cuts", "pairwise_evidence"]

#: ``sig`` the planner uses for a build made with ``sig = 0`` (strict order).
PLANNING_SIG = 0.05


def _covariance(unc: ScoreUncertainty) -> np.ndarray:
    if unc.cov is not None:
        return unc.cov
    assert unc.samples is not None
    return np.atleast_2d(np.cov(unc.samples, rowvar=False))


def model_cuts(
    items: Sequence[str], decisions: Sequence[TieDecision], judgments: int, sig: float
) -> ModelCuts | None:
    """A ``model`` query's cuts from its decisions (walking order: ``decisions[k - 1]`` is about
    the item at sorted position ``k``), or ``None`` when they are not the ``model``
    tiering's decisions of exactly these items (then the query is planned as the default's).

    Parameters
    ----------
    items
        The query's item ids, in the order of the planner's arrays.
    decisions
        The query's tie decisions.
    judgments
        The query's judgments (the penalty's ``log N`` once they double).
    sig
        The build's ``sig`` (the selection-adjusted part of the penalty).
    """
    n = len(items)
    if n < 2 or len(decisions) != n - 1:
        return None
    if any(d.procedure != TieringProcedure.model.value for d in decisions):
        return None
    index = {item: k for k, item in enumerate(items)}
    walk = [decisions[0].leader, *(d.item for d in decisions)]
    if sorted(walk) != sorted(index):
        return None
    penalty = decisions[0].bic_penalty
    if penalty is None:
        return None
    gains = [np.nan if d.loglik_gain is None else 2.0 * d.loglik_gain for d in decisions]
    selection = ordered_split_penalty(n, sig)
    # the penalty is max(log N, q_n): doubling N adds log 2 to its log N part
    future = max(selection, max(penalty, log(max(judgments, 2))) + log(2.0))
    if penalty <= selection + 1e-12:
        future = max(selection, log(2.0 * max(judgments, 1)))
    return ModelCuts(
        order=np.array([index[i] for i in walk], dtype=np.int64),
        gain2=np.array(gains, dtype=np.float64),
        kept=np.array([d.decision == "separated" for d in decisions], dtype=bool),
        penalty=float(penalty),
        future_penalty=float(future),
    )


def _model_decisions(
    query: str,
    items: npt.NDArray[np.object_],
    model: StrengthModel,
    unc: ScoreUncertainty,
    params: BuildParameters,
    sig: float,
) -> list[TieDecision]:
    """The ``model`` tiering's decisions of a query, recomputed as the build made them."""
    _, decisions = model_tiers(
        query, items, unc, model.likelihood(), sig=sig, alpha=params.reg / len(items)
    )
    return decisions


def pairwise_evidence(
    frame: pd.DataFrame,
    params: BuildParameters,
    tiers: Mapping[str, Sequence[Sequence[str]]],
    decisions: Mapping[str, Sequence[TieDecision]] | None = None,
) -> tuple[list[QueryEvidence], dict[str, str]]:
    """The planner's view of every built query.

    Parameters
    ----------
    frame
        The pairwise judgments the build read (``query, annotator, winner, loser, tie``
        and optionally ``count``, expanded into that many comparisons).
    params
        The build's stored (resolved) parameters.
    tiers
        Query -> the build's tiers (queries absent here, e.g. failed ones, are skipped).
    decisions
        Query -> the build's tie decisions. Only read for a ``model`` build
        (its cuts); a query missing here has them recomputed.

    Returns
    -------
    evidence : list of QueryEvidence
        One per query with tiers, sorted by query.
    skipped : dict of str to str
        Query -> why it could not be planned (its fit failed).
    """
    if "count" in frame.columns:
        # a counted row is that many comparisons (a build from counted rows equals the build
        # from the expanded rows)
        counts = pd.to_numeric(frame["count"], errors="coerce").fillna(1).astype(np.int64)
        frame = frame.loc[frame.index.repeat(counts.clip(lower=0))]
    frame = frame.copy()
    if "annotator" not in frame.columns:
        frame["annotator"] = "_"
    frame["annotator"] = frame["annotator"].fillna("_").astype(str)
    keys = ["query", "annotator", "winner", "loser"] + (["tie"] if "tie" in frame.columns else [])
    frame = frame.sort_values(keys, kind="stable", ignore_index=True)
    winners, losers, ties, annotators = pair_arrays(frame)
    sig = params.sig if params.sig > 0 else PLANNING_SIG
    tiered_by_model = params.tiering == TieringProcedure.model and params.sig > 0
    seed = int(params.seed or 0)
    evidence, skipped = [], {}
    for query, block in query_blocks(frame["query"]):
        if query not in tiers:
            continue
        comps = comparisons_from_arrays(
            winners[block], losers[block], ties[block], annotators[block]
        )
        model = PAIRWISE_MODELS[str(params.method)](comps, params)
        try:
            unc = score_uncertainty(model, params, query_rng(seed, query))
        except EstimationError as exc:
            skipped[query] = str(exc)
            continue
        cov = _covariance(unc)
        critical = simultaneous_critical(
            unc, sig=sig, draws=params.mc_draws, seed=seed, step_down=params.step_down
        )
        # the step-down's first value is the single-step c (the largest of the query)
        finite = critical[np.isfinite(critical)]
        single = float(finite.max()) if len(finite) else float("inf")
        tier_of = {item: k for k, tier in enumerate(tiers[query], start=1) for item in tier}
        names = [str(i) for i in comps.items]
        cuts = None
        if tiered_by_model and len(names) > 1:
            known = (decisions or {}).get(query)
            if known is None:
                known = _model_decisions(query, comps.items, model, unc, params, sig)
            cuts = model_cuts(names, known, len(block), sig)
        evidence.append(
            QueryEvidence(
                query=query,
                items=comps.items,
                scores=unc.scores,
                cov=cov,
                critical=critical,
                single=single,
                tiers=np.array([tier_of.get(i, len(tiers[query]) + 1) for i in names]),
                item_comparisons=np.bincount(
                    np.concatenate([comps.winners, comps.losers]), minlength=comps.n_items
                ).astype(np.int64),
                judgments=len(block),
                model=cuts,
            )
        )
    return evidence, skipped
