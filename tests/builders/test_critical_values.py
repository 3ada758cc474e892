"""The simultaneous tiering's Monte Carlo null, computed a block of pairs at a time.

The blocked critical values must equal the full-matrix ones exactly (same
seeded draws, exact maxima and order statistics) whatever the block size, a
build must not depend on it, and the blocked path must hold far less than the
``draws x pairs`` null (docs/reliability.md, "Limits").
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator

import numpy as np
import pytest

import orlbuild.builders.estimation.uncertainty as uncertainty_module
import orlbuild.builders.tiering.critical_values as critical_values
from orlbuild.builders import BuildParameters, build_orls
from orlbuild.builders.estimation.uncertainty import bootstrap_uncertainty, fisher_uncertainty
from orlbuild.builders.tiering.critical_values import (
    blocked_single_step_critical,
    blocked_step_down_critical,
    bootstrap_null,
    covariance_null,
)
from orlbuild.builders.tiering.deciding import simultaneous_critical
from tests.benchmarks.bench_query_memory import one_query
from tests.max_t_oracle import (
    null_draws_from_bootstrap,
    null_draws_from_covariance,
    single_step_critical,
    step_down_critical,
)

#: From one pair per block to everything in one block.
BLOCK_BYTES = (1, 4_000, 300_000, 2**62)


def _query(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Scores, a centred covariance, its difference standard errors and bootstrap samples."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n))
    centre = np.eye(n) - 1.0 / n
    cov = centre @ (a @ a.T / n) @ centre
    diag = np.diag(cov)
    se = np.sqrt(np.maximum(diag[:, None] + diag[None, :] - 2.0 * cov, 0.0))
    scores = rng.normal(0.0, 2.0, size=n)
    samples = scores + rng.normal(size=(150, n))
    return scores, cov, se, samples


@pytest.mark.parametrize("n", [2, 3, 9, 40, 90])
def test_blocked_critical_values_equal_the_full_matrix_ones(n: int) -> None:
    scores, cov, se, samples = _query(n, seed=n)
    boot_se = np.std(samples[:, :, None] - samples[:, None, :], axis=0, ddof=1)
    cases = [
        (null_draws_from_covariance(cov, se, draws=700, seed=3), se,
         covariance_null(cov, se, draws=700, seed=3)),
        (null_draws_from_bootstrap(scores, samples, boot_se), boot_se,
         bootstrap_null(scores, samples, boot_se)),
    ]  # fmt: skip
    for (first, second, full), pair_se, blocked in cases:
        assert np.array_equal(blocked.first, first) and np.array_equal(blocked.second, second)
        observed = np.abs(scores[first] - scores[second]) / pair_se[first, second]
        expected = step_down_critical(full, observed, 0.05)
        single = single_step_critical(full, 0.05)
        for block_bytes in BLOCK_BYTES:
            got = blocked_step_down_critical(blocked, observed, 0.05, block_bytes=block_bytes)
            assert np.array_equal(got, expected), block_bytes
            assert blocked_single_step_critical(blocked, 0.05, block_bytes=block_bytes) == single


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Blocks of a few pairs (null) and a few items (bootstrap differences)."""
    monkeypatch.setattr(critical_values, "NULL_BLOCK_BYTES", 50_000)
    monkeypatch.setattr(uncertainty_module, "BOOTSTRAP_BLOCK_BYTES", 50_000)
    yield


@pytest.mark.parametrize(
    "options",
    [
        {"method": "bt"},
        {"method": "bt", "step_down": False},
        {"method": "rank-centrality", "bootstrap": 60},
    ],
)
def test_a_seeded_build_does_not_depend_on_the_blocks(
    options: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = one_query(12, per_item=80, seed=2, spread=4.0)  # 66 pairs
    params = BuildParameters(source="pairwise", seed=9, **options)  # type: ignore[arg-type]
    _, whole = build_orls(frame, params)
    monkeypatch.setattr(critical_values, "NULL_BLOCK_BYTES", 20_000)  # one pair per block
    monkeypatch.setattr(uncertainty_module, "BOOTSTRAP_BLOCK_BYTES", 20_000)
    _, blocked = build_orls(frame, params)
    assert blocked.orls["q"].tiers == whole.orls["q"].tiers
    assert len(whole.orls["q"].tiers) > 1  # a query with boundaries, not one tier
    assert blocked.orls["q"].decisions == whole.orls["q"].decisions


def test_bootstrap_uncertainty_does_not_depend_on_the_blocks(small_blocks: None) -> None:
    scores, _, _, samples = _query(30, seed=1)
    blocked = bootstrap_uncertainty(scores, samples, variance="b")
    diffs = samples[:, :, None] - samples[:, None, :]
    share = np.minimum((diffs <= 0).mean(axis=0), (diffs >= 0).mean(axis=0))
    assert np.array_equal(blocked.se, diffs.std(axis=0, ddof=1))
    assert np.array_equal(blocked.p_value, np.minimum(1.0, 2.0 * share))


def test_the_blocked_null_holds_a_bounded_share_of_the_full_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """150 items, 1,000 draws: the full null is 1,000 x 11,175 float32 (45 MB)."""
    n, draws = 150, 1_000
    scores, cov, _, _ = _query(n, seed=2)
    unc = fisher_uncertainty(scores, np.linalg.pinv(np.linalg.pinv(cov)))
    full_null_bytes = draws * (n * (n - 1) // 2) * 4
    monkeypatch.setattr(critical_values, "NULL_BLOCK_BYTES", 2 * 2**20)
    critical_values.standard_normal_draws(draws, n, 0)  # cached: not part of the peak
    tracemalloc.start()
    try:
        blocked = simultaneous_critical(unc, sig=0.05, draws=draws, seed=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the block (2 MiB) and the query's dense n x n and per-pair arrays (under 3 MiB here)
    assert peak < 6 * 2**20 < full_null_bytes / 7, peak
    monkeypatch.setattr(critical_values, "NULL_BLOCK_BYTES", 2**62)
    assert np.array_equal(blocked, simultaneous_critical(unc, sig=0.05, draws=draws, seed=0))
