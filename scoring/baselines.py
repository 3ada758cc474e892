"""Baseline measures for one query (docs/measures.md, "Baselines"): readable reference code.

Every function takes the same input as :func:`scoring.rdq` - an ORL, a
candidate list and a cutoff ``k`` (``None`` for the whole candidate) - and
applies the first-occurrence rule. Binary measures treat an item as relevant
iff it is in the ORL. Empty candidates score 0; Kendall's tau and Spearman's
rho return NaN when undefined (see :func:`rank_correlation`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from scoring.candidate import check_cutoff, credited_ranks
from scoring.errors import ScoringError
from scoring.orl import ORL

__all__ = [
    "CorrelationMethod",
    "Gain",
    "GradeSource",
    "RankCorrelation",
    "average_precision",
    "compatibility",
    "grades_of",
    "kendall_tau",
    "ndcg",
    "precision",
    "rank_biased_precision",
    "rank_correlation",
    "reciprocal_rank",
    "spearman_rho",
]

GradeSource = Literal["auto", "bi", "ic", "lc", "native"]
Gain = Literal["exp", "linear"]
CorrelationMethod = Literal["kendall", "spearman"]


def grades_of(orl: ORL, grade: GradeSource) -> dict[str, float]:
    """Per-item grades of an ORL for nDCG.

    ``bi``: 1 for every item; ``ic``: ``1 / rank``; ``lc``: ``T - rank + 1``;
    ``native``: the original graded labels (only for ORLs built from grades);
    ``auto``: ``native`` when the ORL has native grades, else ``lc`` (the bare
    ``nDCG@k``, trec_eval's ``ndcg_cut``; docs/measures.md, "Baselines").
    """
    if grade == "auto":
        grade = "native" if orl.grades is not None else "lc"
    if grade == "bi":
        return dict.fromkeys(orl, 1.0)
    if grade == "ic":
        return {item: 1.0 / rank for item, rank in orl.items()}
    if grade == "lc":
        top = orl.n_tiers + 1
        return {item: float(top - rank) for item, rank in orl.items()}
    if grade == "native":
        if orl.grades is None:
            raise ScoringError(
                "nDCG(grade=native) needs an ORL built from graded labels (ORL.from_grades)"
            )
        return dict(orl.grades)
    raise ScoringError(f"unknown grade source {grade!r}; valid: auto, bi, ic, lc, native")


def _gain(grades: np.ndarray, gain: Gain) -> np.ndarray:
    """Exponential ``2^g - 1`` (the paper's) or linear ``g`` (trec_eval's) gain."""
    return np.exp2(grades) - 1.0 if gain == "exp" else grades


def _discount(k: int) -> np.ndarray:
    """``1 / log2(i + 1)`` for ``i = 1..k``."""
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


def ndcg(
    orl: ORL,
    ranking: Sequence[str],
    k: int | None = None,
    *,
    grade: GradeSource = "auto",
    gain: Gain = "linear",
) -> float:
    """Normalised discounted cumulative gain at ``k``; by default trec_eval's ``ndcg_cut``
    (linear gain on native grades, else on ``lc`` grades; :func:`grades_of`).

    ``DCG = sum_i gain(grade(p_i)) / log2(i + 1)`` over first occurrences,
    normalised by the DCG of the ORL's grades sorted descending and truncated
    at ``k`` (Jarvelin & Kekalainen 2002; linear gain matches trec_eval).
    """
    k = check_cutoff(k, len(ranking))
    table = grades_of(orl, grade)
    hit = credited_ranks(orl, ranking, k) > 0
    grades = np.zeros(k)
    for index, item in enumerate(ranking[:k]):
        if hit[index]:
            grades[index] = table[item]
    discount = _discount(k)
    ideal = np.sort(np.fromiter(table.values(), dtype=np.float64))[::-1][:k]
    idcg = float(np.dot(_gain(ideal, gain), discount[: len(ideal)]))
    return float(np.dot(_gain(grades, gain), discount) / idcg) if idcg > 0 else 0.0


def _relevance(orl: ORL, ranking: Sequence[str], k: int) -> np.ndarray:
    """Binary relevance of positions ``1..k`` (first occurrences of ORL items)."""
    return (credited_ranks(orl, ranking, k) > 0).astype(np.float64)


def average_precision(orl: ORL, ranking: Sequence[str], k: int | None = None) -> float:
    """AP@k: sum of Precision@i over relevant positions ``i <= k``, divided by ``|R|``.

    The denominator is the ORL size whatever ``k`` is (trec_eval's ``map_cut``).
    """
    k = check_cutoff(k, len(ranking))
    rel = _relevance(orl, ranking, k)
    precision_at = np.cumsum(rel) / np.arange(1, k + 1)
    return float(np.dot(precision_at, rel) / orl.n_items)


def rank_biased_precision(
    orl: ORL, ranking: Sequence[str], k: int | None = None, *, p: float = 0.8
) -> float:
    """RBP(p)@k = ``(1 - p) * sum_i p^(i-1) rel_i`` (Moffat & Zobel 2008).

    The residual of the truncated evaluation is ``p^k`` (see
    :func:`rbp_residual`).
    """
    k = check_cutoff(k, len(ranking))
    _check_persistence(p)
    rel = _relevance(orl, ranking, k)
    return float((1.0 - p) * np.dot(np.power(p, np.arange(k)), rel))


def rbp_residual(k: int, *, p: float = 0.8) -> float:
    """The RBP residual ``p^k``: the most that positions beyond ``k`` could add."""
    _check_persistence(p)
    return float(p**k)


def _check_persistence(p: float) -> None:
    if not (0.0 < p < 1.0):
        raise ScoringError(f"the persistence p must lie in (0, 1), got {p!r}")


def compatibility(
    orl: ORL, ranking: Sequence[str], k: int | None = None, *, p: float = 0.95
) -> float:
    """CMP(p)@k, a compatibility-style overlap against the ideal ordering.

    ``A_d = |run[:d] & ideal[:d]| / d`` and ``CMP = sum_d p^(d-1) A_d /
    sum_d p^(d-1) A*_d`` where the ideal lists the ORL by rank, ties inside a
    tier ordered to agree with the run (its items first, in run order), and
    ``A*_d`` is the ideal's overlap with itself (docs/measures.md, "Baselines").
    """
    k = check_cutoff(k, len(ranking))
    _check_persistence(p)
    order = {item: position for position, item in reversed(list(enumerate(ranking)))}
    ideal = sorted(orl, key=lambda item: (orl[item], order.get(item, len(ranking)), item))
    shown: set[str] = set()
    wanted: set[str] = set()
    overlap = np.zeros(k)
    for d in range(1, k + 1):
        if d <= len(ranking):
            shown.add(ranking[d - 1])
        if d <= len(ideal):
            wanted.add(ideal[d - 1])
        overlap[d - 1] = len(shown & wanted)
    depth = np.arange(1, k + 1)
    decay = np.power(p, depth - 1)
    best = np.minimum(depth, orl.n_items) / depth
    return float(np.dot(decay, overlap / depth) / np.dot(decay, best))


def reciprocal_rank(orl: ORL, ranking: Sequence[str], k: int | None = None) -> float:
    """RR@k: ``1 / i`` for the first relevant position ``i <= k``, else 0."""
    k = check_cutoff(k, len(ranking))
    rel = np.flatnonzero(_relevance(orl, ranking, k))
    return float(1.0 / (rel[0] + 1)) if rel.size else 0.0


def precision(orl: ORL, ranking: Sequence[str], k: int | None = None) -> float:
    """P@k: relevant first occurrences in the top ``k``, divided by ``k``."""
    k = check_cutoff(k, len(ranking))
    return float(_relevance(orl, ranking, k).sum() / k) if k else 0.0


@dataclass(frozen=True)
class RankCorrelation:
    """A rank correlation that may be undefined.

    Attributes
    ----------
    value
        The coefficient in ``[-1, 1]``, or NaN when undefined.
    reason
        Why it is undefined (``None`` when defined).
    """

    value: float
    reason: str | None = None


def rank_correlation(
    orl: ORL,
    ranking: Sequence[str],
    k: int | None = None,
    *,
    method: CorrelationMethod = "kendall",
) -> RankCorrelation:
    """Kendall's tau-b or Spearman's rho between candidate positions and ORL ranks.

    Defined only when the candidate truncated at ``k`` (first occurrences) and
    the ORL hold the same item set and the ORL has more than one tier;
    otherwise the value is NaN and ``reason`` says why (docs/measures.md, "Baselines").
    """
    k = check_cutoff(k, len(ranking))
    shown = list(dict.fromkeys(ranking[:k]))
    if not shown:
        return RankCorrelation(float("nan"), "empty candidate")
    if set(shown) != set(orl):
        return RankCorrelation(float("nan"), "candidate and ORL hold different items")
    if orl.n_tiers == 1:
        return RankCorrelation(float("nan"), "ORL is a single tier (constant reference)")
    from scipy import stats  # imported here: it costs every CLI start about a second

    positions = np.arange(1, len(shown) + 1)
    ranks = np.array([orl[item] for item in shown])
    if method == "kendall":
        value = stats.kendalltau(positions, ranks).statistic
    else:
        value = stats.spearmanr(positions, ranks).statistic
    return RankCorrelation(float(value))


def kendall_tau(orl: ORL, ranking: Sequence[str], k: int | None = None) -> float:
    """Kendall's tau-b (NaN when undefined, see :func:`rank_correlation`)."""
    return rank_correlation(orl, ranking, k, method="kendall").value


def spearman_rho(orl: ORL, ranking: Sequence[str], k: int | None = None) -> float:
    """Spearman's rho (NaN when undefined, see :func:`rank_correlation`)."""
    return rank_correlation(orl, ranking, k, method="spearman").value
