"""A build gives the same ORLs and decisions serially, on two processes and on a Dask cluster."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import pytest

from orlbuild.builders.build import build_orls
from orlbuild.builders.calibration.simulation import simulate_pairwise
from orlbuild.builders.parameters import BuildParameters
from orlbuild.errors import BuildError
from orlbuild.executor import Executor, map_ordered, resolve_executor
from orlbuild.records import QueryBuildError


def pairwise_judgments(seed: int, n_queries: int, n_items: int, per_query: int) -> pd.DataFrame:
    """Bradley-Terry comparisons (the package's simulator), strengths spread over two units."""
    rng = np.random.default_rng(seed)
    strengths = np.linspace(0.0, -2.0, n_items)
    frames = [
        simulate_pairwise(rng, strengths, per_query, query=f"q{q:03d}", n_annotators=4)
        for q in range(n_queries)
    ]
    return pd.concat(frames, ignore_index=True)


def build(frame: pd.DataFrame, params: BuildParameters, executor: Executor, **kwargs: object):
    mapper = partial(map_ordered, executor=executor, chunk_size=4)
    return build_orls(frame, params, mapper=mapper, **kwargs)  # type: ignore[arg-type]


def test_bootstrap_rank_centrality_is_identical_everywhere(dask_scheduler: str) -> None:
    frame = pairwise_judgments(
        3, n_queries=24, n_items=8, per_query=400
    )  # backed boundaries need more evidence
    params = BuildParameters(
        source="pairwise", method="rank-centrality", uncertainty="bootstrap", bootstrap=40, seed=11
    )
    serial = build_orls(frame, params)
    assert len(serial[1].orls) == 24
    assert any(len(orl.tiers) > 1 for orl in serial[1].orls.values())
    for executor in (resolve_executor(2), resolve_executor(scheduler=dask_scheduler)):
        parallel = build(frame, params, executor)
        assert parallel[0] == serial[0]
        # repr compares every score, interval, p-value (NaN included) and decision exactly.
        assert repr(parallel[1]) == repr(serial[1]), executor.describe()


def test_a_failing_query_is_the_same_error_everywhere(dask_scheduler: str) -> None:
    frame = pairwise_judgments(5, n_queries=12, n_items=6, per_query=40)
    # q007: an item that never loses and one that is compared with nothing else
    # apart: two components, which fails the query by default.
    lone = pd.DataFrame(
        {"query": "q007", "annotator": "a0", "winner": ["x1"], "loser": ["x2"], "tie": 0}
    )
    frame = pd.concat([frame, lone], ignore_index=True)
    params = BuildParameters(source="pairwise", method="bt", seed=2)
    messages = []
    for executor in (
        resolve_executor(1),
        resolve_executor(2),
        resolve_executor(scheduler=dask_scheduler),
    ):
        with pytest.raises(BuildError) as caught:
            build(frame, params, executor)
        assert isinstance(caught.value, QueryBuildError)
        messages.append(str(caught.value))
        skipped = build(frame, params, executor, on_error="skip")[1]
        assert [f.query for f in skipped.failures] == ["q007"]
        assert len(skipped.orls) == 11
    assert len(set(messages)) == 1, messages
    assert "q007" in messages[0]


def _slow_comparisons(frame: pd.DataFrame) -> list[tuple[str, object]]:
    """Every query sliced and indexed from its own strings (the reference of the fast path)."""
    from orlbuild.builders.pairwise_data import (
        comparisons_from_arrays,
        pair_arrays,
        query_blocks,
        row_counts,
    )

    winners, losers, ties, annotators = pair_arrays(frame)
    counts = row_counts(frame)
    return [
        (
            query,
            comparisons_from_arrays(
                winners[block],
                losers[block],
                ties[block],
                annotators[block],
                counts=None if counts is None else counts[block],
            ),
        )
        for query, block in query_blocks(frame["query"])
    ]


def _assert_same_comparisons(got: object, expected: object) -> None:
    from dataclasses import fields

    for field in fields(expected):  # type: ignore[arg-type]
        a, b = getattr(got, field.name), getattr(expected, field.name)
        if b is None:
            assert a is None, field.name
            continue
        assert a.dtype == b.dtype and a.shape == b.shape, field.name
        assert a.tolist() == b.tolist(), field.name


@pytest.mark.parametrize("string_dtype", [True, False])
def test_queries_are_sliced_as_from_their_own_strings(string_dtype: bool) -> None:
    """The vectorised slicing of every query (pairwise_query_comparisons) gives the arrays
    comparisons_from_arrays gives from each query's strings: ties, counts, a missing
    annotator, non-ASCII and mixed-case ids, items that only lose, queries of one row."""
    from orlbuild.builders.build import _check_frame, pairwise_query_comparisons

    rng = np.random.default_rng(5)
    n = 2_000
    frame = pd.DataFrame(
        {
            "query": rng.choice(["q1", "q2", "é", "Z", "q10"], n),
            "annotator": rng.choice(np.array(["b", "a", "C", None], dtype=object), n),
            "winner": rng.choice(["x", "y", "Y", "10", "9", "ü"], n),
            "loser": rng.choice(["x", "y", "z", "2", "Ω"], n),
            "tie": rng.random(n) < 0.3,
            "count": rng.integers(0, 4, n),
        }
    )
    one_row = pd.DataFrame(
        [
            {
                "query": "lonely",
                "annotator": "a",
                "winner": "p",
                "loser": "o",
                "tie": False,
                "count": 2,
            }
        ]
    )
    frame = pd.concat([frame, one_row], ignore_index=True)
    if string_dtype:
        frame = frame.astype({c: "string" for c in ("query", "winner", "loser")})
    checked = _check_frame(frame, "pairwise")
    got = list(pairwise_query_comparisons(checked))
    expected = _slow_comparisons(checked)
    assert [q for q, _ in got] == [q for q, _ in expected]
    for (_, a), (_, b) in zip(got, expected, strict=True):
        _assert_same_comparisons(a, b)
