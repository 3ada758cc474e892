"""Panels and pairs the permutation tests' checks share (``tests/statistics/test_tukey.py``,
``tests/statistics/test_max_t.py``)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd

from scoring.settings import TestSettings
from scoring.statistics import get_paired_test, system_comparison


def all_pairs(m: int) -> tuple[np.ndarray, np.ndarray]:
    """Column indices ``(a, b)``, ``a < b``, of every pair of ``m`` systems."""
    return np.triu_indices(m, k=1)


def equal_systems_panel(rng: np.random.Generator, n_queries: int, n_systems: int) -> np.ndarray:
    """Every system drawn from the same distribution: shared query difficulty plus noise."""
    difficulty = rng.normal(0.5, 0.2, size=(n_queries, 1))
    return np.clip(difficulty + rng.normal(0.0, 0.15, size=(n_queries, n_systems)), 0.0, 1.0)


def every_within_query_shuffle(scores: np.ndarray) -> Iterator[np.ndarray]:
    """The panel under every within-query permutation of the systems, each equally likely
    under the null (``m!**n`` panels: tiny panels only)."""
    n, m = scores.shape
    for perms in itertools.product(itertools.permutations(range(m)), repeat=n):
        yield np.array([scores[q, list(p)] for q, p in enumerate(perms)])


def assert_registered(name: str, pvalues: Callable[..., np.ndarray], scores: np.ndarray) -> None:
    """The paired-test registry's ``name`` is ``pvalues``: the same p-values from one seed."""
    pairs = all_pairs(scores.shape[1])
    rng_a, rng_b = np.random.default_rng(9), np.random.default_rng(9)
    via_registry = get_paired_test(name)(scores, pairs, permutations=300, rng=rng_a)
    np.testing.assert_array_equal(via_registry, pvalues(scores, pairs, permutations=300, rng=rng_b))


def null_family_wise_error(test: str, experiments: int = 200) -> float:
    """Share of null experiments in which ``test`` finds any significant pair.

    Each experiment: 20 equal systems (:func:`equal_systems_panel`), 50 queries,
    alpha = 0.05, 1,000 permutations; the panels are the same for every test.
    """
    rng = np.random.default_rng(2026)
    any_significant = 0
    for experiment in range(experiments):
        panel = pd.DataFrame(equal_systems_panel(rng, 50, 20))
        pairs = system_comparison(
            panel, TestSettings(test=test, permutations=1000, seed=experiment)
        ).pairs
        any_significant += bool(pairs["significant"].any())
    return any_significant / experiments
