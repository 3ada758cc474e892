"""Every ``--tiering`` on issue 32's designs, through ``build_orls`` (the build path).

* Design A: 60 queries of 20 items, 2-5 true tiers (sizes a uniform composition),
  log-strength gap 1.0, uniformly drawn pairs, 240 / 400 / 1,000 / 2,000 judgments
  per query;
* the mixed design: 2-25 items, 1-5 true tiers, gap 1.5, every pair 4 times;
* all-equal queries: 2-30 items, every pair 3 times.

Per procedure: mean adjusted Rand, the realised pooled share of wrong stated orders
(an order between truly equal items counts as wrong), the predicted share
``sum E / sum N`` of the build's posterior pass, the mean number of tiers and, for
all-equal queries, the share split. Run:
``python tests/benchmarks/bench_posterior_designs.py [--seeds 3] [--queries 60]``
(docs/tiers-and-audit.md, "Deciding tiers: `--tiering simultaneous|model|leader`").
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from orlbuild.builders import BuildParameters, build_orls
from orlbuild.builders.calibration.simulation import (
    CalibrationDesign,
    adjusted_rand_index,
    simulate_pairwise,
    simulated_queries,
    tiered_strengths,
    wrong_stated_orders,
)

TIERINGS = ("posterior", "simultaneous", "model", "leader")
BUDGETS = (240, 400, 1000, 2000)


def design_a(
    seed: int, queries: int, per_query: int, *, n: int = 20, gap: float = 1.0
) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Design A's judgments and true tiers (items ``d00..d19`` of each query)."""
    rng = np.random.default_rng([seed, per_query])
    frames, truth = [], {}
    for k in range(queries):
        parts = int(rng.integers(2, 6))
        cuts = np.sort(rng.choice(np.arange(1, n), parts - 1, replace=False))
        strengths, ranks = tiered_strengths(np.diff(np.r_[0, cuts, n]).tolist(), gap)
        query = f"a{k:03d}"
        frames.append(simulate_pairwise(rng, strengths, per_query, query=query))
        truth[query] = ranks
    return pd.concat(frames, ignore_index=True), truth


def measure(
    frame: pd.DataFrame, truth: dict[str, np.ndarray], tiering: str, **options: object
) -> dict[str, float]:
    """Build with ``tiering`` and measure it against ``truth``."""
    start = time.perf_counter()
    params = BuildParameters(source="pairwise", tiering=tiering, **options)  # type: ignore[arg-type]
    _, outcome = build_orls(frame, params, on_error="skip")
    seconds = time.perf_counter() - start
    built = {q: o.ranks for q, o in outcome.orls.items()}
    stated, wrong = wrong_stated_orders(built, truth)
    aris, splits = [], []
    for query, true in truth.items():
        got = np.array([built.get(query, {}).get(f"d{i:02d}", 1) for i in range(len(true))])
        aris.append(adjusted_rand_index(true, got))
        if len(np.unique(true)) == 1:
            splits.append(len(np.unique(got)) > 1)
    posteriors = [o.posterior for o in outcome.orls.values() if o.posterior is not None]
    expected = sum(p.expected_wrong for p in posteriors)
    predicted_n = sum(p.stated for p in posteriors)
    return {
        "ari": float(np.mean(aris)),
        "wrong": wrong / stated if stated else 0.0,
        "predicted": expected / predicted_n if predicted_n else 0.0,
        "stated": float(stated),
        "tiers": float(np.mean([len(o.tiers) for o in outcome.orls.values()])),
        "split": float(np.mean(splits)) if splits else float("nan"),
        "seconds": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--tierings", nargs="+", default=list(TIERINGS))
    parser.add_argument("--skip-a", action="store_true")
    args = parser.parse_args()
    rows = []
    if not args.skip_a:
        for budget in BUDGETS:
            for seed in range(args.seeds):
                frame, truth = design_a(seed, args.queries, budget)
                for tiering in args.tierings:
                    row = measure(frame, truth, tiering)
                    rows.append({"design": f"A{budget}", "seed": seed, "tiering": tiering, **row})
                    print(rows[-1], flush=True)
    for mixed, name in ((True, "mixed"), (False, "all-equal")):
        design = CalibrationDesign(
            items=(2, 25) if mixed else (2, 30),
            comparisons_per_pair=4 if mixed else 3,
            queries=200 if mixed else 500,
            gap=1.5,
            seed=0,
        )
        frame, truth = simulated_queries(design, mixed=mixed)
        for tiering in args.tierings:
            row = measure(frame, truth, tiering)
            rows.append({"design": name, "seed": 0, "tiering": tiering, **row})
            print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    summary = table.groupby(["design", "tiering"], sort=False).agg(
        ari=("ari", "mean"),
        wrong=("wrong", "mean"),
        wrong_max=("wrong", "max"),
        predicted=("predicted", "mean"),
        tiers=("tiers", "mean"),
        split=("split", "mean"),
        seconds=("seconds", "mean"),
    )
    print(summary.round(3).to_string())


if __name__ == "__main__":
    main()
