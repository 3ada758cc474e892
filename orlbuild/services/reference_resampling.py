"""Verdicts under the reference's own uncertainty (README, "Comparing many systems").

An ORL built from judgments is an estimate. :func:`reference_verdicts`
rebuilds the ORLs on ``B`` annotator-bootstrap resamples of the judgments
(annotators drawn with replacement, each copy kept as its own annotator),
rescores every system against each rebuilt reference, reruns the comparison,
and reports for every verdict of the original comparison the share of
resamples under which it holds:

* a pair's verdict: significant in the same direction, or not significant;
* a system's tier (the same tier number);
* a system's rank interval (the same ``[rank_lo, rank_hi]``).

The rebuilds go through the build's mapper, so ``--jobs`` and Dask apply to
them as to a build.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from orlbuild.builders.build import QueryMapper, build_orls
from orlbuild.builders.parameters import BuildParameters
from orlbuild.errors import ConfigError
from scoring import ORL
from scoring.evaluation import evaluate_runs
from scoring.statistics import score_panels, system_comparison

__all__ = [
    "HOLD_THRESHOLD",
    "ReferenceVerdicts",
    "annotator_resample",
    "reference_verdicts",
]

#: Verdicts holding under fewer than this share of resamples are flagged.
HOLD_THRESHOLD = 0.95


@dataclass(frozen=True)
class ReferenceVerdicts:
    """The original verdicts and the share of reference resamples that keep each.

    Attributes
    ----------
    pairs
        One row per (measure, pair): the comparison's columns plus ``holds``
        (share of resamples with the same verdict) and ``fragile`` (``holds``
        below :data:`HOLD_THRESHOLD`).
    systems
        One row per (measure, system): tier, letters, ``rank_lo``, ``rank_hi``,
        ``tier_holds``, ``interval_holds`` and ``fragile``.
    resamples
        Rebuilds that produced an ORL for every query scored.
    """

    pairs: pd.DataFrame
    systems: pd.DataFrame
    resamples: int


def annotator_resample(frame: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Judgments of annotators drawn with replacement; the ``i``-th draw is renamed ``NAME#i``.

    Raises
    ------
    ConfigError
        When the judgments have no ``annotator`` column.
    """
    if "annotator" not in frame.columns:
        raise ConfigError("reference resampling needs judgments with an annotator column")
    annotators = np.asarray(sorted(frame["annotator"].astype(str).unique()), dtype=object)
    drawn = rng.choice(annotators, size=annotators.size, replace=True)
    groups = dict(tuple(frame.groupby(frame["annotator"].astype(str), sort=False)))
    parts = [groups[name].assign(annotator=f"{name}#{i}") for i, name in enumerate(drawn)]
    return pd.concat(parts, ignore_index=True)


def _orls(outcome_orls: Mapping[str, Any]) -> dict[str, ORL]:
    return {q: ORL(o.ranks, grades=o.native_grades) for q, o in outcome_orls.items()}


def _verdicts(
    orls: Mapping[str, ORL],
    runs: Mapping[str, pd.DataFrame],
    measures: Sequence[str],
    comparison_options: Mapping[str, Any],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    results = evaluate_runs(orls, list(runs.values()), measures)
    per_system = {name: r.per_query for name, r in zip(runs, results, strict=True)}
    comparison = system_comparison(score_panels(per_system, measures), **comparison_options)
    return comparison.pairs, comparison.tiers()


def _direction(pairs: pd.DataFrame) -> pd.Series:
    """+1 / -1 for a significant pair (by the sign of the difference), 0 otherwise."""
    sign = np.sign(pairs["diff"].to_numpy(dtype=float))
    return pd.Series(np.where(pairs["significant"].to_numpy(dtype=bool), sign, 0.0))


def reference_verdicts(
    judgments: pd.DataFrame,
    params: BuildParameters,
    runs: Mapping[str, pd.DataFrame],
    measures: Sequence[str],
    *,
    resamples: int = 200,
    seed: int = 0,
    alpha: float = 0.05,
    test: str | None = None,
    permutations: int = 1000,
    mapper: QueryMapper | None = None,
) -> ReferenceVerdicts:
    """Share of annotator-bootstrap references under which each verdict holds.

    Parameters
    ----------
    judgments
        The build's judgments (with ``annotator``), as :func:`build_orls` takes them.
    params
        The build's parameters; every rebuild uses them (and the same seed).
    runs
        System -> run table (``query, item, score``).
    measures
        Measure names.
    resamples
        ``B``, the number of rebuilt references.
    seed
        Seed of the annotator draws and of the comparisons.
    alpha, test, permutations
        The comparison (:func:`scoring.statistics.system_comparison`).
    mapper
        Runs each rebuild's per-query work (an executor's ordered map).

    Returns
    -------
    ReferenceVerdicts

    Raises
    ------
    ConfigError
        Without annotators, with ``resamples < 1``, or when no rebuild succeeds.
    """
    if resamples < 1:
        raise ConfigError(f"--reference-resamples must be at least 1, got {resamples}")
    options = {"test": test, "permutations": permutations, "alpha": alpha, "seed": seed}
    resolved, outcome = build_orls(judgments, params, mapper=mapper)
    pairs, systems = _verdicts(_orls(outcome.orls), runs, measures, options)
    direction = _direction(pairs)
    key_pairs = ["measure", "a", "b"]
    key_systems = ["measure", "system"]
    pair_hits = np.zeros(len(pairs))
    tier_hits = np.zeros(len(systems))
    interval_hits = np.zeros(len(systems))
    done = 0
    rng = np.random.default_rng(seed)
    for _ in range(resamples):
        frame = annotator_resample(judgments, rng)
        _, rebuilt = build_orls(frame, resolved, on_error="skip", mapper=mapper)
        orls = _orls(rebuilt.orls)
        if set(orls) != set(outcome.orls):
            continue  # a query lost its ORL: this resample cannot judge the same verdicts
        b_pairs, b_systems = _verdicts(orls, runs, measures, options)
        b_pairs = pairs[key_pairs].merge(b_pairs, on=key_pairs, how="left")
        pair_hits += (_direction(b_pairs).to_numpy() == direction.to_numpy()).astype(float)
        b_systems = systems[key_systems].merge(b_systems, on=key_systems, how="left")
        tier_hits += (b_systems["tier"].to_numpy() == systems["tier"].to_numpy()).astype(float)
        same_interval = (b_systems["rank_lo"].to_numpy() == systems["rank_lo"].to_numpy()) & (
            b_systems["rank_hi"].to_numpy() == systems["rank_hi"].to_numpy()
        )
        interval_hits += same_interval.astype(float)
        done += 1
    if done == 0:
        raise ConfigError("no reference resample rebuilt an ORL for every query")
    pairs = pairs.assign(holds=pair_hits / done)
    pairs = pairs.assign(fragile=pairs["holds"] < HOLD_THRESHOLD)
    systems = systems.assign(tier_holds=tier_hits / done, interval_holds=interval_hits / done)
    fragile = (systems["tier_holds"] < HOLD_THRESHOLD) | (
        systems["interval_holds"] < HOLD_THRESHOLD
    )
    return ReferenceVerdicts(pairs=pairs, systems=systems.assign(fragile=fragile), resamples=done)
