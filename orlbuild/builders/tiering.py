"""Tiers from scores with the leader rule (ORL.md, "Tiering: when do two items share a rank?").

Walk the items best first; the first item opens tier 1 and is its leader;
each next item is tested against the current tier's leader and joins the tier
when it is not significantly worse (``p >= sig``), otherwise it opens the next
tier and leads it. Testing against the leader, not the previous item,
prevents chains of small gaps from merging a whole list. With ``sig = 0``
there are no ties except exact score ties (``|diff| <= EXACT_TIE``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from orlbuild.builders.comparisons import FloatArray
from orlbuild.builders.results import TieDecision
from orlbuild.builders.uncertainty import ScoreUncertainty

__all__ = ["EXACT_TIE", "score_order", "tiers_from_scores"]

#: Score differences at or below this are exact ties (iterative solvers leave
#: round-off of about 1e-12 between items with identical evidence).
EXACT_TIE = 1e-9


def score_order(items: npt.NDArray[np.object_], scores: FloatArray) -> npt.NDArray[np.int64]:
    """Indices of ``items`` best first: by score, then by item id (repeatable)."""
    rounded = np.round(scores / EXACT_TIE) * EXACT_TIE
    return np.lexsort((items.astype(str), -rounded)).astype(np.int64)


def tiers_from_scores(
    query: str,
    items: npt.NDArray[np.object_],
    uncertainty: ScoreUncertainty,
    *,
    sig: float,
) -> tuple[list[list[str]], list[TieDecision]]:
    """Group items into tiers with the leader rule.

    Parameters
    ----------
    query
        Query id (recorded in the decisions).
    items
        Item ids, aligned with ``uncertainty.scores``.
    uncertainty
        Scores and the pairwise tests (:mod:`orlbuild.builders.uncertainty`).
    sig
        Significance level; an item whose p-value against its leader is
        ``>= sig`` is tied with it. ``0`` keeps only exact score ties.

    Returns
    -------
    tiers : list of list of str
        Best tier first.
    decisions : list of TieDecision
        One decision per item after the first, in walking order.

    Examples
    --------
    Two items whose difference is not significant share tier 1; the third,
    clearly worse, opens tier 2.
    """
    scores = uncertainty.scores
    order = score_order(items, scores)
    tiers: list[list[str]] = [[str(items[order[0]])]]
    decisions: list[TieDecision] = []
    leader = int(order[0])
    for index in order[1:].tolist():
        diff = float(scores[leader] - scores[index])
        p = float(uncertainty.p_value[leader, index])
        se = float(uncertainty.se[leader, index])
        if abs(diff) <= EXACT_TIE:
            tied, rule = True, "exact score tie"
        elif sig == 0.0:
            tied, rule = False, "strict order (sig=0)"
        else:
            tied = p >= sig
            rule = f"leader test p {'>=' if tied else '<'} {sig:g}"
        decisions.append(
            TieDecision(
                query=query,
                leader=str(items[leader]),
                item=str(items[index]),
                score_leader=float(scores[leader]),
                score_item=float(scores[index]),
                diff=diff,
                se=se,
                p_value=p,
                decision="tied" if tied else "separated",
                rule=rule,
                variance=uncertainty.variance,
            )
        )
        if tied:
            tiers[-1].append(str(items[index]))
        else:
            tiers.append([str(items[index])])
            leader = index
    return tiers, decisions
