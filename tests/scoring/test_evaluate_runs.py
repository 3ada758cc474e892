"""scoring.evaluation.evaluate_runs: several runs scored together equal each run scored alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scoring import ORL, ScoringError
from scoring.evaluation import evaluate_run, evaluate_runs
from scoring.run import CodedRuns, flat_run_from_frame, flat_runs_from_codes

MEASURES = ["AP", "nDCG@10", "RR", "P@5", "RDQm2-a1@10", "CMP@5", "KendallTau", "SpearmanRho"]


def _orls(rng: np.random.Generator) -> dict[str, ORL]:
    orls = {}
    for q in range(15):
        items = [f"d{j}" for j in rng.choice(50, size=int(rng.integers(1, 12)), replace=False)]
        orls[f"q{q}"] = ORL.from_grades({d: float(rng.integers(1, 4)) for d in items})
    return orls


def _run(rng: np.random.Generator, length: int) -> pd.DataFrame:
    rows = []
    for q in rng.choice(18, size=int(rng.integers(5, 18)), replace=False):  # q15-q17: no ORL
        docs = rng.choice(50, size=int(rng.integers(1, length)), replace=False)
        scores = np.round(rng.random(len(docs)) * 3, 1)  # ties: ordered by item id
        rows += [(f"q{q}", f"d{d}", float(s)) for d, s in zip(docs, scores, strict=True)]
    return pd.DataFrame(rows, columns=["query", "item", "score"])


@pytest.mark.parametrize("missing", ["zero", "skip"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equal_to_each_run_alone(seed: int, missing: str) -> None:
    rng = np.random.default_rng(seed)
    orls = _orls(rng)
    runs = [_run(rng, length) for length in (5, 30, 30, 12, 40)]  # several depths
    together = evaluate_runs(orls, runs, MEASURES, missing=missing)  # type: ignore[arg-type]
    assert len(together) == len(runs)
    for run, mine in zip(runs, together, strict=True):
        alone = evaluate_run(orls, run, MEASURES, missing=missing)  # type: ignore[arg-type]
        # Equal up to the last bit: BLAS dot products may round a row differently
        # when it sits in a larger matrix.
        pd.testing.assert_frame_equal(mine.per_query, alone.per_query, rtol=1e-13, atol=1e-15)
        assert mine.conventions == alone.conventions
        assert mine.warnings == alone.warnings
        assert mine.missing_queries == alone.missing_queries
        assert mine.queries_without_orl == alone.queries_without_orl
    assert any(r.warnings for r in together) and any(r.queries_without_orl for r in together)


def test_a_run_sharing_no_query_is_an_error() -> None:
    orls = {"q1": ORL({"a": 1})}
    good = pd.DataFrame({"query": ["q1"], "item": ["a"], "score": [1.0]})
    bad = pd.DataFrame({"query": ["Q1"], "item": ["a"], "score": [1.0]})
    with pytest.raises(ScoringError, match="share no query"):
        evaluate_runs(orls, [good, bad], ["AP"])
    assert evaluate_runs(orls, [], ["AP"]) == []


def _coded(runs: list[pd.DataFrame]) -> CodedRuns:
    """The runs as codes into shared id tables (as the one-pass reader makes them)."""
    every = pd.concat(runs, ignore_index=True)
    query_codes, queries = pd.factorize(every["query"])
    item_codes, items = pd.factorize(every["item"])
    return CodedRuns(
        runs=np.repeat(np.arange(len(runs)), [len(r) for r in runs]),
        query_codes=query_codes.astype(np.int64),
        queries=np.asarray(queries, dtype=object),
        item_codes=item_codes.astype(np.int64),
        items=np.asarray(items, dtype=object),
        scores=every["score"].to_numpy(dtype=float),
        n_runs=len(runs),
    )


@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("depth", [None, 3])
def test_flat_runs_from_codes_order_each_run_as_its_table(
    depth: int | None, precision: str
) -> None:
    rng = np.random.default_rng(7)
    runs = [_run(rng, length) for length in (5, 30, 12)]
    runs[1].loc[::4, "score"] = 100.0 + 1e-9 * np.arange(len(runs[1].loc[::4]))  # float32 ties
    flats = flat_runs_from_codes(_coded(runs), depth=depth, score_precision=precision)  # type: ignore[arg-type]
    assert len(flats) == len(runs)
    for run, flat in zip(runs, flats, strict=True):
        alone = flat_run_from_frame(run, depth=depth, score_precision=precision)  # type: ignore[arg-type]
        assert flat.to_dict() == alone.to_dict()  # the same lists; query order aside


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_coded_runs_score_as_tables(missing: str) -> None:
    rng = np.random.default_rng(3)
    orls = _orls(rng)
    runs = [_run(rng, length) for length in (8, 30, 30)]
    coded = evaluate_runs(orls, _coded(runs), MEASURES, missing=missing)  # type: ignore[arg-type]
    tables = evaluate_runs(orls, runs, MEASURES, missing=missing)  # type: ignore[arg-type]
    for mine, theirs in zip(coded, tables, strict=True):
        pd.testing.assert_frame_equal(mine.per_query, theirs.per_query, rtol=1e-13, atol=1e-15)
        assert (mine.warnings, mine.missing_queries, mine.queries_without_orl) == (
            theirs.warnings,
            theirs.missing_queries,
            theirs.queries_without_orl,
        )
