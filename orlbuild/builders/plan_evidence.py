"""What the planner knows of each query of a pairwise build: scores, covariance, critical values.

A build stores its tiers, scores and decisions but not the covariance, so the
covariance is recomputed from the judgments the build read with the build's
stored parameters (the same model, estimator, seed and Monte Carlo draws as
the build: docs/planning.md, "Planning the next judgments"). Bootstrap builds
use the covariance of their replicates. The critical values are the
``simultaneous`` procedure's (max-t, step-down as the build asks) whatever the
build's ``--tiering``: the planner aims at decisions that test backs. A build
with ``sig = 0`` is planned at ``sig = 0.05``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from orlbuild.builders.build import query_rng
from orlbuild.builders.pairwise import PAIRWISE_MODELS
from orlbuild.builders.pairwise_data import comparisons_from_arrays, pair_arrays, query_blocks
from orlbuild.builders.parameters import BuildParameters
from orlbuild.builders.planning import QueryEvidence
from orlbuild.builders.tier_procedures import simultaneous_critical
from orlbuild.builders.tiered_orl import score_uncertainty
from orlbuild.builders.uncertainty import ScoreUncertainty
from orlbuild.records import EstimationError

__all__ = ["PLANNING_SIG", "pairwise_evidence"]

#: ``sig`` the planner uses for a build made with ``sig = 0`` (strict order).
PLANNING_SIG = 0.05


def _covariance(unc: ScoreUncertainty) -> np.ndarray:
    if unc.cov is not None:
        return unc.cov
    assert unc.samples is not None
    return np.atleast_2d(np.cov(unc.samples, rowvar=False))


def pairwise_evidence(
    frame: pd.DataFrame,
    params: BuildParameters,
    tiers: Mapping[str, Sequence[Sequence[str]]],
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
            )
        )
    return evidence, skipped
