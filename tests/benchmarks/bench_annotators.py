"""Careless annotators: what ``--annotators reliability`` recovers, and what it costs (issue 20).

Mixed queries (2-25 items, 1-5 true tiers, log-strength gap 1.5), every pair
compared 4 times, each comparison by one of 6 annotators drawn uniformly.
Scenarios: all careful; one annotator answers at random; two answer
reversed. For each, the adjusted Rand index between true and built tiers
with ``--annotators equal`` and ``reliability``, and the baseline "the same
data without the careless annotators" (``equal``). Targets: reliability
within 0.03 of the baseline with one random or two reversed annotators, and
no loss beyond 0.01 against ``equal`` when all are careful. The crowd-kit
peer (``NoisyBradleyTerry``, a Bradley-Terry model with a skill and a bias per worker) is run
on the two-reversed scenario pooled over queries and its recovered
reliability signs are printed next to ours.

Run: ``python tests/benchmarks/bench_annotators.py [--queries N] [--tiering T]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from orlbuild.builders import BuildParameters, build_orls
from orlbuild.builders.calibration.simulation import (
    random_composition,
    simulate_round_robin,
    tier_recovery,
    tiered_strengths,
)

N_ANNOTATORS = 6


def mixed_queries(queries: int, seed: int) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    frames, truth = [], {}
    for k in range(queries):
        n = int(rng.integers(2, 26))
        parts = int(rng.integers(1, min(5, n) + 1))
        strengths, ranks = tiered_strengths(random_composition(rng, n, parts), 1.5)
        query = f"m{k:04d}"
        frames.append(
            simulate_round_robin(rng, strengths, 4, query=query, n_annotators=N_ANNOTATORS)
        )
        truth[query] = ranks
    return pd.concat(frames, ignore_index=True), truth


def careless(frame: pd.DataFrame, *, random: int, reversed_: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    out = frame.copy()
    names = [f"a{k}" for k in range(random + reversed_)]
    flip = out["annotator"].isin(names[random:]).to_numpy()
    coin = out["annotator"].isin(names[:random]).to_numpy() & (rng.random(len(out)) < 0.5)
    swap = flip | coin
    out.loc[swap, ["winner", "loser"]] = out.loc[swap, ["loser", "winner"]].to_numpy()
    return out


def ari(
    frame: pd.DataFrame, truth: dict[str, np.ndarray], **options: object
) -> tuple[float, float]:
    start = time.perf_counter()
    _, outcome = build_orls(
        frame,
        BuildParameters(source="pairwise", **options),
        on_error="skip",  # type: ignore[arg-type]
    )
    seconds = time.perf_counter() - start
    return tier_recovery({q: o.ranks for q, o in outcome.orls.items()}, truth)[1], seconds


def crowd_kit_signs(frame: pd.DataFrame) -> dict[str, float]:
    from crowdkit.aggregation import NoisyBradleyTerry

    data = pd.DataFrame(
        {
            "worker": frame["annotator"],
            "left": frame["query"] + "/" + frame["winner"],
            "right": frame["query"] + "/" + frame["loser"],
            "label": frame["query"] + "/" + frame["winner"],
        }
    )
    model = NoisyBradleyTerry(n_iter=100, random_state=0).fit(data)
    return {str(k): float(v) for k, v in model.skills_.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--tiering", default="simultaneous")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    frame, truth = mixed_queries(args.queries, args.seed)
    scenarios = {
        "all careful": (0, 0),
        "one random": (1, 0),
        "two reversed": (0, 2),
    }
    rows = []
    for name, (random, reversed_) in scenarios.items():
        data = careless(frame, random=random, reversed_=reversed_, seed=args.seed + 1)
        left_out = [f"a{k}" for k in range(random + reversed_)]
        clean = data[~data["annotator"].isin(left_out)]
        equal, t_equal = ari(data, truth, tiering=args.tiering)
        reliable, t_rel = ari(data, truth, tiering=args.tiering, annotators="reliability")
        without, _ = ari(clean, truth, tiering=args.tiering)
        rows.append(
            {
                "scenario": name,
                "equal": round(equal, 3),
                "reliability": round(reliable, 3),
                "without them": round(without, 3),
                "reliability - without": round(reliable - without, 3),
                "reliability - equal": round(reliable - equal, 3),
                "s equal": round(t_equal, 1),
                "s reliability": round(t_rel, 1),
                "reliability / equal": round(t_rel / t_equal, 1),
            }
        )
    print(f"{args.queries} mixed queries, tiering {args.tiering}, 6 annotators (loaded machine)")
    print(pd.DataFrame(rows).to_string(index=False))
    reversed_data = careless(frame, random=0, reversed_=2, seed=args.seed + 1)
    start = time.perf_counter()
    skills = crowd_kit_signs(reversed_data)
    peer = time.perf_counter() - start
    params = BuildParameters(source="pairwise", annotators="reliability", tiering=args.tiering)
    _, outcome = build_orls(reversed_data, params, on_error="skip")
    ours = {r.annotator: round(r.reliability, 3) for r in outcome.reliabilities}
    print(
        f"crowd-kit NoisyBradleyTerry skills ({peer:.1f} s):",
        {k: round(v, 3) for k, v in skills.items()},
    )
    print("orlbuild reliabilities:", ours)


if __name__ == "__main__":
    main()
