"""Benchmark: scoring.evaluate_run against pytrec_eval and ranx, measured in one process.

Run: ``python tests/benchmarks/bench_evaluate.py [--queries 5000 --docs 100 --judged 20]``
and ``python tests/benchmarks/bench_evaluate.py --memory`` for the 10,000 x 1,000 peak
memory check (run in a fresh process so ru_maxrss is this workload's).

Targets (issue: scoring core): on 5,000 queries x 100 documents (20 judged),
``evaluate_run`` with ``RDQm2-a1@10`` and ``nDCG@10`` takes no longer than
pytrec_eval computing ``ndcg_cut_10`` alone, and beats ranx's first call; at
10,000 x 1,000 its peak memory stays under 2 GB.
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from scoring import ORL, evaluate_run

MEASURES = ["RDQm2-a1@10", "nDCG@10"]


def make_data(n_queries: int, n_docs: int, n_judged: int, seed: int = 0) -> tuple[dict, dict]:
    """Graded qrels (``n_judged`` per query, grades 1-3) and a scored run of ``n_docs``."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    doc_ids = np.array([f"d{j}" for j in range(4 * n_docs)], dtype=object)
    for q in range(n_queries):
        docs = doc_ids[rng.choice(len(doc_ids), size=n_docs, replace=False)].tolist()
        judged = rng.choice(n_docs, size=n_judged, replace=False)
        grades = rng.integers(1, 4, size=n_judged)
        qrels[f"q{q}"] = {docs[j]: int(g) for j, g in zip(judged, grades, strict=True)}
        run[f"q{q}"] = dict(zip(docs, np.round(rng.random(n_docs), 3).tolist(), strict=True))
    return qrels, run


def timed(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """Best wall time of ``repeat`` calls, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def speed(n_queries: int, n_docs: int, n_judged: int) -> None:
    import pytrec_eval

    qrels, run = make_data(n_queries, n_docs, n_judged)
    orls = {q: ORL.from_grades(g) for q, g in qrels.items()}
    # The same run as ranked lists (trec_eval order) and as a table.
    ranked = {
        q: [d for d, _ in sorted(docs.items(), key=lambda x: (-x[1], x[0]), reverse=False)]
        for q, docs in run.items()
    }
    table = pd.DataFrame(
        [(q, d, s) for q, docs in run.items() for d, s in docs.items()],
        columns=["query", "item", "score"],
    )
    print(f"data: {n_queries} queries x {n_docs} docs, {n_judged} judged per query")

    t_trec, _ = timed(lambda: pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10"}).evaluate(run))
    t_lists, _ = timed(lambda: evaluate_run(orls, ranked, MEASURES).to_frame())
    t_table, _ = timed(lambda: evaluate_run(orls, table, MEASURES).to_frame())
    t_dict, _ = timed(lambda: evaluate_run(orls, run, MEASURES).to_frame())
    t_orls, _ = timed(lambda: {q: ORL.from_grades(g) for q, g in qrels.items()})
    print(f"pytrec_eval ndcg_cut_10 (evaluator + evaluate): {t_trec:8.3f} s")
    print(
        f"evaluate {MEASURES} from ranked lists:      {t_lists:8.3f} s  "
        f"ratio to pytrec_eval {t_lists / t_trec:.2f}"
    )
    print(
        f"evaluate {MEASURES} from a score table:     {t_table:8.3f} s  "
        f"ratio to pytrec_eval {t_table / t_trec:.2f}"
    )
    print(
        f"evaluate {MEASURES} from the same {{q: {{doc: score}}}} dict: {t_dict:8.3f} s  "
        f"ratio to pytrec_eval {t_dict / t_trec:.2f}"
    )
    print(
        f"building the ORLs from the qrels:                  {t_orls:8.3f} s  "
        f"(ratio with evaluate from lists {(t_orls + t_lists) / t_trec:.2f})"
    )

    try:
        from ranx import Qrels, Run
        from ranx import evaluate as ranx_evaluate
    except ImportError:
        print("ranx not installed (pip install .[bench]): skipped")
        return
    start = time.perf_counter()
    ranx_evaluate(Qrels(qrels), Run(run), "ndcg@10")
    t_ranx_first = time.perf_counter() - start
    t_ranx, _ = timed(lambda: ranx_evaluate(Qrels(qrels), Run(run), "ndcg@10"))
    print(
        f"ranx ndcg@10 first call (includes numba JIT):      {t_ranx_first:8.3f} s  "
        f"our ratio {t_lists / t_ranx_first:.2f}"
    )
    print(
        f"ranx ndcg@10 warm (Qrels + Run + evaluate):        {t_ranx:8.3f} s  "
        f"our ratio {t_lists / t_ranx:.2f}"
    )


def memory(n_queries: int = 10_000, n_docs: int = 1_000, n_judged: int = 20) -> None:
    """Peak RSS of building the data and evaluating it (run in a fresh process)."""
    qrels, run = make_data(n_queries, n_docs, n_judged)
    orls = {q: ORL.from_grades(g) for q, g in qrels.items()}
    ranked = {q: sorted(docs, key=lambda d: (-docs[d], d)) for q, docs in run.items()}
    del run
    gc.collect()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for measures in (MEASURES, [*MEASURES, "AP", "nDCG"]):  # the latter lays out all 1,000
        start = time.perf_counter()
        frame = evaluate_run(orls, ranked, measures).to_frame()
        elapsed = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"{n_queries} x {n_docs} {measures}: evaluate {elapsed:.2f} s, peak RSS "
            f"{peak:.0f} MB (inputs alone {before:.0f} MB), "
            f"means {frame.mean().round(4).to_dict()}"
        )
        if peak > 2048:
            sys.exit("peak memory above 2 GB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=5000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--judged", type=int, default=20)
    parser.add_argument("--memory", action="store_true", help="10,000 x 1,000 peak memory")
    args = parser.parse_args()
    if args.memory:
        memory()
    else:
        speed(args.queries, args.docs, args.judged)
