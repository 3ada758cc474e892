"""System tiers and the compact letter display (docs/comparing-systems.md, "Comparing many
systems").

Both read the significance verdicts of one measure's pairs:

* **Tiers** come from the leader walk the ORL builders use for items: the
  systems are sorted by mean (best first); the first leads tier 1; each next
  system joins the current tier when it is not significantly different from
  the tier's *leader*, otherwise it opens the next tier and leads it. Tiers are
  contiguous and disjoint, so a reader takes them in at a glance.
* **Letters** (the compact letter display of IR papers, Piepho 2004's
  insert-and-absorb algorithm): two systems share a letter exactly when their
  difference is not significant. Letters overlap where the tiers must cut.

The walk is written here rather than shared with
``orlbuild.builders.tiering.walk``: :mod:`scoring` imports nothing from
:mod:`orlbuild`, and systems carry a significance matrix, not the builders'
score uncertainty.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from scoring.statistics.panel import BoolMatrix, IntVector
from scoring.statistics.verdicts import closed_verdicts, rank_bounds_from_verdicts

__all__ = [
    "TIER_COLUMNS",
    "compact_letters",
    "leader_tiers",
    "system_tiers",
    "verdict_relation",
]

TIER_COLUMNS: Final = (
    "measure",
    "system",
    "mean",
    "rank",
    "tier",
    "letters",
    "rank_lo",
    "rank_hi",
)
#: Symbols of the letter display, in order (a-z, A-Z, then Greek).
_SYMBOLS: Final = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" + "αβγδεζηθικλμνξοπρστυφχψω"
)

#: Beyond this many letters per system the exact display gives way to a greedy one.
MAX_LETTERS_PER_SYSTEM: Final = 4


def leader_tiers(significant: BoolMatrix) -> IntVector:
    """Tier (1 = best) of each system, systems already sorted best first.

    Parameters
    ----------
    significant
        Symmetric boolean matrix: ``significant[i, j]`` when systems ``i`` and
        ``j`` (in mean order) differ significantly.

    Returns
    -------
    numpy.ndarray
        1-based tier per system, non-decreasing.
    """
    tiers = np.ones(significant.shape[0], dtype=np.int64)
    leader = 0
    for index in range(1, significant.shape[0]):
        if significant[leader, index]:
            leader = index
            tiers[index] = tiers[index - 1] + 1
        else:
            tiers[index] = tiers[index - 1]
    return tiers


def compact_letters(significant: BoolMatrix) -> list[str]:
    """Compact letter display: systems share a letter iff not significantly different.

    Piepho's insert-and-absorb: start with one letter for every system; for each
    significant pair, every letter held by both is split into a copy without
    the first and a copy without the second; letters contained in another are
    absorbed. Letters are then named in order of their best system (``a`` for
    the group of the best system). Verdicts of real tests are close to ordered
    and give at most a few letters per system; should the exact display need
    more than four letters per system, a greedy cover of the not-significant
    pairs is shown instead (still: a shared letter iff not significant).

    Parameters
    ----------
    significant
        Symmetric boolean matrix, systems sorted best first.

    Returns
    -------
    list of str
        The letters of each system (more than 76 letters are written as
        comma-separated numbers).
    """
    columns = _ordered_runs(~significant)
    if columns is None:
        columns = _insert_absorb(significant)
    if columns is None:
        columns = _greedy_cover(~significant)
    return _letters_of(columns)


def _letters_of(columns: BoolMatrix | None) -> list[str]:
    """Name the letters (``a`` for the best system's group) and spell each system's."""
    assert columns is not None
    n = columns.shape[1]
    order = np.lexsort((-columns.sum(axis=1), columns.argmax(axis=1)))
    columns = columns[order]
    if len(columns) <= len(_SYMBOLS):
        names = list(_SYMBOLS[: len(columns)])
        return ["".join(names[k] for k in np.flatnonzero(columns[:, s])) for s in range(n)]
    return [",".join(str(k + 1) for k in np.flatnonzero(columns[:, s])) for s in range(n)]


def _ordered_runs(not_significant: BoolMatrix) -> BoolMatrix | None:
    """The letters when the verdicts are ordered, else ``None``.

    Ordered: each system is n.s. from a contiguous run of its neighbours in
    mean order, and the runs' ends never move back. Then the maximal groups of
    mutually n.s. systems are exactly the maximal runs (always so for Tukey
    HSD, whose verdicts depend on the difference of means only).
    """
    n = not_significant.shape[0]
    allowed = not_significant | np.eye(n, dtype=bool)
    upper = np.triu(allowed)
    reach = n - 1 - np.argmax(upper[:, ::-1], axis=1)  # last n.s. partner at or after i
    positions = np.arange(n)
    contiguous = (positions[None, :] >= positions[:, None]) & (positions[None, :] <= reach[:, None])
    if not np.array_equal(upper, contiguous) or np.any(np.diff(reach) < 0):
        return None
    starts = np.flatnonzero(np.r_[True, reach[1:] > reach[:-1]])
    return (positions[None, :] >= starts[:, None]) & (positions[None, :] <= reach[starts, None])


def _insert_absorb(significant: BoolMatrix) -> BoolMatrix | None:
    """Piepho's letters (every maximal group of mutually n.s. systems), or ``None``.

    The maximal groups can be exponentially many for verdicts far from the
    ordered pattern of real tests; past ``MAX_LETTERS_PER_SYSTEM`` letters per
    system the caller falls back to :func:`_greedy_cover`.
    """
    n = significant.shape[0]
    columns = np.ones((1, n), dtype=bool)
    first, second = np.nonzero(np.triu(significant, k=1))
    for i, j in zip(first.tolist(), second.tolist(), strict=True):
        both = columns[:, i] & columns[:, j]
        if not both.any():
            continue
        split = columns[both]
        without_i, without_j = split.copy(), split.copy()
        without_i[:, i] = False
        without_j[:, j] = False
        columns = _absorb(np.vstack([columns[~both], without_i, without_j]))
        if len(columns) > MAX_LETTERS_PER_SYSTEM * n:
            return None
    return columns


def _greedy_cover(not_significant: BoolMatrix) -> BoolMatrix:
    """Letters from a greedy cover of the n.s. pairs (a valid display, not minimal).

    Every system and every n.s. pair not yet sharing a letter starts a letter,
    grown by the best-ranked systems n.s. from all its members; significant
    pairs never share one.
    """
    n = not_significant.shape[0]
    allowed = not_significant | np.eye(n, dtype=bool)
    covered = np.zeros((n, n), dtype=bool)
    letters = []
    for i in range(n):
        for j in range(i, n):
            if covered[i, j] or not allowed[i, j]:
                continue
            members = np.zeros(n, dtype=bool)
            members[[i, j]] = True
            candidates = allowed[i] & allowed[j] & ~members
            while candidates.any():
                k = int(np.argmax(candidates))
                members[k] = True
                candidates &= allowed[k]
                candidates[k] = False
            covered |= members[:, None] & members[None, :]
            letters.append(members)
    return np.array(letters, dtype=bool)


def _absorb(columns: BoolMatrix) -> BoolMatrix:
    """Drop empty letters, duplicates and letters contained in another letter."""
    columns = np.unique(columns[columns.any(axis=1)], axis=0)
    # inside[a, b]: letter a is a subset of letter b
    inside = ~np.any(columns[:, None, :] & ~columns[None, :, :], axis=2)
    np.fill_diagonal(inside, False)
    return columns[~inside.any(axis=1)]


def verdict_relation(pairs: pd.DataFrame, systems: list[str]) -> BoolMatrix:
    """``above[i, j]``: ``systems[i]`` significantly above ``systems[j]``, closed under
    transitivity (:func:`scoring.statistics.verdicts.closed_verdicts`).

    Parameters
    ----------
    pairs
        One measure's pairs (columns ``a, b, diff`` or ``mean_a, mean_b``, and
        ``significant``); a significant pair is oriented by the sign of its
        mean difference.
    systems
        The order of the matrix's rows and columns.
    """
    position = {s: k for k, s in enumerate(systems)}
    above = np.zeros((len(systems), len(systems)), dtype=bool)
    rows = np.array([position[a] for a in pairs["a"]], dtype=np.intp)
    cols = np.array([position[b] for b in pairs["b"]], dtype=np.intp)
    if "diff" in pairs:
        diff = pairs["diff"].to_numpy(dtype=np.float64)
    else:
        diff = (pairs["mean_a"] - pairs["mean_b"]).to_numpy(dtype=np.float64)
    flags = pairs["significant"].to_numpy(dtype=bool)
    above[rows, cols] = flags & (diff > 0)
    above[cols, rows] = flags & (diff < 0)
    return closed_verdicts(above)


def system_tiers(comparisons: pd.DataFrame) -> pd.DataFrame:
    """Tiers, letters and rank intervals of every measure's systems, from its verdicts.

    All three read the same relation (:func:`verdict_relation`: the significant
    pairs closed under transitivity, docs/comparing-systems.md, "One family of
    decisions"), so none contradicts another.

    Parameters
    ----------
    comparisons
        Output of :func:`scoring.statistics.system_comparison` (columns
        ``measure, a, b, mean_a, mean_b, significant``), every pair of each
        measure present.

    Returns
    -------
    pandas.DataFrame
        One row per (measure, system) with the columns of :data:`TIER_COLUMNS`,
        best first within each measure (ties in mean by name); ``rank`` is the
        1-based position, ``[rank_lo, rank_hi]`` the rank interval
        (:func:`scoring.statistics.verdicts.rank_bounds_from_verdicts`).
    """
    frames = []
    for measure, pairs in comparisons.groupby("measure", sort=False):
        means = dict(zip(pairs["a"], pairs["mean_a"], strict=True))
        means.update(zip(pairs["b"], pairs["mean_b"], strict=True))
        systems = sorted(means, key=lambda s: (-means[s], s))
        above = verdict_relation(pairs, systems)
        significant = above | above.T
        lower, upper = rank_bounds_from_verdicts(above)
        frames.append(
            pd.DataFrame(
                {
                    "measure": measure,
                    "system": systems,
                    "mean": [means[s] for s in systems],
                    "rank": np.arange(1, len(systems) + 1),
                    "tier": leader_tiers(significant),
                    "letters": compact_letters(significant),
                    "rank_lo": lower,
                    "rank_hi": upper,
                }
            )
        )
    if not frames:
        return pd.DataFrame(columns=list(TIER_COLUMNS))
    return pd.concat(frames, ignore_index=True).loc[:, list(TIER_COLUMNS)]
