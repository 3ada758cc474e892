"""``render.Columns`` is drawn and written exactly as the same table as a DataFrame."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from orlbuild.cli.render import Columns, emit
from orlbuild.cli.score_tables import score_payload, score_report
from orlbuild.vocabulary import OutputFormat
from scoring import ORL, evaluate_run
from scoring.evaluation import EvaluationResult


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_columns_print_as_their_frame(
    capsys: pytest.CaptureFixture[str], fmt: OutputFormat
) -> None:
    columns = {"measure": ["nDCG[@10]", "AP", "x"], "mean": [0.123456789, float("nan"), 1.0]}
    light = Columns(columns, numeric=frozenset({"mean"}))
    emit(fmt, frame=light, title="t [a]")
    ours = capsys.readouterr().out
    emit(fmt, frame=pd.DataFrame(columns), title="t [a]")
    assert ours == capsys.readouterr().out


def test_columns_right_align_only_numeric(capsys: pytest.CaptureFixture[str]) -> None:
    emit(OutputFormat.table, frame=Columns({"a": ["x"], "b": [1.5]}), title=None)
    left = capsys.readouterr().out
    emit(OutputFormat.table, frame=pd.DataFrame({"a": ["x"], "b": [1.5]}), title=None)
    assert left != capsys.readouterr().out  # "b" is numeric in the frame, not declared here


def _result() -> EvaluationResult:
    rng = np.random.default_rng(3)
    orls = {f"q{i}": ORL({f"d{j}": 1 + j % 3 for j in range(1 + i % 7)}) for i in range(997)}
    run = {
        f"q{i}": [f"d{j}" for j in rng.permutation(12)[: 1 + i % 11]]
        for i in range(0, 1100, 1)
        if i % 13
    }
    return evaluate_run(orls, run, ["AP", "nDCG@10", "P@5", "RDQm2-a1@10"])


def test_scores_are_the_frame_values_bit_for_bit() -> None:
    result = _result()
    frame = result.per_query
    assert result.scores.queries == frame.index.tolist()
    assert result.scores.measures == [str(c) for c in frame.columns]
    assert np.array_equal(result.scores.matrix, frame.to_numpy(dtype=float), equal_nan=True)
    # The means of the arrays add in the frame's order: the same last bits.
    from_frame = EvaluationResult(per_query=frame, conventions=result.conventions)
    assert score_payload(result)["mean"] == score_payload(from_frame)["mean"]
    assert score_payload(result) == score_payload(
        EvaluationResult(
            per_query=frame,
            conventions=result.conventions,
            warnings=result.warnings,
            missing_queries=result.missing_queries,
            queries_without_orl=result.queries_without_orl,
            ignored_queries=result.ignored_queries,
        )
    )


def test_lazy_frame_equals_the_eager_one() -> None:
    result = _result()
    table, _ = score_report(result, per_query=True)
    assert table.index.name == "query"
    assert list(result.per_query.columns) == ["AP", "nDCG@10", "P@5", "RDQm2-a1@10"]
    assert result.per_query is result.per_query  # built once
    with pytest.raises(TypeError):
        EvaluationResult()


def test_a_big_json_document_is_the_same_document_one_record_per_line(capsys) -> None:
    """Issue 39: over BIG_DOCUMENT records the C encoder writes each record on one line."""
    import json

    from orlbuild.cli import render

    small = {"build": 1, "annotators": [{"a": "x", "v": float("nan")}], "tiers": {"q": 2}}
    big = {"build": 1, "annotators": [{"a": f"é{i}", "v": i / 3} for i in range(20_001)]}
    big["tiers"] = {"q": 2}
    big["empty"] = []
    for payload in (small, big):
        render.print_json(payload)
        out = capsys.readouterr().out
        assert json.loads(out) == render.jsonable(payload)
    assert out.count("\n") == 20_001 + 9 and '"é0"' in out
