"""The fact rows' order within a chunk (``store/batches._stable_order``): the stable
sort of the query ids, whether or not they span few enough values for 16 bits."""

from __future__ import annotations

import numpy as np
import pytest

from orlbuild.store.batches import _stable_order


@pytest.mark.parametrize(
    ("low", "high"),
    [(1, 10_001), (5_000_000, 5_065_536), (1, 1 << 40), (7, 8), (-(1 << 20), 1 << 20)],
)
def test_stable_order_is_numpy_stable_argsort(low: int, high: int) -> None:
    keys = np.random.default_rng(high % 97).integers(low, high, 20_000).astype(np.int64)
    assert _stable_order(keys).tolist() == np.argsort(keys, kind="stable").tolist()


def test_stable_order_of_no_keys() -> None:
    assert _stable_order(np.empty(0, dtype=np.int64)).tolist() == []
