"""Verdicts under reference uncertainty: annotator-bootstrap rebuilds of the ORLs.

The seeded simulation: two systems that are truly equal (each ranks the items
by the true strengths plus noise of the same size), a noisy reference (few
Bradley-Terry comparisons by several annotators). A false positive is a pair
declared significant *and* holding under at least 95% of the rebuilt
references; its rate must be at most 0.05.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from orlbuild.builders.calibration.simulation import simulate_pairwise, tiered_strengths
from orlbuild.builders.parameters import BuildParameters
from orlbuild.errors import ConfigError
from orlbuild.services.reference_resampling import (
    HOLD_THRESHOLD,
    annotator_resample,
    reference_verdicts,
)

PARAMS = BuildParameters(source="pairwise", mc_draws=400)


def _dataset(
    rng: np.random.Generator, n_queries: int = 12, gap: float = 0.0, comparisons: int = 120
) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Judgments of ``n_queries`` queries and two systems, ``b`` noisier by ``gap``."""
    strengths, _ = tiered_strengths([2, 3, 3], gap=1.5)
    judgments, runs = [], {"a": [], "b": []}
    for q in range(n_queries):
        query = f"q{q:02d}"
        judgments.append(
            simulate_pairwise(rng, strengths, comparisons, query=query, n_annotators=4)
        )
        items = [f"d{i:02d}" for i in range(len(strengths))]
        for system, noise in (("a", 1.0), ("b", 1.0 + gap)):
            scores = strengths + rng.normal(0.0, noise, size=len(strengths))
            runs[system].append(pd.DataFrame({"query": query, "item": items, "score": scores}))
    return pd.concat(judgments, ignore_index=True), {
        s: pd.concat(frames, ignore_index=True) for s, frames in runs.items()
    }


def test_annotator_resample_draws_whole_annotators() -> None:
    frame = pd.DataFrame(
        {"query": "q", "annotator": ["x", "x", "y"], "winner": ["a", "b", "a"], "loser": "c"}
    )
    drawn = annotator_resample(frame, np.random.default_rng(0))
    assert drawn["annotator"].str.split("#").str[0].isin(["x", "y"]).all()
    for name, part in drawn.groupby("annotator"):
        original = frame[frame["annotator"] == name.split("#")[0]]
        assert len(part) == len(original)
    with pytest.raises(ConfigError, match="annotator"):
        annotator_resample(frame.drop(columns="annotator"), np.random.default_rng(0))


def test_clear_differences_hold_under_every_resample() -> None:
    judgments, runs = _dataset(np.random.default_rng(1), gap=3.0, comparisons=400)
    result = reference_verdicts(judgments, PARAMS, runs, ["RDQm2-a1@8"], resamples=8, seed=2)
    pair = result.pairs.iloc[0]
    assert pair["significant"] and pair["holds"] == 1.0 and not pair["fragile"]
    assert result.resamples == 8
    assert set(result.systems.columns) >= {"tier_holds", "interval_holds", "fragile"}


def test_false_positive_rate_for_equal_systems_with_a_noisy_reference() -> None:
    rng = np.random.default_rng(2026)
    simulations, false_positives, raw = 30, 0, 0
    for sim in range(simulations):
        judgments, runs = _dataset(rng)
        result = reference_verdicts(
            judgments, PARAMS, runs, ["RDQm2-a1@8"], resamples=10, seed=sim, permutations=500
        )
        pair = result.pairs.iloc[0]
        raw += bool(pair["significant"])
        false_positives += bool(pair["significant"] and pair["holds"] >= HOLD_THRESHOLD)
    print(f"raw significant {raw}/{simulations}, robust {false_positives}/{simulations}")
    assert false_positives / simulations <= 0.05, (false_positives, raw)
