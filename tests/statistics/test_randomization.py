"""Paired randomization and t-tests (docs/comparing-systems.md, "Comparing many systems")."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from scoring.errors import ScoringError
from scoring.statistics import (
    exact_randomization_pvalues,
    get_paired_test,
    paired_t_pvalues,
    pairwise_randomization_pvalues,
    randomization_pvalues,
)

ONE_PAIR = (np.array([0]), np.array([1]))


def brute_force_pvalue(diffs: list[Fraction]) -> Fraction:
    """Share of all 2**n sign vectors whose |sum| reaches the observed |sum| (exact)."""
    observed = abs(sum(diffs))
    hits = sum(
        abs(sum(s * d for s, d in zip(signs, diffs, strict=True))) >= observed
        for signs in itertools.product((1, -1), repeat=len(diffs))
    )
    return Fraction(hits, 2 ** len(diffs))


def test_identical_systems_give_p_one() -> None:
    scores = np.random.default_rng(3).random(50)
    diffs = (scores - scores)[:, None]
    both = np.column_stack([scores, scores])
    assert randomization_pvalues(diffs, permutations=999, rng=1)[0] == 1.0
    assert pairwise_randomization_pvalues(both, ONE_PAIR, permutations=999, rng=1)[0] == 1.0
    assert exact_randomization_pvalues(diffs[:12])[0] == 1.0
    assert paired_t_pvalues(both, ONE_PAIR)[0] == 1.0


def test_clearly_better_system_is_significant() -> None:
    rng = np.random.default_rng(7)
    better = rng.random(200)
    worse = np.clip(better - 0.1 + rng.normal(0, 0.05, 200), 0, 1)
    scores = np.column_stack([better, worse])
    p = pairwise_randomization_pvalues(scores, ONE_PAIR, permutations=1000, rng=2)[0]
    assert p == pytest.approx(1 / 1001)  # no flip reaches the observed mean
    assert p < 0.01
    assert paired_t_pvalues(scores, ONE_PAIR)[0] < 0.01


def test_exact_mode_matches_brute_force_with_exact_ties() -> None:
    # Multiples of 1/10 (as P@10 differences are) make many flipped sums tie the
    # observed one exactly; float rounding must not lose those ties.
    tenths = [3, -1, 2, 0, 1, -2, 1, 1, -3, 2, 1, 0]
    pairs = [tenths, [1] * 12, [t % 3 - 1 for t in tenths], [0] * 11 + [1]]
    diffs = np.array(pairs, dtype=np.float64).T / 10
    expected = [float(brute_force_pvalue([Fraction(v, 10) for v in pair])) for pair in pairs]
    np.testing.assert_array_equal(exact_randomization_pvalues(diffs), expected)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=1, max_size=10))
def test_exact_mode_matches_brute_force_property(values: list[int]) -> None:
    diffs = np.array(values, dtype=np.float64) / 7
    expected = brute_force_pvalue([Fraction(v, 7) for v in values])
    assert exact_randomization_pvalues(diffs)[0] == float(expected)


def test_monte_carlo_agrees_with_exact_distribution() -> None:
    rng = np.random.default_rng(11)
    diffs = rng.normal(0.05, 0.2, size=(14, 6)).round(2)
    exact = exact_randomization_pvalues(diffs)
    permutations = 40_000
    monte_carlo = randomization_pvalues(diffs, permutations=permutations, rng=5)
    # p_mc * (B + 1) - 1 is Binomial(B, p_exact); allow 4 standard errors.
    tolerance = 4 * np.sqrt(exact * (1 - exact) / permutations) + 2 / permutations
    assert np.all(np.abs(monte_carlo - exact) <= tolerance)
    assert np.all(exact > 0.0)


def test_pvalue_has_the_one_plus_count_form() -> None:
    diffs = np.random.default_rng(0).normal(0.0, 1.0, size=(30, 5))
    p = randomization_pvalues(diffs, permutations=250, rng=9)
    counts = p * 251
    np.testing.assert_allclose(counts, np.round(counts))
    assert np.all(counts >= 1)


def test_pairs_share_one_sign_matrix() -> None:
    diffs = np.random.default_rng(4).normal(0.02, 0.3, size=(60, 5))
    together = randomization_pvalues(diffs, permutations=500, rng=21)
    alone = [randomization_pvalues(diffs[:, j], permutations=500, rng=21)[0] for j in range(5)]
    np.testing.assert_array_equal(together, alone)


def test_seeded_and_symmetric() -> None:
    diffs = np.random.default_rng(5).normal(0.03, 0.3, size=(80, 4))
    first = randomization_pvalues(diffs, permutations=300, rng=1)
    np.testing.assert_array_equal(first, randomization_pvalues(diffs, permutations=300, rng=1))
    np.testing.assert_array_equal(first, randomization_pvalues(-diffs, permutations=300, rng=1))
    assert not np.array_equal(first, randomization_pvalues(diffs, permutations=300, rng=2))


def test_blocked_sign_matrix_gives_the_same_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    from scoring.statistics import randomization

    diffs = np.random.default_rng(8).normal(0.1, 1.0, size=(12, 3)).round(1)
    exact = exact_randomization_pvalues(diffs)
    monkeypatch.setattr(randomization, "BLOCK_ENTRIES", 12 * 7)  # blocks of 7 sign rows
    np.testing.assert_array_equal(exact_randomization_pvalues(diffs), exact)
    blocked = randomization_pvalues(diffs, permutations=20_000, rng=3)
    tolerance = 4 * np.sqrt(exact * (1 - exact) / 20_000) + 2 / 20_000
    assert np.all(np.abs(blocked - exact) <= tolerance)


def test_pairwise_product_equals_test_on_differences() -> None:
    # bits @ scores, then column differences == bits @ (score differences)
    rng = np.random.default_rng(13)
    scores = rng.random((90, 6))
    scores[:, 5] = scores[:, 2]  # one identical pair
    first, second = np.triu_indices(6, k=1)
    diffs = scores[:, first] - scores[:, second]
    np.testing.assert_array_equal(
        pairwise_randomization_pvalues(scores, (first, second), permutations=700, rng=4),
        randomization_pvalues(diffs, permutations=700, rng=4),
    )
    assert pairwise_randomization_pvalues(scores, (first, second), rng=4)[11] == 1.0  # (2, 5)


def test_t_test_equals_scipy_ttest_rel() -> None:
    rng = np.random.default_rng(12)
    scores = rng.random((40, 4))
    pairs = (np.array([0, 1, 2]), np.array([3, 3, 0]))
    expected = stats.ttest_rel(scores[:, [0, 1, 2]], scores[:, [3, 3, 0]], axis=0).pvalue
    np.testing.assert_allclose(paired_t_pvalues(scores, pairs), expected)


def test_registry_and_bad_input() -> None:
    assert get_paired_test("t") is paired_t_pvalues
    with pytest.raises(ScoringError, match="valid tests: randomization, t"):
        get_paired_test("wilcoxon")
    with pytest.raises(ScoringError, match="finite"):
        randomization_pvalues(np.array([[0.1], [np.nan]]))
    with pytest.raises(ScoringError, match="permutations"):
        randomization_pvalues(np.ones((3, 1)), permutations=0)
    with pytest.raises(ScoringError, match="too large"):
        exact_randomization_pvalues(np.ones((30, 1)))


@pytest.mark.parametrize(("n_queries", "n_systems", "permutations"), [(20, 4, 500), (50, 9, 3000)])
def test_small_and_large_blocks_count_the_same(
    monkeypatch: pytest.MonkeyPatch, n_queries: int, n_systems: int, permutations: int
) -> None:
    """Whole-block comparison and one first system at a time give identical p-values."""
    from scoring.statistics import randomization

    rng = np.random.default_rng(8)
    scores = np.round(rng.random((n_queries, n_systems)), 2)
    scores[:, 1] = scores[:, 0]  # ties and an identical pair
    first, second = np.triu_indices(n_systems, 1)
    pairs = (first.astype(np.intp), second.astype(np.intp))
    results = []
    for entries in (0, 1 << 40):
        monkeypatch.setattr(randomization, "DIRECT_MAX_ENTRIES", entries)
        results.append(
            randomization.pairwise_randomization_pvalues(
                scores, pairs, permutations=permutations, rng=4
            )
        )
    assert results[0].tobytes() == results[1].tobytes()
    assert results[0][0] == 1.0
