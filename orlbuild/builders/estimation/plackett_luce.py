"""Plackett-Luce scores of full rankings through choix's ranking estimators.

A ranking ``(i_1, ..., i_m)`` is the sequence of choices "``i_1`` out of all,
``i_2`` out of the rest, ...". choix's ``ilsr_rankings`` (default),
``opt_rankings`` and ``mm_rankings`` fit it (Maystre & Grossglauser 2015).
Plackett-Luce needs strict rankings: a list with tied items is rejected by
the listwise route with a message naming the query and the annotator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.special import softmax

from orlbuild.builders.arrays import FloatArray
from orlbuild.builders.estimation.guarded_fit import fitted_scores

__all__ = ["plackett_luce_information", "plackett_luce_rankings"]

Rankings = Sequence[tuple[int, ...]]


def plackett_luce_rankings(
    n_items: int, rankings: Rankings, *, alpha: float, solver: str = "ilsr"
) -> FloatArray:
    """Maximum-likelihood Plackett-Luce scores (centred log-strengths).

    Parameters
    ----------
    n_items
        Number of items.
    rankings
        Each ranking as local item indices, best first (at least two items).
    alpha
        choix's regularisation (``c / n_items`` in a build).
    solver
        ``ilsr``, ``opt`` or ``mm``.

    Raises
    ------
    EstimationError
        On non-convergence or non-finite scores.
    """
    if n_items == 1:
        return np.zeros(1)
    import choix  # loaded on demand: choix imports scipy.stats and scipy.optimize

    funcs: dict[str, Callable[..., FloatArray]] = {
        "ilsr": choix.ilsr_rankings,
        "opt": choix.opt_rankings,
        "mm": choix.mm_rankings,
    }
    return fitted_scores(
        f"Plackett-Luce ({solver})",
        lambda: funcs[solver](n_items, list(rankings), alpha=alpha),
        hint="an item that is always ranked first or always last needs --reg > 0",
    )


def plackett_luce_information(scores: FloatArray, rankings: Rankings) -> FloatArray:
    """Observed Fisher information of the Plackett-Luce log-likelihood.

    Each choice of one item out of a set ``S`` adds ``diag(z) - z z^T`` on
    ``S``, with ``z`` the softmax of the scores of ``S``.
    """
    n = len(scores)
    info = np.zeros((n, n))
    for ranking in rankings:
        idx = np.asarray(ranking, dtype=np.int64)
        for k in range(len(idx) - 1):
            rest = idx[k:]
            z = softmax(scores[rest])
            info[np.ix_(rest, rest)] += np.diag(z) - np.outer(z, z)
    return info
