"""A build gives the same ORLs and decisions serially, on two processes and on a Dask cluster."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import pytest

from orlbuild.builders.build import build_orls
from orlbuild.builders.parameters import BuildParameters
from orlbuild.builders.simulation import simulate_pairwise
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
