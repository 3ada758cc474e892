"""Generated graded qrels and tied-score runs for the trec_eval parity tests
(``tests/scoring/test_trec_eval_parity.py``, ``tests/scoring/test_trec_measures_parity.py``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

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
