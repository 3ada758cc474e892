"""``rel=N`` on the binary measures is trec_eval's ``-l N`` (through pytrec_eval's
``relevance_level``) and ir_measures' ``(rel=N)``, per query and in the aggregate."""

from __future__ import annotations

import numpy as np
import pytest

from scoring import ORL, evaluate_run, parse_measure
from scoring.relevance_level import orl_at_level
from tests.trec_parity import assert_per_query_parity, generated_qrels_and_run

pytrec_eval = pytest.importorskip("pytrec_eval")
ir_measures = pytest.importorskip("ir_measures")

CUTOFFS = (1, 5, 10, 20)


def _names(level: int) -> dict[str, str]:
    """orlbuild name at ``rel=level`` -> trec_eval name."""
    names = {
        f"AP(rel={level})": "map",
        f"RR(rel={level})": "recip_rank",
        f"Rprec(rel={level})": "Rprec",
        f"Bpref(rel={level})": "bpref",
        f"infAP(rel={level})": "infAP",
        f"NumRel(rel={level})": "num_rel",
        f"NumRelRet(rel={level})": "num_rel_ret",
    }
    for k in CUTOFFS:
        names |= {
            f"P(rel={level})@{k}": f"P_{k}",
            f"R(rel={level})@{k}": f"recall_{k}",
            f"Success(rel={level})@{k}": f"success_{k}",
            f"AP(rel={level})@{k}": f"map_cut_{k}",
        }
    for r in (0.0, 0.1, 0.5, 1.0):
        names[f"IPrec(rel={level})@{r:g}"] = f"iprec_at_recall_{r:.2f}"
    return names


TREC_MEASURES = {
    "map",
    "recip_rank",
    "Rprec",
    "bpref",
    "infAP",
    "num_rel",
    "num_rel_ret",
    "iprec_at_recall",
    "P." + ",".join(map(str, CUTOFFS)),
    "recall." + ",".join(map(str, CUTOFFS)),
    "success." + ",".join(map(str, CUTOFFS)),
    "map_cut." + ",".join(map(str, CUTOFFS)),
}


def _generate(seed: int, ties: bool = True) -> tuple[dict, dict]:
    """Graded qrels (0-3) and a run; with ``ties``, few distinct scores."""
    qrels, run = generated_qrels_and_run(
        np.random.default_rng(seed),
        [f"q{q}" for q in range(50)],
        documents=300,
        largest_pool=60,
        grades=4,
        scores=(
            (lambda rng, n: rng.integers(0, 7, size=n).astype(float) / 2.0)
            if ties
            else (lambda rng, n: rng.permutation(n).astype(float))
        ),
    )
    qrels["q1"] = {d: min(g, 1) for d, g in qrels["q1"].items()}  # nothing at level 2
    return qrels, run


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_rel_is_trec_evals_relevance_level(seed: int, level: int) -> None:
    qrels, run = _generate(seed)
    expected = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES, relevance_level=level).evaluate(
        run
    )
    orls = {q: ORL.from_grades(g) for q, g in qrels.items()}
    names = _names(level)
    got = evaluate_run(orls, run, list(names), missing="skip").to_frame()
    assert_per_query_parity(got, expected, names, 1e-9)
    assert got.loc["q1", f"AP(rel={level})"] == (0.0 if level > 1 else got.loc["q1", "AP(rel=1)"])


def test_rel_1_equals_the_plain_measures_on_graded_orls() -> None:
    qrels, run = _generate(3)
    orls = {q: ORL.from_grades(g) for q, g in qrels.items()}
    plain = ["AP", "RR@10", "P@5", "Bpref", "infAP", "IPrec@0.3", "NumRelRet"]
    leveled = [str(parse_measure(n).__class__.__name__) for n in plain]
    assert leveled == ["AP", "RR", "P", "Bpref", "infAP", "IPrec", "NumRelRet"]
    with_rel = ["AP(rel=1)", "RR(rel=1)@10", "P(rel=1)@5", "Bpref(rel=1)", "infAP(rel=1)",
                "IPrec(rel=1)@0.3", "NumRelRet(rel=1)"]  # fmt: skip
    a = evaluate_run(orls, run, plain).per_query.to_numpy()
    b = evaluate_run(orls, run, with_rel).per_query.to_numpy()
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("level", [2, 3])
def test_rel_matches_ir_measures(level: int) -> None:
    """Without tied scores: ir_measures cuts a run at k in its own order of ties."""
    qrels, run = _generate(4, ties=False)
    flat_qrels = [ir_measures.Qrel(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    flat_run = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    theirs = ir_measures.calc_aggregate(
        [
            ir_measures.AP(rel=level),
            ir_measures.RR(rel=level) @ 10,
            ir_measures.P(rel=level) @ 5,
            ir_measures.R(rel=level) @ 20,
        ],
        flat_qrels,
        flat_run,
    )
    orls = {q: ORL.from_grades(g) for q, g in qrels.items()}
    names = [f"AP(rel={level})", f"RR(rel={level})@10", f"P(rel={level})@5", f"R(rel={level})@20"]
    ours = evaluate_run(orls, run, names).per_query.mean()
    for measure, value in theirs.items():
        name = str(measure)
        assert ours[name] == pytest.approx(value, abs=1e-12), name


def test_an_orl_without_native_grades_is_cut_on_its_lc_grades() -> None:
    orl = ORL.from_tiers([["a"], ["b", "c"], ["d"]])  # lc grades 3, 2, 2, 1
    leveled = orl_at_level(orl, 2)
    assert leveled is not None
    assert dict(leveled) == {"a": 1, "b": 2, "c": 2}
    assert leveled.nonrelevant == frozenset({"d"})
    assert orl_at_level(orl, 4) is None
    measure = parse_measure("P(rel=3)@2")
    assert measure(orl, ["b", "a"]) == 0.5


@pytest.mark.parametrize("bad", ["AP(rel=0)", "AP(rel=-1)", "P(rel=x)@5", "nDCG(rel=2)@5"])
def test_bad_levels_are_refused(bad: str) -> None:
    from scoring import UnknownMeasureError

    with pytest.raises(UnknownMeasureError):
        parse_measure(bad)
