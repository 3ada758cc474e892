"""orlbuild.builders.estimation.lsr_dense reproduces choix.ilsr_pairwise_dense bit for bit."""

from __future__ import annotations

import warnings

import choix
import numpy as np
import pytest

from orlbuild.builders.estimation.lsr_dense import ilsr_pairwise_dense


def _outcome(fit, counts: np.ndarray, alpha: float, max_iter: int) -> tuple[str, object]:
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", fit(counts, alpha=alpha, max_iter=max_iter).tobytes()
    except (RuntimeError, ValueError) as exc:
        return type(exc).__name__, str(exc)


def test_scores_and_failures_are_choix_s_bit_for_bit() -> None:
    rng = np.random.default_rng(0)
    kinds = set()
    for _ in range(400):
        n = int(rng.integers(2, 20))
        counts = rng.poisson(rng.uniform(0.2, 5), (n, n)).astype(float)
        counts *= rng.random((n, n)) < rng.uniform(0.05, 1)
        if rng.random() < 0.3:
            counts += 0.5 * (rng.random((n, n)) < 0.2)  # ties
        np.fill_diagonal(counts, 0.0)
        alpha = float(rng.choice([0.0, 0.01, 0.1 / n, 1.0]))
        max_iter = int(rng.choice([3, 100, 500]))
        expected = _outcome(choix.ilsr_pairwise_dense, counts, alpha, max_iter)
        assert _outcome(ilsr_pairwise_dense, counts, alpha, max_iter) == expected
        kinds.add(expected[0])
    # converged fits, non-convergence and several absorbing classes were all compared
    assert kinds == {"ok", "RuntimeError", "ValueError"}


def test_two_items_and_a_fortran_ordered_matrix() -> None:
    counts = np.asfortranarray([[0.0, 3.0], [1.0, 0.0]])
    assert ilsr_pairwise_dense(counts, alpha=0.1).tobytes() == (
        choix.ilsr_pairwise_dense(counts, alpha=0.1).tobytes()
    )
    big = np.asfortranarray(np.random.default_rng(3).poisson(3, (9, 9)).astype(float))
    np.fill_diagonal(big, 0.0)
    assert ilsr_pairwise_dense(big, alpha=0.01).tobytes() == (
        choix.ilsr_pairwise_dense(big, alpha=0.01).tobytes()
    )


def test_non_convergence_names_the_iterations() -> None:
    counts = np.array([[0.0, 5.0, 1.0], [1.0, 0.0, 4.0], [3.0, 1.0, 0.0]])
    with pytest.raises(RuntimeError, match="after 1 iterations"):
        ilsr_pairwise_dense(counts, alpha=0.0, max_iter=1)
