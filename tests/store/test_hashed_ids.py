"""The name-id cache of an ingest (``store/bulk.py``, ``_HashedIds``): levels merged in one
pass must hold exactly what a stable sort of every entry in arrival order gave."""

from __future__ import annotations

import numpy as np

from orlbuild.store.bulk import _ascending, _HashedIds


class _SortedIds(_HashedIds):
    """The reference: each level sorted again as a whole (the former ``add``)."""

    def add(self, first: np.ndarray, second: np.ndarray, ids: np.ndarray) -> bool:
        big, small = self._levels
        merged = [np.concatenate([a, b]) for a, b in zip(small, (first, second, ids), strict=True)]
        if len(merged[0]) * 4 > len(big[0]):
            merged = [np.concatenate([a, b]) for a, b in zip(big, merged, strict=True)]
            big = (np.empty(0, dtype=np.int64),) * 3
        order = np.argsort(merged[0], kind="stable")
        keys, checks, values = (m[order] for m in merged)
        unique = np.ones(len(keys), dtype=bool)
        unique[1:] = keys[1:] != keys[:-1]
        level = (keys[unique], checks[unique], values[unique])
        self._levels = [big, level] if len(big[0]) else [level, big]
        return bool(unique.all())


def test_merged_levels_hold_what_sorting_them_again_held() -> None:
    rng = np.random.default_rng(7)
    cache, reference = _HashedIds(), _SortedIds()
    next_id = 1
    refused = 0
    for size in [5, 1, 40, 3, 200, 0, 7, 1000, 50, 2, 3000, 11, 20000, 4]:
        first = rng.integers(0, 5000, size).astype(np.int64)  # many first hashes taken twice
        second = rng.integers(-(2**62), 2**62, size).astype(np.int64)
        ids = np.arange(next_id, next_id + size, dtype=np.int64)
        next_id += size
        kept = cache.add(first, second, ids)
        assert kept == reference.add(first, second, ids)
        refused += not kept
        for ours, theirs in zip(cache._levels, reference._levels, strict=True):
            for a, b in zip(ours, theirs, strict=True):
                assert a.tolist() == b.tolist()
        probe = rng.integers(0, 5000, 500).astype(np.int64)
        checks = second[:500] if size >= 500 else rng.integers(0, 9, 500).astype(np.int64)
        assert cache.get(probe, checks).tolist() == reference.get(probe, checks).tolist()
        if size:
            assert (cache.get(first, second) == reference.get(first, second)).all()
    assert refused  # first hashes taken twice were met


def test_ascending_is_the_stable_order_with_or_without_equal_keys() -> None:
    rng = np.random.default_rng(3)
    for keys in (
        rng.integers(-(2**62), 2**62, 5000),  # distinct: the default sort's order
        rng.integers(0, 300, 5000),  # many equal keys: the stable sort's
        np.zeros(7, dtype=np.int64),
        np.arange(1, dtype=np.int64),
        np.empty(0, dtype=np.int64),
    ):
        keys = keys.astype(np.int64)
        assert _ascending(keys).tolist() == np.argsort(keys, kind="stable").tolist()


def test_presorted_entries_are_remembered_as_sorted_ones() -> None:
    rng = np.random.default_rng(5)
    cache, reference = _HashedIds(), _HashedIds()
    for size in (300, 40, 2000):
        first = rng.integers(0, 400, size).astype(np.int64)
        second = rng.integers(-(2**62), 2**62, size).astype(np.int64)
        ids = np.arange(size, dtype=np.int64)
        order = np.argsort(first, kind="stable")
        assert cache.add(first[order], second[order], ids[order], ordered=True) == reference.add(
            first, second, ids
        )
        for ours, theirs in zip(cache._levels, reference._levels, strict=True):
            for a, b in zip(ours, theirs, strict=True):
                assert a.tolist() == b.tolist()
