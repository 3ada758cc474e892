"""Leave one annotator out: which separations depend on one annotator.

(docs/tiers-and-audit.md, "Quality checks")

For each annotator, every query they judged is tiered again without their
comparisons (same parameters, same reliabilities of the others, same random
generator), and the pairs of items whose stated relation changes -
separated (different tiers) versus tied (same tier) - are counted.
Queries that cannot be built without the annotator (an item only they
compared) are not counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from orlbuild.builders.estimation.crowd_bt import CrowdBTModel, ReliabilityFit
from orlbuild.builders.pairwise_data import PairwiseComparisons
from orlbuild.builders.parameters import BuildParameters
from orlbuild.builders.tiering.posterior import PosteriorPrior
from orlbuild.builders.tiering.query_orl import orl_from_model
from orlbuild.records import AnnotatorReliability, QueryBuildError, QueryORL

__all__ = ["flipped_pairs", "leave_one_annotator_out"]


def flipped_pairs(first: QueryORL, second: QueryORL) -> int:
    """Pairs of items (in both ORLs) that are separated in one and tied in the other."""
    a, b = first.ranks, second.ranks
    items = sorted(set(a) & set(b))
    ra = np.array([a[i] for i in items])
    rb = np.array([b[i] for i in items])
    upper = np.triu(np.ones((len(items), len(items)), dtype=bool), 1)
    split_a = ra[:, None] != ra[None, :]
    split_b = rb[:, None] != rb[None, :]
    return int((upper & (split_a != split_b)).sum())


def _without(comps: PairwiseComparisons, code: int) -> PairwiseComparisons:
    keep = comps.annotators != code
    kept_units, units = np.unique(comps.units[keep], return_inverse=True)
    return replace(
        comps,
        winners=comps.winners[keep],
        losers=comps.losers[keep],
        units=units.astype(np.int64),
        annotators=comps.annotators[keep],
        weights=None if comps.weights is None else comps.weights[keep],
        unit_sizes=None if comps.unit_sizes is None else comps.unit_sizes[kept_units],
        ties=None if comps.ties is None else comps.ties[keep],
    )


def leave_one_annotator_out(
    queries: Sequence[tuple[str, PairwiseComparisons]],
    params: BuildParameters,
    fit: ReliabilityFit,
    orls: dict[str, QueryORL],
    rng_of: Callable[[str], np.random.Generator],
    prior: PosteriorPrior | None = None,
) -> list[AnnotatorReliability]:
    """The annotators' reliabilities with the number of flipped pairs filled in.

    Parameters
    ----------
    queries
        ``(query, comparisons)`` of the build.
    params
        The resolved build parameters.
    fit
        The build's reliabilities.
    orls
        The built ORLs (queries missing here, failed ones, are not counted).
    rng_of
        ``query -> numpy.random.Generator``, the build's generator of a query.
    prior
        The build's empirical-Bayes prior (a ``posterior`` build tiers each
        leave-one-out fit with it).
    """
    flips = np.zeros(len(fit.names), dtype=np.int64)
    for query, comps in queries:
        built = orls.get(query)
        if built is None:
            continue
        for local, name in enumerate(comps.annotator_names.astype(str).tolist()):
            if len(comps.annotator_names) < 2 or not np.any(comps.annotators == local):
                continue
            # the model pairwise_query_orl builds for --annotators reliability, started
            # from the build's strengths of the query (Newton then needs a few steps)
            model = CrowdBTModel(_without(comps, local), params.reg, fit, fit.scores.get(query))
            try:
                alone = orl_from_model(query, model, params, rng_of(query), prior)
            except QueryBuildError:
                continue
            flips[int(np.searchsorted(fit.names, name))] += flipped_pairs(built, alone)
    return [replace(r, flips=int(flips[k])) for k, r in enumerate(fit.annotators)]
