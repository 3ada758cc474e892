"""Parity with trec_eval's own test collection, to the printed digit.

trec_eval ships qrels, a run and the outputs it must print for them
(``tests/data/trec_eval/SOURCE.md``). Every line of ``out.test.aq`` and
``out.test.meas_params`` whose measure orlbuild implements (docs/measures.md,
"trec_eval, gdeval and ir_measures measures") must equal orlbuild's value
printed as trec_eval prints it (``%.4f``; counts as integers), per query and on
the ``all`` line (orlbuild's ``mean`` row: the mean over queries, the sum for the counts);
``ndcg_cut.k`` is the bare ``nDCG@k``. The files are
read as ``orlbuild eval`` reads them, ``#`` comment lines included.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from orlbuild.cli.score_tables import score_payload
from orlbuild.services.file_evaluations import evaluate_files
from scoring import EvaluationResult

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
QRELS = DATA / "qrels.test.with-comments"
RUN = DATA / "results.comment.test"
OUTPUTS = ("out.test.aq", "out.test.meas_params")

#: trec_eval measure -> orlbuild measure, for the names without a parameter.
PLAIN_NAMES = {
    "map": "AP",
    "Rprec": "Rprec",
    "bpref": "Bpref",
    "infAP": "infAP",
    "recip_rank": "RR",
    "num_ret": "NumRet",
    "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet",
    "ndcg": "nDCG",
}
#: trec_eval ``name_<cutoff>`` -> orlbuild ``name@cutoff``.
CUTOFF_NAMES = {
    "P": "P",
    "recall": "R",
    "success": "Success",
    "map_cut": "AP",
    "ndcg_cut": "nDCG",
}
#: trec_eval measures orlbuild does not implement: left out, listed so that a
#: measure added to orlbuild without a mapping here makes the test fail.
NOT_IMPLEMENTED = {
    "runid", "num_q", "gm_map", "gm_bpref", "relstring", "utility", "11pt_avg", "binG", "G",
    "ndcg_rel", "Rndcg", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
    "num_nonrel_judged_ret",
}  # fmt: skip
NOT_IMPLEMENTED_PREFIXES = ("Rprec_mult_", "relative_P_", "utility_", "11pt_avg_", "ndcg_1=")


def orlbuild_name(trec_name: str) -> str | None:
    """The orlbuild measure printing trec_eval's ``trec_name``, or None."""
    if trec_name in PLAIN_NAMES:
        return PLAIN_NAMES[trec_name]
    if match := re.fullmatch(r"iprec_at_recall_([01]\.\d\d)", trec_name):
        return f"IPrec@{float(match.group(1)):g}"
    if match := re.fullmatch(r"(\w+?)_(\d+)", trec_name):
        base = CUTOFF_NAMES.get(match.group(1))
        return None if base is None else f"{base}@{match.group(2)}"
    return None


def expected_lines(name: str) -> list[tuple[str, str, str]]:
    """``(measure, query, printed value)`` for every line of a trec_eval output."""
    lines = []
    for line in (DATA / name).read_text().splitlines():
        measure, query, value = line.split()
        lines.append((measure, query, value))
    return lines


def printed(value: float, like: str) -> str:
    """``value`` as trec_eval prints it: ``%.4f``, or an integer for the counts."""
    return f"{value:.4f}" if "." in like else str(round(value))


@pytest.fixture(scope="module")
def scored() -> EvaluationResult:
    names = {orlbuild_name(m) for out in OUTPUTS for m, _, _ in expected_lines(out)}
    result = evaluate_files(QRELS, [RUN], sorted(n for n in names if n is not None))
    (evaluation,) = result.evaluations.values()
    assert any("3 comment line(s)" in note and str(QRELS) in note for note in result.notes)
    assert any("3 comment line(s)" in note and str(RUN) in note for note in result.notes)
    return evaluation


@pytest.fixture(scope="module")
def per_query(scored: EvaluationResult) -> pd.DataFrame:
    return scored.per_query


def test_every_trec_eval_measure_is_mapped_or_known_missing() -> None:
    for out in OUTPUTS:
        for measure, _, _ in expected_lines(out):
            known_missing = measure in NOT_IMPLEMENTED or measure.startswith(
                NOT_IMPLEMENTED_PREFIXES
            )
            assert (orlbuild_name(measure) is None) == known_missing, measure


@pytest.mark.parametrize("output", OUTPUTS)
def test_values_equal_trec_eval_to_the_printed_digit(
    output: str, scored: EvaluationResult, per_query: pd.DataFrame
) -> None:
    all_row = score_payload(scored)["mean"]  # what orlbuild eval prints
    checked, measures = 0, set()
    wrong = []
    for measure, query, value in expected_lines(output):
        ours = orlbuild_name(measure)
        if ours is None:
            continue
        # orlbuild's all row holds sums for the counts (scoring.aggregation)
        got = all_row[ours] if query == "all" else per_query[ours].loc[query]
        checked += 1
        measures.add(re.sub(r"_\d+$|_[01]\.\d\d$", "", measure))
        if printed(float(got), value) != value:
            wrong.append((measure, query, value, float(got)))
    assert not wrong, wrong
    assert checked == {"out.test.aq": 236, "out.test.meas_params": 64}[output]
    assert len(measures) == {"out.test.aq": 15, "out.test.meas_params": 5}[output]


def test_queries_are_trec_evals(per_query: pd.DataFrame) -> None:
    (num_q,) = [v for m, q, v in expected_lines("out.test.aq") if m == "num_q"]
    assert sorted(per_query.index) == ["301", "302", "303"]
    assert len(per_query) == int(num_q)


def test_a_changed_value_is_caught(per_query: pd.DataFrame) -> None:
    """The comparison fails on a difference in the fourth decimal."""
    ap = float(per_query["AP"].to_numpy()[list(per_query.index).index("302")])
    assert printed(ap, "0.4175") == "0.4175"
    assert printed(ap + 1e-4, "0.4175") != "0.4175"
