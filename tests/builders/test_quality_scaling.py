"""``quality`` at scale: the vectorised pair ends give the report the row-wise ones gave.

``build_quality`` and ``annotator_kappa`` once took the smaller and the larger id of each
preference with ``frame[["winner", "loser"]].min(axis=1)``, a Python reduction per row
(issue 39 item 14; docs/performance.md, "Quality of a build"). These tests check, on
small inputs, that the array comparison that replaced it gives identical reports;
``tests/benchmarks/bench_quality.py`` times both at 200,000 annotators.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd
import pytest

import orlbuild.builders.audit.quality as quality


def _row_wise_ends(
    winner: pd.Series, loser: pd.Series
) -> tuple[npt.NDArray[np.object_], npt.NDArray[np.object_]]:
    """The former path: pandas' row-wise ``min``/``max`` over the two columns."""
    both = pd.DataFrame({"winner": winner.to_numpy(), "loser": loser.to_numpy()})
    return both.min(axis=1).to_numpy(dtype=object), both.max(axis=1).to_numpy(dtype=object)


def _preferences(seed: int, rows: int = 400) -> tuple[pd.DataFrame, dict[str, dict[str, int]]]:
    rng = np.random.default_rng(seed)
    names = np.array(["a", "b", "B", "ab", "é", "d10", "d9", "z", "Z1"], dtype=object)
    first = rng.integers(0, len(names), rows)
    second = (first + rng.integers(1, len(names), rows)) % len(names)
    frame = pd.DataFrame(
        {
            "query": rng.choice(["q1", "q2", "q3"], rows),
            "annotator": rng.choice([f"k{i}" for i in range(12)], rows),
            "winner": names[first],
            "loser": names[second],
            "tie": (rng.random(rows) < 0.1).astype(int),
            "count": rng.integers(1, 4, rows),
            "first": np.where(rng.random(rows) < 0.5, names[first], None),
        }
    )
    ranks = {q: {str(item): int(rng.integers(1, 4)) for item in names} for q in ("q1", "q2", "q3")}
    return frame, ranks


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pair_ends_are_the_row_wise_min_and_max(seed: int) -> None:
    frame, _ = _preferences(seed)
    fast = quality._pair_ends(frame["winner"], frame["loser"])
    slow = _row_wise_ends(frame["winner"], frame["loser"])
    assert fast[0].tolist() == slow[0].tolist()
    assert fast[1].tolist() == slow[1].tolist()


def test_pair_ends_of_no_preferences() -> None:
    empty = pd.Series([], dtype=object)
    low, high = quality._pair_ends(empty, empty)
    assert len(low) == len(high) == 0


@pytest.mark.parametrize("seed", [0, 3])
def test_quality_report_is_the_one_the_row_wise_path_gave(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame, ranks = _preferences(seed)
    prefs = quality.raw_preferences(frame, "pairwise")
    fast = quality.build_quality(prefs, ranks)
    monkeypatch.setattr(quality, "_pair_ends", _row_wise_ends)
    slow = quality.build_quality(prefs, ranks)
    pd.testing.assert_frame_equal(fast.items, slow.items)
    pd.testing.assert_frame_equal(fast.pairs, slow.pairs)
    pd.testing.assert_frame_equal(fast.annotators, slow.annotators)
    pd.testing.assert_frame_equal(fast.cycles, slow.cycles)
    assert fast.agreement == slow.agreement
    assert fast.annotators["kappa"].notna().any()  # the kappa path is exercised
