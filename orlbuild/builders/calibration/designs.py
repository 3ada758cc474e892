"""What planning buys: simulated designs at equal budgets, in rounds (docs/planning.md,
"Planning the next judgments").

Every design starts from the same judgments per query and adds the same number
in each of ``rounds`` rounds; only where they go differs:

* ``complete`` - every pair in turn (a round robin in a random order per query);
* ``uniform`` - uniformly drawn pairs;
* ``planned`` - :func:`~orlbuild.builders.planning.planner.plan_comparisons` on the
  build of the judgments so far (``budget_per_query * queries`` per round,
  allocated across queries by value). The planner serves the tiering it is
  measured with: the ``planned`` rows of each tiering come from rounds
  planned on that tiering's builds (for ``model``, its uncertain cuts and
  placements; docs/planning.md, "Planning for `--tiering model`").

Scenarios (outcomes drawn from Bradley-Terry, as :mod:`orlbuild.builders.calibration.simulation`):

* ``mixed`` - ``items`` items in 2-5 (``tiers``) true tiers ``gap`` apart,
  ``budget_per_query`` uniformly drawn comparisons to start;
* ``equal`` - the same with every item equal (any split is a false split);
* ``sparse`` - the crowdsourced-preference shape of ``tests/benchmarks/bench_tiering.py``:
  normal strengths, the first judgments drawn with probability proportional to
  ``w_a w_b`` (the best items compared far more often), ``start`` of them.

After each round every design is built with each tiering and measured: the
share of all-equal queries split (``equal``), mean adjusted Rand and Kendall
tau-b against the true tiers (``mixed``), the share of stated cross-tier
orders that are wrong (the true strength of the better-placed item is not
higher), the mean size of the top tier, and the share of queries settled
(by that tiering's stopping rule).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit

from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.build import build_orls
from orlbuild.builders.calibration.simulation import (
    adjusted_rand_index,
    random_composition,
    tiered_strengths,
    uniform_pairs,
)
from orlbuild.builders.parameter_specs import check_option_ranges
from orlbuild.builders.parameters import BuildParameters
from orlbuild.builders.planning.evidence import pairwise_evidence
from orlbuild.builders.planning.planner import REPEAT_LIMIT, plan_comparisons
from orlbuild.errors import ConfigError
from orlbuild.records import TieDecision
from orlbuild.vocabulary import (
    Disconnected,
    PlanDesign,
    PlanObjective,
    SimulatedScenario,
    Source,
    TieringProcedure,
    values,
)

__all__ = ["SCENARIOS", "DesignStudy", "compare_designs", "stopping_rule_check"]

#: A build as the planner sees it: judgments, resolved parameters, tiers, decisions.
Built = tuple[
    pd.DataFrame, BuildParameters, dict[str, list[list[str]]], dict[str, list[TieDecision]]
]

#: ``--scenario`` words (:class:`orlbuild.vocabulary.SimulatedScenario`).
SCENARIOS = values(SimulatedScenario)


@dataclass(frozen=True)
class DesignStudy:
    """What :func:`compare_designs` simulates.

    Attributes
    ----------
    scenario
        ``mixed``, ``equal`` or ``sparse``.
    items
        Items per query.
    tiers
        Inclusive range of true tiers (``mixed``).
    gap
        Log-strength gap between true tiers (``mixed``).
    queries
        Queries simulated.
    start
        Judgments per query before the first round (``sparse`` draws them
        concentrated on the best items; the others uniformly).
    budget_per_query
        Judgments added per query and round (the planned design allocates
        ``budget_per_query * queries`` across queries by value).
    rounds
        Rounds after the start.
    sig
        The builds' ``sig``.
    margin
        Equivalence margin of the planner, or ``None``.
    objective
        The planner's objective.
    max_per_query
        The planner's cap per query and round (``None``: allocation by value only).
    repeat_limit
        The planner's most asks of one pair per round.
    seed
        Seed of the simulation.
    """

    scenario: str = "mixed"
    items: int = 20
    tiers: tuple[int, int] = (2, 5)
    gap: float = 1.0
    queries: int = 100
    start: int = 60
    budget_per_query: int = 60
    rounds: int = 3
    sig: float = BuildParameters.sig
    margin: float | None = None
    objective: str = PlanObjective.tiers.value
    max_per_query: int | None = None
    repeat_limit: int = REPEAT_LIMIT
    seed: int = 0

    def __post_init__(self) -> None:
        if self.scenario not in SCENARIOS:
            raise ConfigError(f"--scenario must be {', '.join(SCENARIOS)}; got {self.scenario!r}")
        if self.items < 2 or self.queries < 1 or self.rounds < 0:
            raise ConfigError("--items must be >= 2, --queries >= 1 and --rounds >= 0")
        if self.budget_per_query < 1 or self.start < 1 or self.repeat_limit < 1:
            raise ConfigError("--budget-per-query, --start and --repeat-limit must be >= 1")
        if not 1 <= self.tiers[0] <= self.tiers[1] <= self.items:
            raise ConfigError("--tiers must be LOW-HIGH with 1 <= LOW <= HIGH <= items")
        # the build's rules (docs/pipeline.md, "Build parameters")
        check_option_ranges({"sig": self.sig, "margin": self.margin})


def _strengths(study: DesignStudy, rng: np.random.Generator) -> tuple[FloatArray, IntArray]:
    """True strengths and true tier ranks of one query."""
    n = study.items
    if study.scenario == "equal":
        return np.zeros(n), np.ones(n, dtype=np.int64)
    if study.scenario == "sparse":
        strengths = rng.normal(0.0, 1.0, n)
        ranks = np.empty(n, dtype=np.int64)
        ranks[np.argsort(-strengths)] = np.arange(1, n + 1)
        return strengths, ranks
    parts = int(rng.integers(study.tiers[0], study.tiers[1] + 1))
    return tiered_strengths(random_composition(rng, n, parts), study.gap)


def _judged(
    rng: np.random.Generator, query: str, strengths: FloatArray, a: IntArray, b: IntArray
) -> pd.DataFrame:
    a_wins = rng.random(len(a)) < expit(strengths[a] - strengths[b])
    names = np.array([f"d{i:02d}" for i in range(len(strengths))], dtype=object)
    return pd.DataFrame(
        {
            "query": query,
            "annotator": [f"a{k}" for k in rng.integers(0, 5, len(a))],
            "winner": names[np.where(a_wins, a, b)],
            "loser": names[np.where(a_wins, b, a)],
            "tie": 0,
        }
    )


def _start(
    study: DesignStudy, rng: np.random.Generator, query: str, strengths: FloatArray
) -> pd.DataFrame:
    n = len(strengths)
    if study.scenario == "sparse":
        first, second = np.triu_indices(n, 1)
        weight = np.exp(strengths)[first] * np.exp(strengths)[second]
        pick = rng.choice(len(first), size=study.start, p=weight / weight.sum())
        return _judged(rng, query, strengths, first[pick], second[pick])
    return _judged(rng, query, strengths, *uniform_pairs(rng, n, study.start))


def _wrong_orders(tiers: Sequence[Sequence[str]], strengths: FloatArray) -> tuple[int, int]:
    """Stated cross-tier orders, and how many of them are wrong."""
    rank = {item: k for k, tier in enumerate(tiers) for item in tier}
    names = sorted(rank)
    true = np.array([strengths[int(i[1:])] for i in names])
    placed = np.array([rank[i] for i in names])
    better = placed[:, None] < placed[None, :]
    wrong = better & (true[:, None] <= true[None, :])
    return int(better.sum()), int(wrong.sum())


def _measure(
    frame: pd.DataFrame,
    truth: dict[str, tuple[FloatArray, IntArray]],
    study: DesignStudy,
    tiering: str,
) -> tuple[dict[str, float], Built]:
    params = BuildParameters(
        source=Source.pairwise,
        sig=study.sig,
        tiering=TieringProcedure(tiering),
        disconnected=Disconnected.tiers,
        seed=0,
    )
    resolved, outcome = build_orls(frame, params, on_error="skip")
    tiers = {q: o.tiers for q, o in outcome.orls.items()}
    decisions = {q: o.decisions for q, o in outcome.orls.items()}
    aris, taus, splits, stated, wrong, top = [], [], [], 0, 0, []
    from scipy.stats import kendalltau

    for query, (strengths, ranks) in truth.items():
        built = tiers.get(query, [[f"d{i:02d}" for i in range(len(strengths))]])
        rank = {item: k for k, tier in enumerate(built, start=1) for item in tier}
        got = np.array([rank.get(f"d{i:02d}", 1) for i in range(len(strengths))])
        if study.scenario == "mixed":
            aris.append(adjusted_rand_index(ranks, got))
            single = len(np.unique(got)) == 1
            taus.append(0.0 if single else float(kendalltau(ranks, got).statistic))
        if study.scenario == "equal":
            splits.append(len(built) > 1)
        s, w = _wrong_orders(built, strengths)
        stated, wrong = stated + s, wrong + w
        top.append(len(built[0]))
    mean = lambda x: float(np.mean(x)) if x else float("nan")  # noqa: E731
    row = {
        "ari": mean(aris),
        "tau_b": mean(taus),
        "false_split": mean(splits),
        "wrong_orders": wrong / stated if stated else 0.0,
        "top_size": mean(top),
    }
    return row, (frame, resolved, tiers, decisions)


def _settled(built: Built, study: DesignStudy) -> dict[str, bool]:
    """Query -> whether the planner calls it settled on ``built`` (its tiering's rule)."""
    frame, params, tiers, decisions = built
    status = plan_comparisons(
        pairwise_evidence(frame, params, tiers, decisions)[0],
        0,
        margin=study.margin,
        objective=study.objective,
    )
    return {q: s.status == "settled" for q, s in status.queries.items()}


def compare_designs(
    study: DesignStudy,
    designs: Sequence[str] = tuple(values(PlanDesign)),
    tierings: Sequence[str] = (TieringProcedure.simultaneous.value, TieringProcedure.model.value),
) -> pd.DataFrame:
    """Run every design for ``study.rounds`` rounds and measure each round with each tiering.

    Returns
    -------
    pandas.DataFrame
        One row per (design, round, tiering): ``judgments_per_query``,
        ``ari``, ``tau_b``, ``false_split``, ``wrong_orders``, ``top_size``,
        ``settled`` (share of queries the planner calls settled; the first
        tiering's build), ``seconds``.
    """
    for name in designs:
        if name not in values(PlanDesign):
            raise ConfigError(f"--design must be {', '.join(values(PlanDesign))}; got {name!r}")
    for name in tierings:
        if name not in values(TieringProcedure):
            raise ConfigError(f"--tiering {name!r} is not valid")
    rng = np.random.default_rng([study.seed, 0x64657369])
    truth, starts = {}, []
    for k in range(study.queries):
        query = f"q{k:04d}"
        truth[query] = _strengths(study, rng)
        starts.append(_start(study, rng, query, truth[query][0]))
    start = pd.concat(starts, ignore_index=True)
    rows = []
    for design in designs:
        # the planned design follows one trajectory per tiering (planned for that tiering)
        groups = [[t] for t in tierings] if design == PlanDesign.planned.value else [tierings]
        for group in groups:
            rows += _trajectory(study, design, list(group), truth, start)
    order = {t: k for k, t in enumerate(tierings)}
    frame = pd.DataFrame(rows)
    if len(frame):  # rows by design, round, then tiering, whatever the trajectories
        frame["_t"] = frame["tiering"].map(order)
        frame["_d"] = frame["design"].map({d: k for k, d in enumerate(designs)})
        frame = frame.sort_values(["_d", "round", "_t"], kind="stable")
        frame = frame.drop(columns=["_t", "_d"]).reset_index(drop=True)
    return frame


def _trajectory(
    study: DesignStudy,
    design: str,
    tierings: list[str],
    truth: dict[str, tuple[FloatArray, IntArray]],
    start: pd.DataFrame,
) -> list[dict[str, object]]:
    """One design's rounds from the common start, measured with ``tierings`` (a planned design
    plans on the first tiering's builds)."""
    drng = np.random.default_rng([study.seed, 0x726F756E, values(PlanDesign).index(design)])
    frame = start
    every_pair = np.column_stack(np.triu_indices(study.items, 1))
    orders = {q: drng.permutation(every_pair) for q in truth}
    plan_from: Built | None = None
    rows: list[dict[str, object]] = []
    for round_ in range(study.rounds + 1):
        began = time.perf_counter()
        if plan_from is not None:
            more = _more(design, study, drng, truth, orders, round_, plan_from)
            frame = pd.concat([frame, more], ignore_index=True)
        measured = [_measure(frame, truth, study, t) for t in tierings]
        plan_from = measured[0][1]
        for tiering, (row, built) in zip(tierings, measured, strict=True):
            settled = np.mean(list(_settled(built, study).values()))
            rows.append(
                {
                    "design": design,
                    "round": round_,
                    "judgments_per_query": study.start + round_ * study.budget_per_query,
                    "tiering": tiering,
                    **row,
                    "settled": float(settled),
                    "seconds": time.perf_counter() - began,
                }
            )
    return rows


def _more(
    design: str,
    study: DesignStudy,
    rng: np.random.Generator,
    truth: dict[str, tuple[FloatArray, IntArray]],
    orders: dict[str, IntArray],
    round_: int,
    plan_from: Built,
) -> pd.DataFrame:
    """The judgments ``design`` adds in round ``round_``."""
    k = study.budget_per_query
    frames = []
    if design == PlanDesign.planned.value:
        frame, params, tiers, decisions = plan_from
        evidence, _ = pairwise_evidence(frame, params, tiers, decisions)
        plan = plan_comparisons(
            evidence,
            k * study.queries,
            max_per_query=study.max_per_query,
            repeat_limit=study.repeat_limit,
            seed=study.seed + round_,
            margin=study.margin,
            objective=study.objective,
        )
        by_query: dict[str, list[tuple[int, int]]] = {}
        for pair in plan.pairs:
            by_query.setdefault(pair.query, []).append((int(pair.item_a[1:]), int(pair.item_b[1:])))
        for query, pairs in sorted(by_query.items()):
            a, b = np.array(pairs).T
            frames.append(_judged(rng, query, truth[query][0], a, b))
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    for query, (strengths, _) in truth.items():
        if design == PlanDesign.uniform.value:
            a, b = uniform_pairs(rng, len(strengths), k)
        else:
            order = orders[query]
            idx = np.arange((round_ - 1) * k, round_ * k) % len(order)
            a, b = order[idx, 0], order[idx, 1]
        frames.append(_judged(rng, query, strengths, a, b))
    return pd.concat(frames, ignore_index=True)


def stopping_rule_check(
    study: DesignStudy,
    planned_rounds: int = 0,
    tiering: str = TieringProcedure.simultaneous.value,
) -> dict[str, float]:
    """Do settled queries keep their tiers when their judgments double?

    Simulates ``study`` (its ``start`` judgments per query, uniformly drawn
    pairs or the sparse design's), builds with ``tiering``, asks the
    planner which queries are settled, then adds as many fresh judgments again
    drawn the same way and rebuilds. With ``planned_rounds``, that many planned
    rounds of ``study.budget_per_query`` per query follow the start before the
    check, and doubling asks every pair judged so far once more (fresh
    outcomes): planned data doubled as it was collected.

    Returns
    -------
    dict
        ``queries``, ``settled`` (share), ``kept`` (share of settled queries
        whose tiers are identical after doubling; nan if none settled) and
        ``kept_open`` (the same share among open queries, for comparison).
    """
    rng = np.random.default_rng([study.seed, 0x73746F70])
    truth, first, second = {}, [], []
    for k in range(study.queries):
        query = f"q{k:04d}"
        truth[query] = _strengths(study, rng)
        first.append(_start(study, rng, query, truth[query][0]))
        second.append(_start(study, rng, query, truth[query][0]))
    frame = pd.concat(first, ignore_index=True)
    _, built = _measure(frame, truth, study, tiering)
    for round_ in range(1, planned_rounds + 1):
        more = _more(PlanDesign.planned.value, study, rng, truth, {}, round_, built)
        frame = pd.concat([frame, more], ignore_index=True)
        _, built = _measure(frame, truth, study, tiering)
    if planned_rounds:
        second = [_rejudged(rng, frame, truth)]
    tiers = built[2]
    status = _settled(built, study)
    doubled = pd.concat([frame, *second], ignore_index=True)
    _, (_, _, after, _) = _measure(doubled, truth, study, tiering)

    def same(query: str) -> bool:
        return [sorted(t) for t in tiers.get(query, [])] == [
            sorted(t) for t in after.get(query, [])
        ]

    settled = [q for q, s in status.items() if s]
    unsettled = [q for q, s in status.items() if not s]
    mean = lambda x: float(np.mean(x)) if x else float("nan")  # noqa: E731
    return {
        "queries": float(study.queries),
        "settled": len(settled) / study.queries,
        "kept": mean([same(q) for q in settled]),
        "kept_open": mean([same(q) for q in unsettled]),
    }


def _rejudged(
    rng: np.random.Generator, frame: pd.DataFrame, truth: dict[str, tuple[FloatArray, IntArray]]
) -> pd.DataFrame:
    """Every judged pair of ``frame`` asked once more, with fresh outcomes."""
    parts = []
    for query, block in frame.groupby("query", sort=True):
        a = block["winner"].str[1:].astype(int).to_numpy()
        b = block["loser"].str[1:].astype(int).to_numpy()
        parts.append(_judged(rng, str(query), truth[str(query)][0], a, b))
    return pd.concat(parts, ignore_index=True)
