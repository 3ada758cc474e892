"""Reference resampling rebuilds each distinct multiset of drawn annotators once.

A resample is the multiset of annotators drawn with replacement; its copies
are named in sorted order, so two draws of one multiset give the same
judgments. :func:`reference_verdicts` rebuilds each distinct multiset once and
counts it as often as it was drawn: the shares must equal those of rebuilding
every draw.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from orlbuild.builders.calibration.simulation import simulate_pairwise, tiered_strengths
from orlbuild.builders.parameters import BuildParameters
from orlbuild.services import reference_resampling
from orlbuild.services.reference_resampling import annotator_resample, reference_verdicts

PARAMS = BuildParameters(source="pairwise", mc_draws=200)


def _dataset() -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Four queries judged by three annotators, two systems a little apart."""
    rng = np.random.default_rng(11)
    strengths, _ = tiered_strengths([2, 3, 3], gap=1.0)
    items = [f"d{i:02d}" for i in range(len(strengths))]
    judgments: list[pd.DataFrame] = []
    runs: dict[str, list[pd.DataFrame]] = {"a": [], "b": []}
    for q in range(4):
        query = f"q{q}"
        judgments.append(simulate_pairwise(rng, strengths, 60, query=query, n_annotators=3))
        for system, noise in (("a", 0.5), ("b", 1.5)):
            scores = strengths + rng.normal(0.0, noise, size=len(strengths))
            runs[system].append(pd.DataFrame({"query": query, "item": items, "score": scores}))
    frames = {s: pd.concat(f, ignore_index=True) for s, f in runs.items()}
    return pd.concat(judgments, ignore_index=True), frames


def test_one_multiset_gives_the_same_judgments_whatever_the_draw_order() -> None:
    judgments, _ = _dataset()
    seen: dict[tuple[tuple[str, int], ...], pd.DataFrame] = {}
    repeats = 0
    for b in range(40):
        frame = annotator_resample(judgments, np.random.default_rng([5, b]))
        copies = frame["annotator"].drop_duplicates().str.split("#").str[0]
        key = tuple(sorted(Counter(copies).items()))
        if key in seen:
            pd.testing.assert_frame_equal(frame, seen[key])
            repeats += 1
        seen[key] = frame
    assert repeats > 0  # 40 draws of 3 annotators repeat multisets


def test_shares_equal_rebuilding_every_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    judgments, runs = _dataset()
    resamples, seed = 12, 3
    result = reference_verdicts(
        judgments, PARAMS, runs, ["RDQm2-a1@8"], resamples=resamples, seed=seed,
        permutations=200,
    )  # fmt: skip
    rebuilt: list[tuple[str, ...]] = []
    original = reference_resampling._resample_verdicts

    def every_draw(setup: reference_resampling._Setup, drawn: tuple[str, ...]) -> object:
        rebuilt.append(drawn)
        return original(setup, drawn)

    monkeypatch.setattr(reference_resampling, "_resample_verdicts", every_draw)
    again = reference_verdicts(
        judgments, PARAMS, runs, ["RDQm2-a1@8"], resamples=resamples, seed=seed,
        permutations=200,
    )  # fmt: skip
    assert len(rebuilt) == len(set(rebuilt)) < resamples  # each multiset once, some drawn twice
    pd.testing.assert_frame_equal(again.pairs, result.pairs)
    # brute force: every draw rebuilt and counted once
    annotators = reference_resampling._annotators(judgments)
    setup_calls: list[reference_resampling._Setup] = []

    def capture(setup: reference_resampling._Setup, drawn: tuple[str, ...]) -> object:
        setup_calls.append(setup)
        return original(setup, drawn)

    monkeypatch.setattr(reference_resampling, "_resample_verdicts", capture)
    reference_verdicts(
        judgments, PARAMS, runs, ["RDQm2-a1@8"], resamples=1, seed=seed, permutations=200
    )
    setup = setup_calls[0]
    hits = np.zeros(len(result.pairs))
    tiers = np.zeros(len(result.systems))
    done = 0
    for b in range(resamples):
        drawn = reference_resampling._draw(annotators, np.random.default_rng([seed, b]))
        verdicts = original(setup, drawn)
        if verdicts is not None:
            hits += verdicts[0]
            tiers += verdicts[1]
            done += 1
    assert result.resamples == done
    np.testing.assert_allclose(result.pairs["holds"].to_numpy(), hits / done, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        result.systems["tier_holds"].to_numpy(), tiers / done, rtol=0, atol=1e-12
    )
