"""Backed orders: which stated orders a family-wise test supports.

(docs/tiers-and-audit.md, "How tiers are decided and audited")

Tiers are a total preorder: tiers 1 and 2 state that *every* item of tier 1
beats *every* item of tier 2. An order is *backed* when the pair is separated
by the query's family-wise procedure (``|z| > c`` with the max-t critical
value of that pair, :func:`~orlbuild.builders.tiering.deciding.simultaneous_critical`).

The notions a planner of new judgments targets are plain functions here:

* :func:`separation_matrix` - which pairs are separated, and by how much
  (``z - c``; positive: separated);
* :func:`under_judged_items` - items measured too poorly to be placed: the
  closest comparison of the item (the smallest standard error of its
  differences) is more than :data:`UNDER_JUDGED_RATIO` times the query's
  typical one. Such an item is placed by its estimate, flagged, and the
  orders it takes part in are reported as not backed; it no longer blocks
  the boundaries of the well-measured items (one driver who ran one race
  must not make the other 82 one tier);
* :func:`backed_cuts` - the positions of the score order where every pair of
  well-measured items across the cut is separated;
* :func:`boundary_evidence` - per boundary, its weakest crossing pair and
  the number of crossing pairs no test backs;
* :func:`undecided_pairs` - pairs of well-measured items that are not
  separated but sit in different tiers, or that block a boundary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from orlbuild.builders.arrays import FloatArray, IntArray

if TYPE_CHECKING:  # not at run time: a process that only slices judgments skips SciPy
    from orlbuild.builders.estimation.uncertainty import ScoreUncertainty

__all__ = [
    "UNDER_JUDGED_RATIO",
    "BoundaryEvidence",
    "Separations",
    "backed_cuts",
    "boundary_evidence",
    "placed_cuts",
    "separation_matrix",
    "stated_order_counts",
    "undecided_pairs",
    "under_judged_items",
]

#: An item is under-judged when the standard error of its best-measured difference is
#: more than this many times the query's median of the same (its information is
#: below about 1/9 of a typical item's).
UNDER_JUDGED_RATIO = 3.0

#: Score differences at or below this are exact ties (as in the leader walk).
_EXACT_TIE = 1e-9


@dataclass(frozen=True)
class Separations:
    """The pairwise decisions of one query under its family-wise procedure.

    Attributes
    ----------
    separated
        ``(n, n)`` symmetric: the pair is separated (``|z| > c``, or a
        difference with zero standard error).
    margin
        ``(n, n)``: ``|z| - c`` (``+inf`` when certain, ``-inf`` for exact ties).
    z
        ``(n, n)``: ``|d| / se`` (``nan`` when ``se = 0``).
    critical
        ``(n, n)``: the critical value of each pair.
    """

    separated: npt.NDArray[np.bool_]
    margin: FloatArray
    z: FloatArray
    critical: FloatArray


@dataclass(frozen=True)
class BoundaryEvidence:
    """What backs one tier boundary.

    Attributes
    ----------
    above, below
        The weakest crossing pair of well-measured items (smallest ``z - c``),
        ``None`` when no such pair crosses.
    z, critical
        Its studentized difference and critical value.
    crossing
        Pairs of items across the boundary.
    unbacked
        Crossing pairs that no test backs (not separated, or involving an
        under-judged item).
    """

    above: str | None
    below: str | None
    z: float | None
    critical: float | None
    crossing: int
    unbacked: int


def separation_matrix(uncertainty: ScoreUncertainty, critical: FloatArray) -> Separations:
    """Which pairs the family-wise procedure separates.

    Parameters
    ----------
    uncertainty
        Scores and standard errors of the differences.
    critical
        ``(n, n)`` critical values (``inf`` outside the family).
    """
    scores = uncertainty.scores
    diff = np.abs(scores[:, None] - scores[None, :])
    se = uncertainty.se
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, diff / np.where(se > 0, se, 1.0), np.nan)
    certain = (se <= 0) & (diff > _EXACT_TIE)
    margin = np.where(se > 0, z - critical, np.where(certain, np.inf, -np.inf))
    separated = (margin > 0) & (diff > _EXACT_TIE)
    np.fill_diagonal(separated, False)
    return Separations(separated, margin, z, np.asarray(critical, dtype=np.float64))


def under_judged_items(
    se: FloatArray, *, ratio: float = UNDER_JUDGED_RATIO
) -> npt.NDArray[np.bool_]:
    """Items measured too poorly to be placed.

    See docs/tiers-and-audit.md, "How tiers are decided and audited".

    Parameters
    ----------
    se
        ``(n, n)`` standard errors of the score differences.
    ratio
        How many times the query's median an item's closest standard error may be.

    Returns
    -------
    numpy.ndarray
        One flag per item. Queries of fewer than three items flag none (two
        items share their only comparison).

    Examples
    --------
    >>> import numpy as np
    >>> se = np.array([[0, .3, .3, 3.], [.3, 0, .3, 3.], [.3, .3, 0, 3.], [3., 3., 3., 0]])
    >>> under_judged_items(se).tolist()
    [False, False, False, True]
    """
    n = se.shape[0]
    if n < 3:
        return np.zeros(n, dtype=bool)
    off = np.where(np.eye(n, dtype=bool), np.inf, se)
    off = np.where(off > 0, off, np.inf)  # se 0: certain, says nothing about precision
    closest = off.min(axis=1)
    finite = closest[np.isfinite(closest)]
    if len(finite) == 0:
        return np.zeros(n, dtype=bool)
    typical = float(np.median(finite))
    return np.asarray(np.isfinite(closest) & (closest > ratio * typical), dtype=bool)


def backed_cuts(
    order: IntArray,
    scores: FloatArray,
    separations: Separations,
    measured: npt.NDArray[np.bool_],
) -> npt.NDArray[np.bool_]:
    """For each position ``k`` of the score order: may a boundary sit before ``order[k]``?

    A cut is backed when both sides hold a well-measured item and every pair
    of well-measured items across it is separated; a cut between exactly tied
    scores never is. Returned as a length ``n`` array (position 0 is False).
    """
    n = len(order)
    out = np.zeros(n, dtype=bool)
    if n < 2:
        return out
    ordered_measured = measured[order]
    blocking = ~separations.separated[np.ix_(order, order)]
    blocking &= ordered_measured[:, None] & ordered_measured[None, :]
    blocking = np.triu(blocking, 1)
    # reach[i]: the farthest position j > i whose pair with i is not separated
    positions = np.arange(n)
    reach = np.where(blocking.any(axis=1), (blocking * positions[None, :]).max(axis=1), -1)
    furthest = np.maximum.accumulate(reach)  # over i < k: furthest[k - 1]
    measured_before = np.cumsum(ordered_measured)
    total = int(measured_before[-1])
    sorted_scores = scores[order]
    for k in range(1, n):
        both_sides = 0 < measured_before[k - 1] < total
        tied = sorted_scores[k - 1] - sorted_scores[k] <= _EXACT_TIE
        out[k] = both_sides and not tied and furthest[k - 1] < k
    return out


def placed_cuts(
    order: IntArray,
    scores: FloatArray,
    cuts: npt.NDArray[np.bool_],
    measured: npt.NDArray[np.bool_],
) -> npt.NDArray[np.bool_]:
    """One boundary per distinct split of the well-measured items.

    Backed cuts that differ only by under-judged items (runs of backed
    positions with only under-judged items between them) state the same
    split of the well-measured items; the one with the largest score gap is
    kept, so an under-judged item joins the side its estimate is closer to.
    """
    chosen = np.zeros_like(cuts)
    ordered_measured = measured[order]
    sorted_scores = scores[order]
    k, n = 1, len(order)
    while k < n:
        if not cuts[k]:
            k += 1
            continue
        run = [k]
        j = k
        while j + 1 < n and cuts[j + 1] and not ordered_measured[j]:
            j += 1
            run.append(j)
        gaps = [sorted_scores[p - 1] - sorted_scores[p] for p in run]
        chosen[run[int(np.argmax(gaps))]] = True
        k = j + 1
    return chosen


def boundary_evidence(
    items: npt.NDArray[np.object_],
    above: IntArray,
    below: IntArray,
    separations: Separations,
    measured: npt.NDArray[np.bool_],
) -> BoundaryEvidence:
    """The weakest crossing pair of a boundary between the items ``above`` and ``below``."""
    crossing = len(above) * len(below)
    block = separations.separated[np.ix_(above, below)]
    both = measured[above][:, None] & measured[below][None, :]
    unbacked = int((~block | ~both).sum())
    if not both.any():
        return BoundaryEvidence(None, None, None, None, crossing, unbacked)
    margin = np.where(both, separations.margin[np.ix_(above, below)], np.inf)
    i, j = np.unravel_index(int(np.argmin(margin)), margin.shape)
    a, b = int(above[i]), int(below[j])
    z = separations.z[a, b]
    c = separations.critical[a, b]
    return BoundaryEvidence(
        above=str(items[a]),
        below=str(items[b]),
        z=None if not np.isfinite(z) else float(z),
        critical=None if not np.isfinite(c) else float(c),
        crossing=crossing,
        unbacked=unbacked,
    )


def stated_order_counts(
    tiers: list[IntArray], separations: Separations, measured: npt.NDArray[np.bool_]
) -> tuple[int, int]:
    """``(stated, unbacked)``: cross-tier orders the tiers state, and those no test backs."""
    label = np.empty(sum(len(t) for t in tiers), dtype=np.int64)
    for k, members in enumerate(tiers):
        label[members] = k
    stated = label[:, None] < label[None, :]
    backed = separations.separated & measured[:, None] & measured[None, :]
    return int(stated.sum()), int((stated & ~backed).sum())


def undecided_pairs(
    items: npt.NDArray[np.object_],
    separations: Separations,
    measured: npt.NDArray[np.bool_],
) -> list[tuple[str, str, float]]:
    """Pairs of well-measured items the procedure does not separate, with ``z - c``
    (closest to being separated first): what more judgments could decide."""
    n = len(items)
    first, second = np.triu_indices(n, 1)
    keep = ~separations.separated[first, second] & measured[first] & measured[second]
    margin = separations.margin[first, second][keep]
    pairs = sorted(
        zip(first[keep].tolist(), second[keep].tolist(), margin.tolist(), strict=True),
        key=lambda t: -t[2],
    )
    return [(str(items[a]), str(items[b]), float(m)) for a, b, m in pairs]
