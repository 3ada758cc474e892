"""Parity with trec_eval through pytrec_eval on generated graded qrels and tied-score runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scoring import ORL, evaluate_run
from tests.trec_parity import assert_per_query_parity, generated_qrels_and_run

pytrec_eval = pytest.importorskip("pytrec_eval")

CUTOFFS = (1, 3, 5, 10, 20)


def _generate(seed: int, n_queries: int = 60) -> tuple[dict, dict]:
    """Graded qrels (grades 0-3, some zeros) and runs with many tied scores."""
    qrels, run = generated_qrels_and_run(
        np.random.default_rng(seed),
        [f"q{q}" for q in range(n_queries)],
        documents=300,
        largest_pool=60,
        grades=4,
        # Few distinct score values -> many ties, broken by docid descending.
        scores=lambda rng, n: rng.integers(0, 5, size=n).astype(float) / 2.0,
    )
    run.pop("q0")  # a query missing from the run
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_per_query_parity_with_trec_eval(seed: int) -> None:
    qrels, run = _generate(seed)
    trec_measures = {f"P_{k}" for k in CUTOFFS} | {f"map_cut_{k}" for k in CUTOFFS}
    trec_measures |= {f"ndcg_cut_{k}" for k in CUTOFFS} | {"recip_rank", "map"}
    expected = pytrec_eval.RelevanceEvaluator(qrels, trec_measures).evaluate(run)

    orls = {q: ORL.from_grades(g) for q, g in qrels.items()}
    frame = pd.DataFrame(
        [(q, d, s) for q, docs in run.items() for d, s in docs.items()],
        columns=["query", "item", "score"],
    )
    ours: dict[str, str] = {"RR": "recip_rank", "AP": "map"}
    for k in CUTOFFS:
        ours |= {
            f"P@{k}": f"P_{k}",
            f"AP@{k}": f"map_cut_{k}",
            f"nDCG(grade=native,gain=linear)@{k}": f"ndcg_cut_{k}",
        }
    got = evaluate_run(orls, frame, list(ours), missing="skip").to_frame()
    # pytrec_eval's own run shape {query: {doc: score}} gives the same frame.
    pd.testing.assert_frame_equal(
        got, evaluate_run(orls, run, list(ours), missing="skip").to_frame()
    )
    assert_per_query_parity(got, expected, ours, 1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_bare_ndcg_of_an_ungraded_orl_is_trec_eval_on_its_qrels_export(seed: int) -> None:
    """An ORL without native grades (pairwise, listwise) is exported as qrels with grade
    ``T - rank + 1``; trec_eval's ``ndcg_cut`` on that export is the bare ``nDCG@k``
    (docs/measures.md, "Baselines"), and ``-l N`` on it is ``rel=N``."""
    rng = np.random.default_rng(seed)
    orls, qrels, run = {}, {}, {}
    for q in range(30):
        items = [f"d{j}" for j in rng.choice(200, size=int(rng.integers(2, 25)), replace=False)]
        ranks = np.sort(rng.integers(1, 6, size=len(items)))
        tiers = [
            [i for i, r in zip(items, ranks, strict=True) if r == t] for t in sorted(set(ranks))
        ]
        orl = ORL.from_tiers(tiers)
        assert orl.grades is None
        orls[f"q{q}"] = orl
        qrels[f"q{q}"] = {i: orl.n_tiers - rank + 1 for i, rank in orl.items()}
        pool = items + [f"x{j}" for j in range(10)]
        shown = rng.permutation(pool)[: int(rng.integers(1, len(pool)))]
        run[f"q{q}"] = {
            d: float(s) for d, s in zip(shown, rng.permutation(len(shown)), strict=True)
        }
    names = {f"nDCG@{k}": f"ndcg_cut_{k}" for k in CUTOFFS} | {"AP(rel=2)": "map"}
    expected = pytrec_eval.RelevanceEvaluator(
        qrels, {"ndcg_cut." + ",".join(map(str, CUTOFFS))}
    ).evaluate(run)
    at_two = pytrec_eval.RelevanceEvaluator(qrels, {"map"}, relevance_level=2).evaluate(run)
    for query in expected:
        expected[query] |= at_two[query]
    got = evaluate_run(orls, run, list(names)).to_frame()
    assert_per_query_parity(got, expected, names, 1e-12)
