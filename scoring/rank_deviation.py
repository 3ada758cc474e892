"""RDQ@k for one query (docs/measures.md, "RDQ"): the readable reference implementation.

``RDQ@k = sum_i mu_i * rho(i, g*_i, g(p_i)) * 1[p_i in R, first occurrence]
/ sum_{i <= min(k, |R|)} mu_i``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scoring.candidate import check_cutoff, credited_ranks
from scoring.errors import ScoringError
from scoring.orl import ORL
from scoring.penalties import get_penalty
from scoring.weights import Weights, resolve_weights

__all__ = ["rdq"]


def rdq(
    orl: ORL,
    ranking: Sequence[str],
    k: int,
    *,
    penalty: str = "m2",
    alpha: float = 1.0,
    lam: float = 0.2,
    weights: str | Sequence[float] | Weights = "vertical",
) -> float:
    """Rank-Deviation Quality of ``ranking`` against ``orl`` at cutoff ``k``.

    Parameters
    ----------
    orl
        The query's ordered reference list.
    ranking
        The candidate list, best first.
    k
        Cutoff (positions ``1..k``).
    penalty
        ``"m1"``, ``"m2"`` or a name given to :func:`scoring.register_penalty`.
    alpha, lam
        M2's tolerance and rate (ignored by other penalties); both must be > 0.
    weights
        A preset name (``vertical``, ``vertical-short``, ``carousel3``,
        ``uniform``) or explicit non-increasing positive weights.

    Returns
    -------
    float
        A value in ``[0, 1]``; 1 for any ranking listing the ORL tier by tier,
        0 for an empty candidate.

    References
    ----------
    docs/measures.md, "RDQ" (normative); the RDQ paper, definitions of RDQ, M1, M2.
    """
    k = check_cutoff(k, len(ranking))
    if not (alpha > 0 and lam > 0):
        raise ScoringError(f"alpha and lam must be > 0, got alpha={alpha!r}, lam={lam!r}")
    mu = resolve_weights(weights).array(k)
    rho = get_penalty(penalty)
    g = credited_ranks(orl, ranking, k)
    g_star = orl.ideal_ranks(k)
    hit = g > 0
    positions = np.arange(1, k + 1)
    factors = np.zeros(k)
    if hit.any():
        factors[hit] = rho(positions[hit], g_star[hit], g[hit], orl.n_items, alpha=alpha, lam=lam)
    denominator = mu[: min(k, orl.n_items)].sum()
    return float(np.dot(mu, factors) / denominator)
