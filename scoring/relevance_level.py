"""trec_eval's relevance level (``-l N``): the ORL an item must reach grade ``N`` to be in.

Binary measures accept ``rel=N`` (docs/measures.md, "Relevance level"): an item is
relevant iff its native grade is at least ``N``; for an ORL without native
grades, its ``lc`` grade (``T - rank + 1``, the grade the qrels export of an ORL
writes). Items below the level become judged not relevant, as trec_eval counts
them (Bpref, infAP).
"""

from __future__ import annotations

import math

from scoring.errors import ScoringError
from scoring.orl import ORL

__all__ = ["check_level", "level_grades", "orl_at_level"]


def check_level(level: float) -> float:
    """``level`` as a float, or raise for a level that is not a positive finite number."""
    if isinstance(level, bool) or not isinstance(level, int | float):
        raise ScoringError(f"the relevance level must be a number, got {level!r}")
    if not (math.isfinite(level) and level > 0):
        raise ScoringError(f"the relevance level must be > 0, got {level!r}")
    return float(level)


def level_grades(orl: ORL) -> dict[str, float]:
    """The grade compared with the level: native where the ORL has them, else ``lc``."""
    if orl.grades is not None:
        return dict(orl.grades)
    top = orl.n_tiers + 1
    return {item: float(top - rank) for item, rank in orl.items()}


def orl_at_level(orl: ORL, level: float) -> ORL | None:
    """The ORL of the items graded at least ``level`` (ranks and grades kept, ranks made
    consecutive), the others judged not relevant; ``None`` when no item reaches it.

    Examples
    --------
    >>> orl = ORL.from_grades({"d1": 3, "d2": 1, "d3": 0})
    >>> kept = orl_at_level(orl, 2)
    >>> dict(kept), sorted(kept.nonrelevant)
    ({'d1': 1}, ['d2', 'd3'])
    """
    level = check_level(level)
    grades = level_grades(orl)
    kept = {item: rank for item, rank in orl.items() if grades[item] >= level}
    if not kept:
        return None
    below = [item for item in orl if item not in kept]
    native = None if orl.grades is None else {item: grades[item] for item in kept}
    return ORL(
        kept,
        grades=native,
        normalize=True,
        nonrelevant=[*orl.nonrelevant, *below],
    )
