"""The leader walk that turns scores into tiers (docs/tiers-and-audit.md, "How tiers are decided and
audited").

Walk the items best first; the first item opens tier 1 and is its leader;
each next item is compared with the current tier's leader and joins the tier
when it is not separated from it, otherwise it opens the next tier and leads
it. Comparing with the leader, not the previous item, prevents chains of
small gaps from merging a whole list. What "separated" means is the
procedure's:

* ``leader``: the p-value of the item against its leader is ``< sig`` (one
  test per item at level ``sig``; no multiplicity control);
* ``simultaneous``: ``|d| / se > c`` with ``c`` the max-t critical value of
  the query (:mod:`orlbuild.builders.tiering.critical_values`).

With ``sig = 0`` there are no ties except exact score ties
(``|diff| <= EXACT_TIE``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scipy.special import ndtri

from orlbuild.builders.arrays import FloatArray
from orlbuild.builders.estimation.uncertainty import ScoreUncertainty
from orlbuild.records import TieDecision

__all__ = ["EXACT_TIE", "SeparationWalk", "score_order", "tiers_from_scores"]

#: Score differences at or below this are exact ties (iterative solvers leave
#: round-off of about 1e-12 between items with identical evidence).
EXACT_TIE = 1e-9


def score_order(items: npt.NDArray[np.object_], scores: FloatArray) -> npt.NDArray[np.int64]:
    """Indices of ``items`` best first: by score, then by item id (repeatable)."""
    rounded = np.round(scores / EXACT_TIE) * EXACT_TIE
    return np.lexsort((items.astype(str), -rounded)).astype(np.int64)


def _studentized(diff: float, se: float) -> float | None:
    if se > 0:
        return diff / se
    return None if diff == 0 else float("inf")


def tiers_from_scores(
    query: str,
    items: npt.NDArray[np.object_],
    uncertainty: ScoreUncertainty,
    *,
    sig: float,
    procedure: str = "leader",
    critical: float | FloatArray | None = None,
) -> tuple[list[list[str]], list[TieDecision]]:
    """Group items into tiers with the leader walk.

    Parameters
    ----------
    query
        Query id (recorded in the decisions).
    items
        Item ids, aligned with ``uncertainty.scores``.
    uncertainty
        Scores and the pairwise tests (:mod:`orlbuild.builders.estimation.uncertainty`).
    sig
        Significance level; ``0`` keeps only exact score ties.
    procedure
        ``leader`` (an item whose p-value against its leader is ``>= sig``
        is tied with it) or ``simultaneous`` (tied unless ``z > critical``).
    critical
        The simultaneous critical value, one for every pair or an ``(n, n)``
        matrix of per-pair values (step-down); required for ``simultaneous``.

    Returns
    -------
    tiers : list of list of str
        Best tier first.
    decisions : list of TieDecision
        One decision per item after the first, in walking order, with the
        procedure, family size, ``z`` and the critical value it was compared with.

    Examples
    --------
    Two items whose difference is not significant share tier 1; the third,
    clearly worse, opens tier 2.
    """
    if procedure not in ("leader", "simultaneous"):
        raise ValueError(f"the leader walk serves leader and simultaneous, not {procedure!r}")
    if procedure == "simultaneous" and critical is None:
        raise ValueError("the simultaneous walk needs its critical value")
    scores = uncertainty.scores
    n = len(scores)
    walk = SeparationWalk(query, items, uncertainty)
    bootstrap_p = uncertainty.samples is not None
    if procedure == "leader":
        family = n - 1
        value = None if bootstrap_p or sig == 0.0 else float(ndtri(1.0 - sig / 2.0))
        per_pair = np.full((n, n), np.nan if value is None else value)
    else:
        family = n * (n - 1) // 2
        per_pair = np.broadcast_to(np.asarray(critical, dtype=np.float64), (n, n))
    leader = int(walk.order[0])
    for index in walk.order[1:].tolist():
        diff = float(scores[leader] - scores[index])
        if abs(diff) <= EXACT_TIE:
            tied, rule = True, "exact score tie"
        elif sig == 0.0:
            tied, rule = False, "strict order (sig=0)"
        elif procedure == "leader":
            tied = float(uncertainty.p_value[leader, index]) >= sig
            rule = f"leader test p {'>=' if tied else '<'} {sig:g}"
        else:
            z = _studentized(diff, float(uncertainty.se[leader, index]))
            # se = 0 with a difference: certain, outside the family, separated
            tied = z is not None and np.isfinite(z) and z <= per_pair[leader, index]
            rule = f"max-t z {'<=' if tied else '>'} c over {family} pairs (sig {sig:g})"
        walk.add(not tied, rule, critical=float(per_pair[leader, index]))
        if not tied:
            leader = index
    return walk.tiers(procedure=procedure, family_size=family)


@dataclass
class SeparationWalk:
    """A procedure's verdicts along the score order, turned into tiers and decisions.

    Every ``--tiering`` procedure walks the items best first (:func:`score_order`)
    and says, for each item after the first, whether it is separated from its
    leader and why (:meth:`add`); :meth:`tiers` then builds the tiers and the
    audit records the same way whatever decided them.

    Attributes
    ----------
    query, items, uncertainty
        The query, its item ids, and the items' scores with their pairwise
        standard errors and p-values (aligned with ``items``).
    order
        :func:`score_order` of the items: the walk's order.
    separated, rules, critical, loglik_gains, bic_changes
        One entry per step ``k >= 1``: the verdict on item ``order[k]``, its
        rule, and the numbers the procedure recorded (``None`` when it has none).
    """

    query: str
    items: npt.NDArray[np.object_]
    uncertainty: ScoreUncertainty
    order: npt.NDArray[np.int64] = field(init=False)
    separated: list[bool] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    critical: list[float | None] = field(default_factory=list)
    loglik_gains: list[float | None] = field(default_factory=list)
    bic_changes: list[float | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.order = score_order(self.items, self.uncertainty.scores)

    def add(
        self,
        separated: bool,
        rule: str,
        *,
        critical: float | None = None,
        loglik_gain: float | None = None,
        bic_change: float | None = None,
    ) -> None:
        """Record the verdict on the next item of the order (a finite ``critical`` only)."""
        self.separated.append(separated)
        self.rules.append(rule)
        finite = critical is not None and bool(np.isfinite(critical))
        self.critical.append(critical if finite else None)
        self.loglik_gains.append(loglik_gain)
        self.bic_changes.append(bic_change)

    def tiers(
        self, *, procedure: str, family_size: int, bic_penalty: float | None = None
    ) -> tuple[list[list[str]], list[TieDecision]]:
        """Tiers and decisions from "is item ``order[k]`` separated from its leader" (k >= 1).

        The leader of a tier is its first item; an item that opens a tier is
        recorded against the leader of the tier above.
        """
        items, uncertainty, order = self.items, self.uncertainty, self.order
        scores = uncertainty.scores
        tiers: list[list[str]] = [[str(items[order[0]])]]
        decisions: list[TieDecision] = []
        leader = int(order[0])
        for step, index in enumerate(order[1:].tolist()):
            diff = float(scores[leader] - scores[index])
            se = float(uncertainty.se[leader, index])
            tied = not self.separated[step]
            decisions.append(
                TieDecision(
                    query=self.query,
                    leader=str(items[leader]),
                    item=str(items[index]),
                    score_leader=float(scores[leader]),
                    score_item=float(scores[index]),
                    diff=diff,
                    se=se,
                    p_value=float(uncertainty.p_value[leader, index]),
                    decision="tied" if tied else "separated",
                    rule=self.rules[step],
                    variance=uncertainty.variance,
                    procedure=procedure,
                    family_size=family_size,
                    critical=self.critical[step],
                    z=_studentized(diff, se),
                    bic_penalty=bic_penalty,
                    loglik_gain=self.loglik_gains[step],
                    bic_change=self.bic_changes[step],
                )
            )
            if tied:
                tiers[-1].append(str(items[index]))
            else:
                tiers.append([str(items[index])])
                leader = index
        return tiers, decisions
