"""The one measure-name parser: canonical names, round trips, errors reported together."""

from __future__ import annotations

import pytest

from scoring import MEASURES, ORL, UnknownMeasureError, parse_measure, parse_measures
from scoring.measures import RDQ, nDCG

CANONICAL = [
    ("RDQm1@5", "RDQm1@5"),
    ("RDQm2-a1@10", "RDQm2-a1@10"),
    ("RDQm2-a4@10", "RDQm2-a4@10"),
    ("RDQ(penalty=m1)@5", "RDQm1@5"),
    ("RDQ(penalty=m2,alpha=1,lam=0.2,weights=vertical)@5", "RDQm2-a1@5"),
    ("RDQ(penalty=m2,alpha=2.5)@5", "RDQ(alpha=2.5)@5"),
    ("RDQ(weights=1;0.5;0.25)@3", "RDQ(weights=1;0.5;0.25)@3"),
    ("RDQ(penalty=m1,weights=uniform)@3", "RDQ(penalty=m1,weights=uniform)@3"),
    ("nDCG@10", "nDCG@10"),
    ("nDCG(grade=bi,gain=exp)@10", "nDCG(grade=bi,gain=exp)@10"),
    ("nDCG(grade=auto,gain=linear)@10", "nDCG@10"),
    ("nDCG(grade=lc)@10", "nDCG(grade=lc,gain=linear)@10"),
    ("nDCG(gain=exp)@10", "nDCG(grade=auto,gain=exp)@10"),
    ("nDCG(grade=native,gain=linear)@10", "nDCG(grade=native,gain=linear)@10"),
    ("AP@10", "AP@10"),
    ("AP", "AP"),
    ("RBP(p=0.5)@10", "RBP(p=0.5)@10"),
    ("CMP(p=0.9)@5", "CMP(p=0.9)@5"),
    ("RR@10", "RR@10"),
    ("P@5", "P@5"),
    ("KendallTau@10", "KendallTau@10"),
    ("SpearmanRho@10", "SpearmanRho@10"),
]


@pytest.mark.parametrize(("name", "canonical"), CANONICAL)
def test_canonical_names_round_trip(name: str, canonical: str) -> None:
    measure = parse_measure(name)
    assert str(measure) == canonical
    assert parse_measure(str(measure)) == measure


def test_parsed_measure_is_callable() -> None:
    measure = parse_measure("RDQm2-a1@5")
    assert isinstance(measure, RDQ)
    assert measure(ORL({"a": 1, "b": 2}), ["a", "b"]) == 1.0
    assert isinstance(parse_measure("nDCG@3"), nDCG)


def test_every_registered_measure_parses() -> None:
    for name, cls in MEASURES.items():
        text = cls.pattern().replace("[@k]", "@5").replace("@k", "@5").replace("@r", "@0.5")
        parsed = parse_measure(text)
        assert str(parsed).split("(")[0].split("@")[0] in (name, "RDQm2-a1")
        assert parse_measure(str(parsed)) == parsed


@pytest.mark.parametrize(
    ("name", "canonical"),
    [("IPrec@0.5", "IPrec@0.5"), ("IPrec@1", "IPrec@1"), ("R@10", "R@10"),
     ("ERR(grade=tiers)@20", "ERR(grade=tiers)@20"), ("Bpref", "Bpref")],
)  # fmt: skip
def test_trec_eval_names_round_trip(name: str, canonical: str) -> None:
    assert str(parse_measure(name)) == canonical


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("Foo@5", "unknown measure"),
        ("nDGC@5", "did you mean nDCG"),
        ("RDQ", "needs a cutoff"),
        ("P", "needs a cutoff"),
        ("P@0", "cutoff must be an integer >= 1"),
        ("P@x", "cutoff must be an integer >= 1"),
        ("nDCG(grade=xx)@5", "must be one of auto, bi, ic, lc, native"),
        ("nDCG(depth=3)@5", "has no parameter 'depth'"),
        ("Rprec@5", "Rprec takes no cutoff"),
        ("NumRet@10", "NumRet takes no cutoff"),
        ("IPrec@1.5", "must lie in [0, 1]"),
        ("IPrec@x", "recall after @"),
        ("IPrec", "IPrec needs @recall"),
        ("ERR(grade=lc)@5", "must be one of auto, native, tiers"),
        ("RBP(p=1.5)@5", "must lie in (0, 1)"),
        ("RDQ(alpha=0)@5", "must be a positive number"),
        ("RDQ(penalty=nope)@5", "unknown penalty 'nope'"),
        ("RDQm1(alpha=2)@5", "apply to penalty m2 only"),
        ("RDQm2-a4(alpha=2)@5", "fixes alpha"),
        ("RDQ(weights=1;2)@5", "non-increasing"),
        ("RDQ(weights=tall)@5", "must be a preset"),
        ("nDCG(grade)@5", "not key=value"),
    ],
)
def test_bad_names_explain_themselves(name: str, fragment: str) -> None:
    with pytest.raises(UnknownMeasureError) as info:
        parse_measure(name)
    assert fragment in str(info.value)
    assert "Valid measures:" in str(info.value)


def test_several_bad_names_are_reported_together() -> None:
    with pytest.raises(UnknownMeasureError) as info:
        parse_measures(["Foo@5", "nDCG@10", "P@0", "Bar"])
    assert len(info.value.problems) == 3
    for name in ("'Foo@5'", "'P@0'", "'Bar'"):
        assert name in str(info.value)
    assert isinstance(info.value, ValueError)
