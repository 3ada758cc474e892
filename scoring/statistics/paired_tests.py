"""Paired significance tests over all system pairs at once, registered by name.

Each test maps per-query system scores ``(n_queries, n_systems)`` and the pair
index ``(a, b)`` to one two-sided p-value per pair. ``randomization`` (the
paired sign-flip test), ``t`` (Student's paired t-test), ``tukey-hsd``
(randomized Tukey HSD) and ``max-t`` (its studentized step-down form), whose
p-values are family-wise adjusted over all pairs, are available; docs/comparing-systems.md,
"Comparing many systems" says which to choose.
"""

from __future__ import annotations

import warnings
from typing import Protocol

import numpy as np

from scoring.errors import ScoringError
from scoring.statistics.max_t import max_t_pvalues
from scoring.statistics.panel import FloatMatrix, FloatVector
from scoring.statistics.randomization import PairIndex, pairwise_randomization_pvalues
from scoring.statistics.tukey import tukey_hsd_pvalues
from scoring.vocabulary import SignificanceTest

__all__ = ["PAIRED_TESTS", "PairedTest", "get_paired_test", "paired_t_pvalues"]


class PairedTest(Protocol):
    """A two-sided paired test of every listed pair of score columns."""

    def __call__(
        self,
        scores: FloatMatrix,
        pairs: PairIndex,
        *,
        permutations: int,
        rng: np.random.Generator,
    ) -> FloatVector: ...


def paired_t_pvalues(
    scores: FloatMatrix,
    pairs: PairIndex,
    *,
    permutations: int = 0,
    rng: np.random.Generator | None = None,
) -> FloatVector:
    """Two-sided paired t-test p-values (:func:`scipy.stats.ttest_rel`), one per pair.

    Parameters
    ----------
    scores
        Per-query scores, shape ``(n_queries, n_systems)``.
    pairs
        Column indices ``(a, b)`` of the pairs to test.
    permutations, rng
        Ignored; present so that every registered test has the same signature.

    Returns
    -------
    numpy.ndarray
        p-values, shape ``(n_pairs,)``. When the statistic is undefined (all
        differences zero, or a single query) the test does not reject: ``p = 1``.
    """
    from scipy import stats  # lazy: scipy.stats costs every CLI start ~1 s

    first, second = pairs
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.ttest_rel(scores[:, first], scores[:, second], axis=0)
    pvalues = np.asarray(result.pvalue, dtype=np.float64).reshape(-1)
    return np.where(np.isnan(pvalues), 1.0, pvalues)


PAIRED_TESTS: dict[SignificanceTest, PairedTest] = {
    SignificanceTest.randomization: pairwise_randomization_pvalues,
    SignificanceTest.t: paired_t_pvalues,
    SignificanceTest.tukey_hsd: tukey_hsd_pvalues,
    SignificanceTest.max_t: max_t_pvalues,
}


def get_paired_test(name: str) -> PairedTest:
    """Return the registered paired test called ``name``.

    Raises
    ------
    ScoringError
        Unknown name; the message lists the valid ones.
    """
    try:
        return PAIRED_TESTS[SignificanceTest(name)]
    except ValueError:
        valid = ", ".join(PAIRED_TESTS)
        raise ScoringError(f"unknown paired test {name!r}; valid tests: {valid}") from None
