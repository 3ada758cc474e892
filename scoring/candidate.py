"""Reading a candidate ranking against an ORL, position by position.

Every measure applies the same rules (docs/measures.md, "RDQ" and "Baselines"): the
candidate is truncated at ``k``; an item earns credit only at its first
occurrence; a later copy still occupies its position.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scoring.errors import ScoringError
from scoring.orl import ORL

__all__ = ["check_cutoff", "credited_ranks"]


def check_cutoff(k: int | None, n: int) -> int:
    """Resolve a cutoff: ``None`` means the whole candidate of length ``n``."""
    if k is None:
        return n
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ScoringError(f"the cutoff k must be an integer >= 1, got {k!r}")
    return int(k)


def credited_ranks(orl: ORL, ranking: Sequence[str], k: int) -> np.ndarray:
    """ORL rank of the item at each position ``1..k`` that can earn credit, else 0.

    A position earns nothing when it is empty (candidate shorter than ``k``),
    holds an item outside the ORL, or repeats an item shown earlier.
    """
    out = np.zeros(k, dtype=np.int64)
    seen: set[str] = set()
    for index, item in enumerate(ranking[:k]):
        if item not in seen:
            seen.add(item)
            out[index] = orl.get(item, 0)
    return out
