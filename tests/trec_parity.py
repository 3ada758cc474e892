"""What the trec_eval parity tests share (``tests/scoring/test_trec_eval_parity.py``,
``tests/scoring/test_trec_measures_parity.py``): generated graded qrels and tied-score runs,
and the per-query comparison with pytrec_eval's values."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import pytest

#: Scores of the ``n`` retrieved items of one query, drawn from ``rng``.
ScoreDraw = Callable[[np.random.Generator, int], np.ndarray]


def generated_qrels_and_run(
    rng: np.random.Generator,
    queries: Sequence[str],
    *,
    documents: int,
    largest_pool: int,
    grades: int,
    scores: ScoreDraw,
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Per query: a pool of 5 to ``largest_pool - 1`` of ``documents`` documents, a leading
    part of it judged with grades ``0 .. grades - 1`` (at least one relevant), and a run of
    a random part of the pool (judged, judged non-relevant and unjudged items)."""
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for query in queries:
        size = int(rng.integers(5, largest_pool))
        pool = [f"doc{j:03d}" for j in rng.choice(documents, size=size, replace=False)]
        judged = pool[: int(rng.integers(1, len(pool)))]
        drawn = rng.integers(0, grades, size=len(judged))
        drawn[int(rng.integers(len(judged)))] = int(rng.integers(1, grades))  # >= 1 relevant
        qrels[query] = {d: int(g) for d, g in zip(judged, drawn, strict=True)}
        retrieved = rng.permutation(pool)[: int(rng.integers(1, len(pool) + 1))]
        values = scores(rng, len(retrieved))
        run[query] = {d: float(s) for d, s in zip(retrieved, values, strict=True)}
    return qrels, run


def assert_per_query_parity(
    got: pd.DataFrame,
    expected: Mapping[str, Mapping[str, float]],
    names: Mapping[str, str],
    tolerance: float,
) -> None:
    """Our per-query values (``got``, one row per query) are pytrec_eval's (``expected``,
    query -> trec_eval name -> value) on the same queries, for every measure of ``names``
    (ours -> trec_eval's)."""
    assert set(got.index) == set(expected)
    for query, values in expected.items():
        for ours, theirs in names.items():
            assert got.loc[query, ours] == pytest.approx(values[theirs], abs=tolerance), (
                query,
                ours,
            )
