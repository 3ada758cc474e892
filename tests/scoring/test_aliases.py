"""Other libraries' spellings: each alias gives the peer's own number (ranx, ir_measures),
and an unknown name suggests the closest real one."""

from __future__ import annotations

import numpy as np
import pytest

from scoring import ORL, UnknownMeasureError, evaluate_run, parse_measure
from scoring.aggregation import aggregate
from scoring.measures import ALIASES, MEASURES
from tests.trec_parity import generated_qrels_and_run

ranx = pytest.importorskip("ranx")
ir_measures = pytest.importorskip("ir_measures")

#: ranx metric -> the orlbuild alias typed for it (the same string: ranx's spelling).
RANX = ["ndcg@10", "ndcg@5", "map@100", "map", "mrr", "mrr@10", "precision@10", "recall@100",
        "hits@10", "hit_rate@5", "r-precision", "NDCG@10", "MAP@100", "MRR",
        "map-l2", "mrr@10-l2", "precision@5-l2", "recall@20-l3", "hits@10-l2"]  # fmt: skip
#: ir_measures' names: orlbuild's own.
IR_MEASURES = ["nDCG@10", "nDCG@20", "AP", "AP@100", "RR", "RR@10", "P@10", "R@100",
               "Judged@10", "P(rel=2)@10", "AP(rel=2)", "RR(rel=2)@10"]  # fmt: skip


def _data(seed: int) -> tuple[dict, dict]:
    """Graded qrels (0-3) and a run without tied scores (ranx breaks ties its own way)."""
    return generated_qrels_and_run(
        np.random.default_rng(seed),
        [f"q{q}" for q in range(40)],
        documents=300,
        largest_pool=60,
        grades=4,
        scores=lambda rng, n: rng.permutation(n).astype(float) + 0.5,
    )


def _ours(qrels: dict, run: dict, names: list[str]) -> dict[str, float]:
    orls = {q: ORL.from_grades(g) for q, g in qrels.items()}
    frame = evaluate_run(orls, run, names).per_query
    return {name: aggregate(name, frame[name].to_numpy()) for name in names}


@pytest.mark.parametrize("seed", [0, 1])
def test_ranx_spellings_give_ranx_numbers(seed: int) -> None:
    qrels, run = _data(seed)
    theirs = ranx.evaluate(
        ranx.Qrels({q: {d: g for d, g in docs.items() if g > 0} for q, docs in qrels.items()}),
        ranx.Run(run),
        [m.lower() for m in RANX],
    )
    ours = _ours(qrels, run, RANX)
    for name in RANX:
        assert ours[name] == pytest.approx(theirs[name.lower()], abs=1e-9), name


@pytest.mark.parametrize("seed", [0, 1])
def test_ir_measures_spellings_give_ir_measures_numbers(seed: int) -> None:
    qrels, run = _data(seed)
    flat_qrels = [ir_measures.Qrel(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    flat_run = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    theirs = ir_measures.calc_aggregate(
        [ir_measures.parse_measure(m) for m in IR_MEASURES], flat_qrels, flat_run
    )
    ours = _ours(qrels, run, IR_MEASURES)
    for measure, value in theirs.items():
        assert ours[str(measure)] == pytest.approx(value, abs=1e-9), str(measure)


def test_every_alias_names_a_registered_measure_in_any_case() -> None:
    for alias, (target, _) in ALIASES.items():
        assert target in MEASURES
        for spelling in (alias, alias.upper()):
            text = spelling + ("@5" if MEASURES[target].NEEDS_CUTOFF else "")
            assert type(parse_measure(text)) is MEASURES[target]
    assert str(parse_measure("ndcg@10")) == "nDCG@10"
    assert str(parse_measure("p@5")) == "P@5"


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [
        ("RDQm2@10", "did you mean RDQm2-a1@10?"),
        ("rdqm2@10", "did you mean RDQm2-a1@10?"),
        ("nDGC@5", "did you mean nDCG@5?"),
        ("precison@10", "did you mean P@10?"),  # the alias names P
        ("Bperf", "did you mean Bpref?"),
    ],
)
def test_an_unknown_name_suggests_the_closest_real_one(name: str, suggestion: str) -> None:
    with pytest.raises(UnknownMeasureError, match=suggestion.replace("?", r"\?")):
        parse_measure(name)
