"""trec_eval's and gdeval's measures for one query: readable reference code.

See docs/measures.md, "trec_eval, gdeval and ir_measures measures".

The same input as :mod:`scoring.baselines` - an ORL, a candidate list best
first, a cutoff ``k`` (``None`` for the whole candidate) - and the same
first-occurrence rule: a repeated item is skipped (trec_eval refuses runs with
repeats, so this never changes a value trec_eval prints). An item is relevant
iff it is in the ORL; it is *judged not relevant* iff it is in
:attr:`scoring.ORL.nonrelevant` (grade 0 in the qrels); any other item is
unjudged. The vectorised batch kernels in :mod:`scoring.measures` are tested
against these functions; these are tested against trec_eval through
pytrec_eval (and gdeval / ir_measures for ERR and Judged).

Empty cases: an empty candidate scores 0 on every measure except
:func:`num_rel`, which is ``|R|`` whatever the candidate holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from scoring.candidate import check_cutoff, credited_ranks
from scoring.errors import ScoringError
from scoring.orl import ORL

__all__ = [
    "ERR_MAX_GRADE",
    "INFAP_EPSILON",
    "ErrGrade",
    "bpref",
    "err_grades",
    "expected_reciprocal_rank",
    "inferred_ap",
    "interpolated_precision",
    "iprec_cutoff",
    "judged_share",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "r_precision",
    "recall",
    "success",
]

#: trec_eval's guard against 0/0 in infAP (``INFAP_EPSILON`` in ``m_infAP.c``).
INFAP_EPSILON = 0.00001
#: gdeval's largest grade: ERR's stopping probability is ``(2^g - 1) / 2^4``.
ERR_MAX_GRADE = 4

ErrGrade = Literal["auto", "native", "tiers"]


def _relevant(orl: ORL, ranking: Sequence[str], k: int) -> np.ndarray:
    """Whether positions ``1..k`` hold the first occurrence of an ORL item."""
    return credited_ranks(orl, ranking, k) > 0


def _nonrelevant(orl: ORL, ranking: Sequence[str], k: int) -> np.ndarray:
    """Whether positions ``1..k`` hold the first occurrence of an item judged not relevant."""
    out = np.zeros(k, dtype=bool)
    seen: set[str] = set()
    for index, item in enumerate(ranking[:k]):
        if item not in seen:
            seen.add(item)
            out[index] = item in orl.nonrelevant
    return out


def recall(orl: ORL, ranking: Sequence[str], k: int | None = None) -> float:
    """R@k: relevant items in the top ``k`` divided by ``|R|`` (trec_eval ``recall_k``)."""
    k = check_cutoff(k, len(ranking))
    return float(_relevant(orl, ranking, k).sum() / orl.n_items)


def r_precision(orl: ORL, ranking: Sequence[str]) -> float:
    """Rprec: relevant items in the top ``|R|`` divided by ``|R|`` (trec_eval ``Rprec``)."""
    return float(_relevant(orl, ranking, orl.n_items).sum() / orl.n_items)


def success(orl: ORL, ranking: Sequence[str], k: int | None = None) -> float:
    """Success@k: 1 when a relevant item is in the top ``k``, else 0 (trec_eval ``success_k``)."""
    k = check_cutoff(k, len(ranking))
    return float(_relevant(orl, ranking, k).any())


def bpref(orl: ORL, ranking: Sequence[str]) -> float:
    """Binary preference (Buckley & Voorhees, SIGIR 2004; trec_eval ``bpref``).

    ``bpref = (1/R) * sum over relevant retrieved r of (1 - min(n_r, R) / min(N, R))``
    where ``n_r`` counts the judged non-relevant items retrieved above ``r``,
    ``R = |R|`` and ``N`` the number of items judged not relevant; a term
    with ``n_r = 0`` is 1 (so with ``N = 0`` bpref is the share of relevant
    items retrieved). Unjudged items are skipped.
    """
    k = len(ranking)
    rel, nonrel = _relevant(orl, ranking, k), _nonrelevant(orl, ranking, k)
    n_rel, n_nonrel = orl.n_items, len(orl.nonrelevant)
    total, nonrel_so_far = 0.0, 0
    for is_rel, is_nonrel in zip(rel.tolist(), nonrel.tolist(), strict=True):
        if is_nonrel:
            nonrel_so_far += 1
        elif is_rel:
            if nonrel_so_far > 0:
                total += 1.0 - min(nonrel_so_far, n_rel) / min(n_nonrel, n_rel)
            else:
                total += 1.0
    return total / n_rel


def inferred_ap(orl: ORL, ranking: Sequence[str]) -> float:
    """Inferred AP (Yilmaz & Aslam, CIKM 2006) as trec_eval's ``infAP`` computes it.

    At the relevant item at 0-based position ``j > 0``, with ``r`` relevant and
    ``n`` judged non-relevant items above it, the expected precision is
    ``1/(j+1) + (j/(j+1)) * ((r + n)/j) * ((r + eps)/(r + n + 2 eps))``
    (``eps = 1e-5``); at ``j = 0`` it is 1. Their sum is divided by ``|R|``.
    Unjudged items count as positions but never as evidence. (trec_eval's
    "pooled but unjudged" qrels value -1 has no counterpart here: ORLs hold
    no negative grades.)
    """
    k = len(ranking)
    rel, nonrel = _relevant(orl, ranking, k), _nonrelevant(orl, ranking, k)
    total, rel_so_far, nonrel_so_far = 0.0, 0, 0
    for j in range(k):
        if nonrel[j]:
            nonrel_so_far += 1
        elif rel[j]:
            if j == 0:
                total += 1.0
            else:
                before = rel_so_far + nonrel_so_far
                total += 1.0 / (j + 1.0) + (j / (j + 1.0)) * (before / j) * (
                    (rel_so_far + INFAP_EPSILON) / (before + 2 * INFAP_EPSILON)
                )
            rel_so_far += 1
    return total / orl.n_items


def iprec_cutoff(recall_level: float, n_rel: int | np.ndarray) -> int | np.ndarray:
    """Relevant items needed to reach ``recall_level``: ``floor(r * R + 0.9)`` (trec_eval)."""
    raw = recall_level * np.asarray(n_rel, dtype=np.float64) + 0.9
    cut = np.floor(raw).astype(np.int64)
    return int(cut) if cut.ndim == 0 else cut


def interpolated_precision(orl: ORL, ranking: Sequence[str], recall_level: float) -> float:
    """IPrec@r: the highest precision at any position reaching recall ``r``
    (trec_eval ``iprec_at_recall``).

    With ``c = floor(r * |R| + 0.9)`` relevant items needed, the value is
    ``max P@i`` over the positions ``i`` of the candidate whose top ``i``
    holds at least ``c`` relevant items, and 0 when no position does.
    """
    if not 0.0 <= recall_level <= 1.0:
        raise ScoringError(f"the recall level must lie in [0, 1], got {recall_level!r}")
    if not ranking:
        return 0.0
    needed = iprec_cutoff(recall_level, orl.n_items)
    found = np.cumsum(_relevant(orl, ranking, len(ranking)))
    precision_at = found / np.arange(1, len(ranking) + 1)
    reach = found >= needed
    return float(precision_at[reach].max()) if reach.any() else 0.0


def num_ret(ranking: Sequence[str]) -> float:
    """NumRet: distinct items retrieved (trec_eval ``num_ret``, which refuses repeats)."""
    return float(len(set(ranking)))


def num_rel(orl: ORL) -> float:
    """NumRel: ``|R|``, the reference items of the query (trec_eval ``num_rel``)."""
    return float(orl.n_items)


def num_rel_ret(orl: ORL, ranking: Sequence[str]) -> float:
    """NumRelRet: relevant items retrieved (trec_eval ``num_rel_ret``)."""
    return float(_relevant(orl, ranking, len(ranking)).sum())


def err_grades(orl: ORL, grade: ErrGrade) -> dict[str, float]:
    """Per-item grades for ERR.

    ``native``: the graded labels the ORL was built from; ``tiers``:
    ``max(5 - rank, 1)``, so tier 1 gets gdeval's top grade 4, tier 2 grade 3,
    tier 3 grade 2 and every later tier grade 1; ``auto``: ``native`` when the
    ORL has native grades, else ``tiers``.

    Raises
    ------
    ScoringError
        For ``native`` without native grades, or a native grade above 4 (gdeval's limit).
    """
    if grade == "auto":
        grade = "native" if orl.grades is not None else "tiers"
    if grade == "tiers":
        return {item: float(max(ERR_MAX_GRADE + 1 - rank, 1)) for item, rank in orl.items()}
    if grade != "native":
        raise ScoringError(f"unknown ERR grade source {grade!r}; valid: auto, native, tiers")
    if orl.grades is None:
        raise ScoringError("ERR(grade=native) needs an ORL built from graded labels")
    grades = dict(orl.grades)
    too_high = [item for item, g in grades.items() if g > ERR_MAX_GRADE]
    if too_high:
        raise ScoringError(
            f"ERR takes grades up to {ERR_MAX_GRADE} (gdeval); item {too_high[0]!r} has "
            f"{grades[too_high[0]]:g}: use ERR(grade=tiers)"
        )
    return grades


def expected_reciprocal_rank(
    orl: ORL, ranking: Sequence[str], k: int | None = None, *, grade: ErrGrade = "auto"
) -> float:
    """ERR@k (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009) as gdeval computes it.

    ``ERR = sum_i (1/i) R_i prod_{j<i} (1 - R_j)`` with stopping probability
    ``R_i = (2^g_i - 1) / 2^4`` for the grade ``g_i`` of the item at position
    ``i`` (0 outside the ORL; see :func:`err_grades`). Not normalised: a
    perfect ranking scores below 1 unless its top item has grade 4.
    """
    k = check_cutoff(k, len(ranking))
    table = err_grades(orl, grade)
    hit = _relevant(orl, ranking, k)
    total, keep_going = 0.0, 1.0
    for index, item in enumerate(ranking[:k]):
        if not hit[index]:
            continue
        stop = (2.0 ** table[item] - 1.0) / 2.0**ERR_MAX_GRADE
        total += keep_going * stop / (index + 1)
        keep_going *= 1.0 - stop
    return total


def judged_share(orl: ORL, ranking: Sequence[str], k: int | None = None) -> float:
    """Judged@k: the share of the top ``min(k, len)`` positions holding a judged item.

    A judged item is an ORL item or one judged not relevant (first
    occurrences only). ir_measures' definition; an empty candidate scores 0.
    """
    k = check_cutoff(k, len(ranking))
    shown = min(k, len(ranking))
    if shown == 0:
        return 0.0
    judged = _relevant(orl, ranking, k) | _nonrelevant(orl, ranking, k)
    return float(judged.sum() / shown)
