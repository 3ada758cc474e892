"""One family of decisions: verdicts, rank intervals and Monte Carlo error of one measure.

docs/comparing-systems.md, "One family of decisions". Tiers, letters, pairwise
verdicts and rank intervals all read one relation, ``above[i, j]``: system ``i``
is significantly above system ``j``.

* The relation is the test's significant pairs, oriented by the sign of the
  mean difference, **closed under transitivity**: when ``A > B`` and ``B > C``
  are significant, ``A > C`` is too (``implied``). On the event that every
  rejection of the test is right in its direction (probability at least
  ``1 - alpha`` for a family-wise test), the implied verdicts are right as
  well, so closing adds no error.
* The rank interval of ``j`` is ``[1 + #{k above j}, m - #{k below j}]``, the
  construction of Mogstad, Romano, Shaikh & Wilhelm (2024, *Review of Economic
  Studies* 91(1), section 3) applied to these rejections: it covers every
  system's true rank at once whenever the verdicts are all right.

Then no decision contradicts another (the seeded property test
``tests/statistics/test_family_consistency.py`` checks it on random panels):
two systems share a letter exactly when neither is above the other; a system
placed for sure (interval of one rank) differs significantly from every other;
when ``A`` is above ``B`` both ends of ``A``'s interval lie above ``B``'s; two
systems not significantly different have intervals sharing a rank. What can
remain is a significant pair whose intervals still share a rank:
:func:`overlap_sentence` says in one sentence why that is no contradiction.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import numpy.typing as npt

from scoring.statistics.panel import BoolMatrix, FloatVector, IntVector

__all__ = [
    "MC_Z",
    "closed_verdicts",
    "monte_carlo_error",
    "near_alpha",
    "overlap_sentence",
    "overlapping_significant_pairs",
    "permutations_to_decide",
    "rank_bounds_from_verdicts",
]

#: A p-value within ``MC_Z`` Monte Carlo standard errors of alpha is flagged (99%, two-sided).
MC_Z: Final = 2.576


def closed_verdicts(above: BoolMatrix) -> BoolMatrix:
    """The transitive closure of ``above`` (``above[i, j]``: ``i`` significantly above ``j``).

    Parameters
    ----------
    above
        Square boolean matrix, acyclic (the verdicts follow the mean order).

    Returns
    -------
    numpy.ndarray
        ``closed[i, j]`` when a chain ``i > k1 > ... > j`` of verdicts exists
        (Warshall's algorithm, one vectorised step per system).
    """
    closed = np.array(above, dtype=bool, copy=True)
    for k in range(closed.shape[0]):
        closed |= closed[:, k, None] & closed[None, k, :]
    return closed


def rank_bounds_from_verdicts(above: BoolMatrix) -> tuple[IntVector, IntVector]:
    """Rank intervals ``(lower, upper)`` (1 = best) from closed verdicts.

    ``lower_j = 1 + #{k: above[k, j]}`` and ``upper_j = m - #{k: above[j, k]}``
    (Mogstad et al. 2024's ``1 + |N-(j)|`` and ``m - |N+(j)|``).
    """
    m = above.shape[0]
    lower = 1 + above.sum(axis=0).astype(np.int64)
    upper = m - above.sum(axis=1).astype(np.int64)
    return lower, upper


def overlapping_significant_pairs(
    above: BoolMatrix, lower: IntVector, upper: IntVector
) -> list[tuple[int, int]]:
    """The pairs ``(i, j)``, ``i`` above ``j``, whose rank intervals share a rank."""
    first, second = np.nonzero(above & (upper[:, None] >= lower[None, :]))
    return list(zip(first.tolist(), second.tolist(), strict=True))


def overlap_sentence(measure: str, pairs: list[tuple[str, str]]) -> str | None:
    """The one sentence that explains significant pairs with overlapping rank intervals.

    Parameters
    ----------
    measure
        The measure's name.
    pairs
        ``(better, worse)`` system names, significant, intervals overlapping.

    Returns
    -------
    str or None
        ``None`` when there is no such pair.
    """
    if not pairs:
        return None
    better, worse = pairs[0]
    more = f" and {len(pairs) - 1} more" if len(pairs) > 1 else ""
    return (
        f"{measure}: {better} > {worse}{more} are significant yet their rank intervals share "
        "a rank: an interval lists every rank a system takes in some order consistent with "
        "all the verdicts at once, and the orders in which each takes that rank differ "
        "(the better one's interval still starts and ends above the worse one's)."
    )


def monte_carlo_error(
    p_value: FloatVector, p_adjusted: FloatVector, permutations: int
) -> FloatVector:
    """Monte Carlo standard error of the adjusted p-values of ``permutations`` draws.

    The unadjusted estimate ``p`` has the binomial error ``sqrt(p (1 - p) / B)``;
    an adjustment that multiplies it (Holm, Bonferroni; ``max-t`` and
    ``tukey-hsd`` report ``p_adjusted = p_value``) multiplies its error by the
    same factor.
    """
    p = np.clip(np.asarray(p_value, dtype=np.float64), 1e-300, 1.0)
    adjusted = np.asarray(p_adjusted, dtype=np.float64)
    return np.asarray((adjusted / p) * np.sqrt(p * (1.0 - p) / permutations), dtype=np.float64)


def permutations_to_decide(
    p_value: float, p_adjusted: float, alpha: float, permutations: int
) -> int:
    """Draws after which ``p_adjusted`` would lie ``MC_Z`` standard errors from ``alpha``.

    Solves ``MC_Z * factor * sqrt(p (1 - p) / B) = |p_adjusted - alpha|`` for
    ``B`` (``factor = p_adjusted / p``), with the gap at least one draw's
    worth, ``1 / (permutations + 1)``.
    """
    p = min(max(p_value, 1e-300), 1.0)
    factor = p_adjusted / p
    gap = max(abs(p_adjusted - alpha), 1.0 / (permutations + 1.0))
    needed = (MC_Z * factor) ** 2 * p * (1.0 - p) / gap**2
    return max(permutations + 1, math.ceil(needed))


def near_alpha(
    p_adjusted: npt.NDArray[np.float64], error: FloatVector, alpha: float
) -> npt.NDArray[np.bool_]:
    """Adjusted p-values within ``MC_Z`` Monte Carlo standard errors of ``alpha``."""
    return np.asarray(np.abs(p_adjusted - alpha) < MC_Z * error, dtype=bool)
