"""What the ``posterior`` planner buys, and whether it keeps the error control (docs/planning.md,
"Planning for `--tiering posterior`").

``python tests/benchmarks/bench_posterior_plan.py [SECTION ...]`` prints the figures:

* ``curve`` - design A (60 queries of 20 items, 2-5 true tiers, gap 1.0), 240 uniform
  judgments per query to start: uniform at 430, 620, 810, 1,000 and 1,190, planned in
  rounds of 40 to 920, seeds 0-19 (``heldout``: 20-39); the judgments per query planned
  rounds need to reach uniform's adjusted Rand at 1,000, and the wrong share of every
  planned round (about 100 s per 20 seeds and design at low load);
* ``quarter`` - the same with a quarter of each planned round spent uniformly (seeds 0-19);
* ``model`` - ``--tiering model`` on uniform data at the same budgets (seed 0, a build per point);
* ``equal`` - 100 all-equal queries of 20 items, 240 to start, 4 planned rounds of 40;
* ``careless`` - design A with a quarter of the judgments answered at random by a second
  annotator, 60 queries, 2 planned rounds of 60, seeds 0-7, fitted four ways (``--annotators
  equal`` or ``reliability``, ``--reg`` 1 or 10);
* ``stopping`` - settled queries after planned rounds, their tiers when the judgments double;
* ``speed`` - planning 5,000 queries of 20 items.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from orlbuild.builders.calibration.posterior_rounds import (
    PosteriorStudy,
    fit_queries,
    posterior_designs,
    simulate_start,
    stopping_check,
)
from orlbuild.builders.planning.posterior_pairs import UNIFORM_SHARE, posterior_pairs
from orlbuild.builders.tiering.posterior import fit_prior

SEEDS = range(20)


def _curves(share: float, seeds: range) -> dict[str, dict[int, list[float]]]:
    out: dict[str, dict[int, list[float]]] = {"uniform": {}, "planned": {}}
    wrong: list[float] = []
    for seed in seeds:
        began = time.perf_counter()
        uniform = PosteriorStudy(rounds=5, round_size=190, seed=seed)
        planned = PosteriorStudy(rounds=17, seed=seed, uniform_share=share)
        rows = posterior_designs(uniform, ["uniform"])
        for row in rows:
            print(f"seed {seed} uniform {row['judgments_per_query']}: ari {row['ari']:.3f} "
                  f"wrong {row['wrong_share']:.3f}", flush=True)  # fmt: skip
        rows += posterior_designs(planned, ["planned"])
        for row in rows:
            out[str(row["design"])].setdefault(int(row["judgments_per_query"]), []).append(
                float(row["ari"])
            )
            if row["design"] == "planned":
                wrong.append(float(row["wrong_share"]))
                print(
                    f"seed {seed} planned {row['judgments_per_query']}: ari {row['ari']:.3f} "
                    f"wrong {row['wrong_share']:.3f} predicted {row['predicted_share']:.3f} "
                    f"settled {row['settled']:.3f}",
                    flush=True,
                )
        print(f"seed {seed}: {time.perf_counter() - began:.0f} s", flush=True)
    mean = {d: {k: float(np.mean(v)) for k, v in c.items()} for d, c in out.items()}
    for design in ("uniform", "planned"):
        print(design, ", ".join(f"{b}: {a:.3f}" for b, a in sorted(mean[design].items())))
    target = mean["uniform"][1000]
    xs = sorted(mean["planned"])
    ys = [mean["planned"][x] for x in xs]
    reach = next((k for k in range(1, len(xs)) if ys[k] >= target), None)
    if reach is None:
        print(f"planned never reaches {target:.3f}")
    else:
        x0, x1, y0, y1 = xs[reach - 1], xs[reach], ys[reach - 1], ys[reach]
        needed = x0 + (target - y0) / (y1 - y0) * (x1 - x0) if y1 > y0 else x1
        print(f"uniform at 1000: {target:.3f}; planned reaches it at {needed:.0f} per query: "
              f"{1 - needed / 1000:.1%} fewer")  # fmt: skip
    print(f"planned wrong share: max {max(wrong):.3f} over every round and seed")
    return out


def _model() -> None:
    """``model`` on uniform design-A data at the same budgets, through the build."""
    import pandas as pd

    from orlbuild.builders.build import build_orls
    from orlbuild.builders.calibration.posterior_rounds import judge
    from orlbuild.builders.calibration.simulation import adjusted_rand_index
    from orlbuild.builders.parameters import BuildParameters
    from orlbuild.vocabulary import Disconnected, Source, TieringProcedure

    study = PosteriorStudy(seed=0)
    sim = simulate_start(study)
    rng = np.random.default_rng(99)
    n = study.items
    params = BuildParameters(
        source=Source.pairwise, tiering=TieringProcedure.model, disconnected=Disconnected.tiers
    )
    names = np.array([f"d{i:02d}" for i in range(n)], dtype=object)
    done = study.start
    for target in (240, 400, 600, 800, 1000):
        for q in range(study.queries):
            a = rng.integers(0, n, target - done)
            judge(sim, q, np.column_stack([a, (a + rng.integers(1, n, len(a))) % n]), rng)
        done = target
        rows = []
        for q in range(study.queries):
            w, lo = np.nonzero(np.rint(sim.wins[q]).astype(int))
            reps = np.rint(sim.wins[q][w, lo]).astype(int)
            rows.append(
                pd.DataFrame(
                    {"query": f"q{q:03d}", "annotator": "a", "winner": names[np.repeat(w, reps)],
                     "loser": names[np.repeat(lo, reps)], "tie": 0}
                )
            )  # fmt: skip
        _, outcome = build_orls(pd.concat(rows, ignore_index=True), params, on_error="skip")
        aris, stated, wrong = [], 0, 0
        for q in range(study.queries):
            ranks = outcome.orls[f"q{q:03d}"].ranks
            got = np.array([ranks[f"d{i:02d}"] for i in range(n)])
            true = sim.ranks[q]
            aris.append(adjusted_rand_index(true, got))
            above = got[:, None] < got[None, :]
            stated += int(above.sum())
            wrong += int((above & (true[:, None] >= true[None, :])).sum())
        print(f"model, uniform {target}: ari {np.mean(aris):.3f} wrong {wrong / stated:.3f}")


def main(sections: list[str]) -> None:
    if "curve" in sections:
        _curves(UNIFORM_SHARE, SEEDS)
    if "heldout" in sections:
        _curves(UNIFORM_SHARE, range(20, 40))
    if "quarter" in sections:
        _curves(0.25, SEEDS)
    if "model" in sections:
        _model()
    if "equal" in sections:
        study = PosteriorStudy(scenario="equal", queries=100, rounds=4)
        for row in posterior_designs(study, ["planned"]):
            print(f"equal planned {row['judgments_per_query']}: split {row['false_split']:.3f}")
    if "careless" in sections:
        fits_ = (("equal", 1.0), ("reliability", 1.0), ("reliability", 10.0), ("equal", 10.0))
        for annotators, reg in fits_:
            per_round: dict[int, list[tuple[float, float]]] = {}
            for seed in range(8):
                study = PosteriorStudy(queries=60, rounds=2, round_size=60, careless=0.25,
                                       annotators=annotators, reg=reg, seed=seed)  # fmt: skip
                for row in posterior_designs(study, ["planned"]):
                    per_round.setdefault(int(row["round"]), []).append(
                        (float(row["wrong_share"]), float(row["ari"])))  # fmt: skip
            for round_, pairs in sorted(per_round.items()):
                wrong, ari = np.array(pairs).T
                print(
                    f"careless {annotators} reg {reg:g} round {round_}: wrong mean "
                    f"{wrong.mean():.3f} max {wrong.max():.3f}, ari {ari.mean():.2f}"
                )
    if "stopping" in sections:
        for seed, rounds, items, gap in ((0, 3, 10, 1.5), (0, 6, 20, 1.0)):
            study = PosteriorStudy(rounds=rounds, seed=seed, items=items, gap=gap, queries=60)
            print(f"stopping seed {seed} items {items} rounds {rounds}:",
                  json.dumps(stopping_check(study)), flush=True)  # fmt: skip
    if "speed" in sections:
        study = PosteriorStudy(queries=5000, seed=0)
        sim = simulate_start(study)
        began = time.perf_counter()
        fits = fit_queries(sim.wins)
        print(f"fit 5000 queries: {time.perf_counter() - began:.1f} s")
        prior = fit_prior([(s, np.sqrt(np.clip(np.add.outer(np.diag(c), np.diag(c)) - 2 * c,
                                                0, None))) for s, c in fits[:500]])  # fmt: skip
        for per_query in (2, 40, 200):
            began = time.perf_counter()
            plans = posterior_pairs(fits, per_query * 5000, prior, rng=np.random.default_rng(0))
            seconds = time.perf_counter() - began
            total = sum(len(p.pairs) for p in plans)
            print(f"plan {total} pairs over 5000 queries of 20 items: {seconds:.1f} s")


if __name__ == "__main__":
    main(
        sys.argv[1:]
        or ["curve", "heldout", "quarter", "model", "equal", "careless", "stopping", "speed"]
    )
