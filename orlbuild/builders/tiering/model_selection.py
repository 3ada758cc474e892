"""Tiers as model selection: the ``model`` tiering (docs/tiers-and-audit.md, "How tiers are decided
and audited").

Items sorted by score are partitioned into contiguous groups of equal
strength. A partition is fitted by maximum likelihood with one strength per
group (Bradley-Terry on groups, so comparisons within a group are at 1/2;
Plackett-Luce likewise for rankings) by a damped Newton method on the grouped
likelihood (:mod:`orlbuild.builders.tiering.grouped_fit`, L-BFGS-B as fallback) with
the build's ridge ``alpha = c / n_items`` so that a group that never loses
keeps a finite strength. A partition with ``K`` groups scores

    ``BIC = -2 loglik + (K - 1) * penalty``.

**Why the penalty is not only** ``log N``: BIC's ``log N`` per parameter
assumes the candidate groupings were fixed before seeing the data. Here the
order comes from the same data, and that alone makes the best split of
equal items look good: twice the log-likelihood gain of the best split of
``n`` equal items sorted by score grows like ``0.7 n`` (measured: about 20
at 30 items with 3 comparisons per pair, against ``log N = 7.2``), so plain
BIC splits nearly every all-equal query of 20 or more items. The penalty of
one more group is therefore ``max(log N, q_n)`` where ``q_n`` is the
``1 - sig`` quantile of twice that best-split gain for ``n`` equal items
under a balanced design - for which it equals the largest between-group sum
of squares of ``n`` sorted standard normals split in two (simulated once per
``n`` with a fixed seed; the quadratic approximation of the log-likelihood
with information ``h (n I - 1 1^T)``). With it, an all-equal query is split
with probability about ``sig`` (measured by ``orlbuild calibrate``).

The search starts from one group and repeatedly applies the single boundary
toggle (add or remove a boundary between two adjacent items) that lowers the
BIC most, until none does. The result is a local optimum for every single
boundary, so each recorded decision is confirmed by its own BIC change: the
audit records, per boundary, the log-likelihood gain of having it and the
BIC change (negative for kept boundaries, positive for rejected ones).

**Ties between toggles.** Two toggles can change the BIC by exactly the same
amount (symmetric data: the top two items beat everyone and the bottom two
lose to everyone, so cutting after the second item and before the
second-to-last gain the same likelihood), and then the choice must not be
left to the solver's last digits. BIC changes within
:func:`bic_tie_tolerance` (``TIE_ATOL + TIE_RTOL * |loglik|``, ``1e-7`` plus
``1e-10`` of the current log-likelihood) are tied, and the latest boundary in
rank order wins (:func:`choose_toggle`); a toggle is applied only when it
lowers the BIC by more than that tolerance. ``1e-7`` is far above what the
Newton fits leave (they stop at a gradient of ``1e-10`` or when the Newton
decrement is at the rounding of the objective; measured: tied toggles differ
by at most ``4e-11``), and the relative part covers the rounding of a
log-likelihood summed over many comparisons; it is far below any evidence (a
change of ``1e-7`` in ``2 loglik`` is a likelihood ratio of ``1 + 5e-8``, the
penalty of one group at least ``log 2``). The earlier L-BFGS-B fits (scipy's
default stopping rule) were off by up to ``1e-7`` between tied candidates and
up to ``7e-4`` in a recorded gain. The latest boundary (of two equally good
cuts, the one that leaves more items in the upper tier) is also how that
noise happened to resolve most ties: 43 of the 50 exact ties met in 1,236
simulated and sample queries (every one of the sample data's), so most
builds made before the rule rebuild with the same tiers; the other 7 queries
change, each at such a tie (tests/benchmarks/bench_model_tiers.py compares
the two fits).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt

from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.estimation.likelihoods import ItemLikelihood
from orlbuild.builders.estimation.uncertainty import ScoreUncertainty
from orlbuild.builders.tiering.grouped_fit import GroupedFitter
from orlbuild.builders.tiering.walk import EXACT_TIE, SeparationWalk
from orlbuild.records import TieDecision

__all__ = [
    "TIE_ATOL",
    "TIE_RTOL",
    "bic_tie_tolerance",
    "choose_toggle",
    "model_tiers",
    "ordered_split_penalty",
]

#: Monte Carlo draws of :func:`ordered_split_penalty` (a property of ``n`` and ``sig`` only).
PENALTY_DRAWS = 20000
_PENALTY_SEED = 20261201
#: Absolute part of the tie tolerance of two BIC changes (``-2 loglik`` scale).
TIE_ATOL = 1e-7
#: Relative part of the tie tolerance, times ``|loglik|`` of the current partition.
TIE_RTOL = 1e-10


@lru_cache(maxsize=512)
def ordered_split_penalty(n_items: int, sig: float) -> float:
    """``q_n``: the ``1 - sig`` quantile of the best split's ``2 * gain`` for ``n`` equal items.

    Under a balanced design twice the log-likelihood gain of splitting the
    score-sorted items after position ``k`` is the between-group sum of
    squares of the standardised scores; this draws ``n`` standard normals
    :data:`PENALTY_DRAWS` times (fixed seed), sorts them and takes the largest
    of the ``n - 1`` between-group sums of squares.
    """
    if n_items < 2:
        return 0.0
    rng = np.random.default_rng([_PENALTY_SEED, n_items])
    z = -np.sort(-rng.standard_normal((PENALTY_DRAWS, n_items)), axis=1)
    head = np.cumsum(z, axis=1)[:, :-1]
    total = head[:, -1:] + z[:, -1:]
    k = np.arange(1, n_items, dtype=np.float64)
    between = head**2 / k + (total - head) ** 2 / (n_items - k) - total**2 / n_items
    return float(np.quantile(between.max(axis=1), 1.0 - sig))


def bic_tie_tolerance(loglik: float) -> float:
    """BIC changes closer than this are tied: ``TIE_ATOL + TIE_RTOL * |loglik|``."""
    return TIE_ATOL + TIE_RTOL * abs(loglik)


def choose_toggle(change: dict[int, float], tolerance: float) -> int | None:
    """The boundary toggle the search applies, or ``None`` when none lowers the BIC.

    Only toggles that lower the BIC by more than ``tolerance`` count; among
    those, every toggle within ``tolerance`` of the lowest BIC change is tied
    with it, and the latest boundary in rank order (the largest sorted
    position) wins: of two equally good cuts, the one that leaves more items
    in the upper tier. Solver noise below ``tolerance`` therefore never
    decides (docs/tiers-and-audit.md, "How tiers are decided and audited").

    Parameters
    ----------
    change
        Sorted position of a candidate boundary -> BIC change of toggling it.
    tolerance
        :func:`bic_tie_tolerance` of the current partition's log-likelihood.

    Returns
    -------
    int or None
    """
    lowering = {k: c for k, c in change.items() if c < -tolerance}
    if not lowering:
        return None
    lowest = min(lowering.values())
    return max(k for k, c in lowering.items() if c <= lowest + tolerance)


def _labels(boundaries: frozenset[int], order: IntArray) -> IntArray:
    """Group of each item for boundaries before sorted positions ``boundaries``."""
    n = len(order)
    opens = np.zeros(n, dtype=np.int64)
    opens[sorted(boundaries)] = 1
    labels = np.empty(n, dtype=np.int64)
    labels[order] = np.cumsum(opens)
    return labels


def _start(labels: IntArray, scores: FloatArray) -> FloatArray:
    """Mean item score per group: a good starting point for the grouped fit."""
    sums = np.bincount(labels, weights=scores)
    return np.asarray(sums / np.bincount(labels), dtype=np.float64)


def model_tiers(
    query: str,
    items: npt.NDArray[np.object_],
    uncertainty: ScoreUncertainty,
    likelihood: ItemLikelihood,
    *,
    sig: float,
    alpha: float,
) -> tuple[list[list[str]], list[TieDecision]]:
    """The BIC-best partition of the score-sorted items, with its audit.

    Parameters
    ----------
    query
        Query id.
    items
        Item ids aligned with ``uncertainty.scores``.
    uncertainty
        Scores (their order is partitioned) and the intervals recorded with
        each decision.
    likelihood
        The method's item-level likelihood.
    sig
        Level of the selection-adjusted penalty (:func:`ordered_split_penalty`).
    alpha
        Ridge of the grouped fits.

    Returns
    -------
    tiers : list of list of str
    decisions : list of TieDecision
        Per item after the first: the log-likelihood gain of a boundary
        before it and the BIC change that boundary makes.

    Notes
    -----
    Each step applies the toggle with the lowest BIC change if it lowers the
    BIC by more than :func:`bic_tie_tolerance` of the current partition's
    log-likelihood; toggles within that tolerance of the lowest are tied and
    the latest boundary in rank order wins (:func:`choose_toggle`). Each
    partition is fitted once (Newton, :mod:`orlbuild.builders.tiering.grouped_fit`),
    so the result does not depend on the solver's path.
    """
    scores = uncertainty.scores
    n = len(scores)
    walk = SeparationWalk(query, items, uncertainty)
    order = walk.order
    penalty = max(float(np.log(max(likelihood.n_observations, 2.0))), ordered_split_penalty(n, sig))
    sorted_scores = scores[order]
    candidates = [k for k in range(1, n) if sorted_scores[k - 1] - sorted_scores[k] > EXACT_TIE]
    fitter = GroupedFitter(likelihood)
    fitted: dict[frozenset[int], float] = {}  # one fit per partition, reused

    def fit(partitions: list[frozenset[int]]) -> None:
        todo = [b for b in dict.fromkeys(partitions) if b not in fitted]
        labels = [_labels(b, order) for b in todo]
        starts = [_start(lab, scores) if b else None for b, lab in zip(todo, labels, strict=True)]
        for b, (value, _) in zip(
            todo, fitter.fit_many(labels, alpha=alpha, starts=starts), strict=True
        ):
            fitted[b] = value

    boundaries: frozenset[int] = frozenset()
    fit([boundaries])
    current = fitted[boundaries]
    toggles: dict[int, float] = {}
    while True:
        fit([boundaries ^ {k} for k in candidates])
        toggles = {k: fitted[boundaries ^ {k}] for k in candidates}
        change = {
            k: -2.0 * (ll - current) + (penalty if k not in boundaries else -penalty)
            for k, ll in toggles.items()
        }
        best = choose_toggle(change, bic_tie_tolerance(current))
        if best is None:
            break
        boundaries = boundaries ^ {best}
        current = toggles[best]
    for k in range(1, n):
        if k not in toggles:
            walk.add(False, "exact score tie")
            continue
        kept = k in boundaries
        # with minus without the boundary before sorted position k
        gain = current - toggles[k] if kept else toggles[k] - current
        bic = -2.0 * gain + penalty
        rule = f"model: boundary {'lowers' if kept else 'raises'} BIC by {abs(bic):.3g}"
        walk.add(kept, rule, loglik_gain=gain, bic_change=bic)
    return walk.tiers(procedure="model", family_size=n - 1, bic_penalty=penalty)
