"""Designs at equal budgets under the ``posterior`` tiering, in rounds (docs/planning.md,
"Planning for `--tiering posterior`").

The simulation drives :mod:`orlbuild.builders.tiering.posterior` directly: each query's
judgments are a win-count matrix, fitted as a pairwise Bradley-Terry build fits it (ILSR with
the default regularisation ``DEFAULT_REG / n``, Fisher covariance), the empirical-Bayes prior
is fitted over all queries of the round, and every query is tiered with
:func:`~orlbuild.builders.tiering.posterior.posterior_tiers`. Designs, from a common start
of ``start`` uniformly drawn judgments per query, each adding ``round_size`` per query and
round:

* ``complete`` - every pair in turn (a round robin in a random order per query);
* ``uniform`` - uniformly drawn pairs;
* ``planned`` - :func:`~orlbuild.builders.planning.posterior_pairs.posterior_pairs` on the
  current fits and prior (``round_size * queries`` per round, allocated by value).

Scenarios: ``mixed`` (``items`` items in ``tiers`` true tiers ``gap`` apart, sizes a uniform
composition) and ``equal`` (every item equal: any split is false). With ``careless``, that
share of the judgments comes from a second annotator answering at random; with
``annotators="reliability"`` the fit is the build's ``--annotators reliability`` (Crowd-BT:
every annotator's reliability fitted jointly over all queries, then each query's strengths
and their Fisher covariance with the reliabilities profiled out).

Measured after every round: mean adjusted Rand against the true tiers, the pooled share of
stated orders that are wrong (the better-placed item is not truly better) and the share the
posterior predicts (``sum E / sum N``), the share of all-equal queries split, the share of
queries settled.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.stats import kendalltau

from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.calibration.simulation import (
    adjusted_rand_index,
    random_composition,
    tiered_strengths,
    uniform_pairs,
)
from orlbuild.builders.estimation.bradley_terry import (
    bradley_terry_information,
    bradley_terry_pairwise,
    regularisation_information,
)
from orlbuild.builders.estimation.crowd_bt import CrowdBTModel, fit_reliabilities
from orlbuild.builders.estimation.uncertainty import fisher_uncertainty
from orlbuild.builders.pairwise_data import PairwiseComparisons
from orlbuild.builders.parameter_specs import check_option_ranges
from orlbuild.builders.parameters import DEFAULT_REG
from orlbuild.builders.planning.posterior_pairs import UNIFORM_SHARE, posterior_pairs
from orlbuild.builders.tiering.posterior import (
    DEFAULT_FDR,
    PosteriorPrior,
    PosteriorTiers,
    fit_prior,
    posterior_tiers,
)
from orlbuild.errors import ConfigError
from orlbuild.vocabulary import AnnotatorWeighting, PlanDesign, values

__all__ = [
    "PosteriorStudy",
    "Simulated",
    "double_judgments",
    "fit_queries",
    "fit_study",
    "judge",
    "judgments_to_reach",
    "measure",
    "planning_savings",
    "posterior_designs",
    "simulate_start",
    "stopping_check",
    "tier_queries",
    "with_rounds",
]


@dataclass(frozen=True)
class PosteriorStudy:
    """What :func:`posterior_designs` simulates.

    Attributes
    ----------
    scenario
        ``mixed`` or ``equal``.
    items, tiers, gap
        Items per query, inclusive range of true tiers, log-strength gap (``mixed``).
    queries
        Queries simulated.
    start
        Uniformly drawn judgments per query before the first round.
    round_size
        Judgments per query added in each round (planned: ``round_size * queries`` by value).
    rounds
        Rounds after the start.
    fdr
        The tiering's bound on the expected share of wrong stated orders.
    uniform_share
        Share of each planned round spent on uniformly drawn pairs.
    careless
        Share of the judgments answered at random by one careless annotator.
    annotators
        ``equal`` (every judgment counts the same, the build's default) or ``reliability``
        (Crowd-BT, the build's ``--annotators reliability``).
    reg
        The build's ``--reg``.
    seed
        Seed of the simulation.
    """

    scenario: str = "mixed"
    items: int = 20
    tiers: tuple[int, int] = (2, 5)
    gap: float = 1.0
    queries: int = 60
    start: int = 240
    round_size: int = 40
    rounds: int = 5
    fdr: float = DEFAULT_FDR
    uniform_share: float = UNIFORM_SHARE
    careless: float = 0.0
    annotators: str = AnnotatorWeighting.equal.value
    reg: float = DEFAULT_REG
    seed: int = 0

    def __post_init__(self) -> None:
        if self.scenario not in ("mixed", "equal"):
            raise ConfigError(f"--scenario must be mixed or equal, got {self.scenario!r}")
        if self.items < 2 or self.queries < 1 or self.rounds < 0 or self.start < 1:
            raise ConfigError("--items must be >= 2, --queries and --start >= 1, --rounds >= 0")
        if self.round_size < 1:
            raise ConfigError("--budget-per-query must be >= 1")
        if not 1 <= self.tiers[0] <= self.tiers[1] <= self.items:
            raise ConfigError("--tiers must be LOW-HIGH with 1 <= LOW <= HIGH <= items")
        check_option_ranges({"fdr": self.fdr, "reg": self.reg})  # the build's rules
        if not 0.0 <= self.careless < 1.0:
            raise ConfigError(f"careless share must be in [0, 1), got {self.careless}")
        weightings = (AnnotatorWeighting.equal.value, AnnotatorWeighting.reliability.value)
        if self.annotators not in weightings:
            raise ConfigError(
                f"--annotators must be {' or '.join(weightings)}, got {self.annotators!r}"
            )
        if self.reg == 0.0:  # the posterior tiering's prior needs some regularisation
            raise ConfigError(f"--reg must be > 0 for the posterior tiering, got {self.reg}")


@dataclass
class Simulated:
    """The queries of a study: true strengths and tiers, and the judgments so far.

    Attributes
    ----------
    strengths, ranks
        ``(Q, n)`` true log-strengths and true tier ranks (1 best).
    wins
        ``(Q, n, n)``: ``wins[q, i, j]`` judgments of query ``q`` that ``i`` won against ``j``.
    careless_wins
        The part of ``wins`` that the careless annotator gave (zeros without one).
    """

    strengths: FloatArray
    ranks: IntArray
    wins: FloatArray
    careless_wins: FloatArray

    def copy(self) -> Simulated:
        """A copy whose judgments can grow independently."""
        return Simulated(self.strengths, self.ranks, self.wins.copy(), self.careless_wins.copy())


def _truth(study: PosteriorStudy, rng: np.random.Generator) -> tuple[FloatArray, IntArray]:
    n = study.items
    if study.scenario == "equal":
        return np.zeros(n), np.ones(n, dtype=np.int64)
    parts = int(rng.integers(study.tiers[0], study.tiers[1] + 1))
    return tiered_strengths(random_composition(rng, n, parts), study.gap)


def judge(
    sim: Simulated,
    query: int,
    pairs: IntArray,
    rng: np.random.Generator,
    careless: float = 0.0,
) -> None:
    """Add Bradley-Terry outcomes of ``pairs`` (``(m, 2)`` item indices) to query ``query``;
    a ``careless`` share of them is answered at random."""
    if not len(pairs):
        return
    a, b = pairs[:, 0], pairs[:, 1]
    s = sim.strengths[query]
    p = 1.0 / (1.0 + np.exp(s[b] - s[a]))
    at_random = rng.random(len(a)) < careless
    p = np.where(at_random, 0.5, p)
    a_wins = rng.random(len(a)) < p
    winners, losers = np.where(a_wins, a, b), np.where(a_wins, b, a)
    np.add.at(sim.wins[query], (winners, losers), 1.0)
    np.add.at(sim.careless_wins[query], (winners[at_random], losers[at_random]), 1.0)


def simulate_start(study: PosteriorStudy) -> Simulated:
    """True tiers and ``start`` uniformly drawn judgments per query (seeded by ``study.seed``)."""
    rng = np.random.default_rng([study.seed, 0x706F7374])
    truth = [_truth(study, rng) for _ in range(study.queries)]
    n = study.items
    sim = Simulated(
        np.stack([t[0] for t in truth]),
        np.stack([t[1] for t in truth]),
        np.zeros((study.queries, n, n)),
        np.zeros((study.queries, n, n)),
    )
    for q in range(study.queries):
        judge(sim, q, np.column_stack(uniform_pairs(rng, n, study.start)), rng, study.careless)
    return sim


def fit_queries(wins: FloatArray, reg: float = DEFAULT_REG) -> list[tuple[FloatArray, FloatArray]]:
    """Per query ``(scores, cov)``: the Bradley-Terry fit of a pairwise build (ILSR, the
    regularisation ``reg / n``, Fisher covariance of the centred scores)."""
    out = []
    n = wins.shape[1]
    alpha = reg / n
    for counts in wins:
        scores = bradley_terry_pairwise(counts, alpha=alpha)
        information = bradley_terry_information(scores, counts + counts.T)
        information += regularisation_information(scores, alpha=alpha, solver="ilsr")
        fit = fisher_uncertainty(scores, information)
        assert fit.cov is not None
        out.append((fit.scores, fit.cov))
    return out


def _annotated(sim: Simulated, query: int) -> PairwiseComparisons:
    """Query ``query``'s judgments one row each: annotator 0 careful, 1 careless."""
    n = sim.wins.shape[1]
    winners, losers, annotators = [], [], []
    for code, counts in enumerate(
        (sim.wins[query] - sim.careless_wins[query], sim.careless_wins[query])
    ):
        whole = np.rint(counts).astype(np.int64)
        i, j = np.nonzero(whole)
        winners.append(np.repeat(i, whole[i, j]))
        losers.append(np.repeat(j, whole[i, j]))
        annotators.append(np.full(int(whole.sum()), code, dtype=np.int64))
    w, lo, g = np.concatenate(winners), np.concatenate(losers), np.concatenate(annotators)
    return PairwiseComparisons(
        items=np.array([f"i{k:03d}" for k in range(n)], dtype=object),
        winners=w,
        losers=lo,
        units=np.arange(len(w), dtype=np.int64),
        annotators=g,
        annotator_names=np.array(["careful", "careless"], dtype=object),
    )


def fit_study(sim: Simulated, study: PosteriorStudy) -> list[tuple[FloatArray, FloatArray]]:
    """Per query ``(scores, cov)`` as the build fits them under ``study.annotators`` and
    ``study.reg``: :func:`fit_queries`, or Crowd-BT with the reliabilities fitted jointly
    over every query (the build's ``--annotators reliability``)."""
    if study.annotators != AnnotatorWeighting.reliability.value:
        return fit_queries(sim.wins, study.reg)
    queries = [(f"q{q}", _annotated(sim, q)) for q in range(len(sim.wins))]
    reliabilities = fit_reliabilities(queries, reg=study.reg)
    out = []
    for _, comparisons in queries:
        model = CrowdBTModel(comparisons, study.reg, reliabilities)
        scores = model.fit()
        fit = fisher_uncertainty(scores, model.information(scores))
        assert fit.cov is not None
        out.append((fit.scores, fit.cov))
    return out


def _se(cov: FloatArray) -> FloatArray:
    d = np.diag(cov)
    return np.sqrt(np.clip(d[:, None] + d[None, :] - 2.0 * cov, 0.0, None))


def tier_queries(
    fits: Sequence[tuple[FloatArray, FloatArray]], fdr: float
) -> tuple[PosteriorPrior, list[PosteriorTiers]]:
    """The empirical-Bayes prior over ``fits`` and every query's ``posterior`` tiering."""
    with_se = [(s, _se(c)) for s, c in fits]
    prior = fit_prior(with_se)
    return prior, [posterior_tiers(s, se, prior, fdr=fdr) for s, se in with_se]


def measure(sim: Simulated, tiered: Sequence[PosteriorTiers]) -> dict[str, float]:
    """Recovery and error of one round's tierings against the truth.

    Returns
    -------
    dict
        ``ari`` (mean adjusted Rand), ``wrong_share`` (pooled realised share of wrong stated
        orders; 0 when none is stated), ``predicted_share`` (pooled ``sum E / sum N``),
        ``stated`` (orders stated), ``false_split`` (share of queries with one true tier
        built with several; nan if none), ``tiers`` (mean built tiers), ``tau_b`` (mean
        Kendall tau-b over queries with several true tiers, a single built tier counting 0),
        ``top_size`` (mean size of the top tier).
    """
    stated = wrong = 0
    expected, aris, splits, counts, taus, top = 0.0, [], [], [], [], []
    for ranks, result in zip(sim.ranks, tiered, strict=True):
        top.append(int((result.tiers == 1).sum()))
        if len(np.unique(ranks)) > 1:
            single = len(np.unique(result.tiers)) == 1
            taus.append(0.0 if single else float(kendalltau(ranks, result.tiers).statistic))
        above = result.tiers[:, None] < result.tiers[None, :]
        stated += int(above.sum())
        wrong += int((above & (ranks[:, None] >= ranks[None, :])).sum())
        expected += result.expected_wrong
        aris.append(adjusted_rand_index(ranks, result.tiers))
        built = len(np.unique(result.tiers))
        counts.append(built)
        if len(np.unique(ranks)) == 1:
            splits.append(built > 1)
    return {
        "ari": float(np.mean(aris)),
        "wrong_share": wrong / stated if stated else 0.0,
        "predicted_share": expected / stated if stated else 0.0,
        "stated": float(stated),
        "false_split": float(np.mean(splits)) if splits else float("nan"),
        "tiers": float(np.mean(counts)),
        "tau_b": float(np.mean(taus)) if taus else float("nan"),
        "top_size": float(np.mean(top)),
    }


def _comparisons(wins: FloatArray) -> list[IntArray]:
    return [np.rint((w + w.T).sum(axis=1)).astype(np.int64) for w in wins]


def _add_round(
    design: str,
    study: PosteriorStudy,
    sim: Simulated,
    fits: Sequence[tuple[FloatArray, FloatArray]],
    prior: PosteriorPrior,
    tiered: Sequence[PosteriorTiers],
    rng: np.random.Generator,
    orders: list[IntArray],
    round_: int,
) -> None:
    k, n = study.round_size, study.items
    if design == PlanDesign.planned.value:
        plans = posterior_pairs(
            fits,
            k * study.queries,
            prior,
            rng=rng,
            comparisons=_comparisons(sim.wins),
            tiers=[t.tiers for t in tiered],
            uniform_share=study.uniform_share,
        )
        for q, plan in enumerate(plans):
            judge(sim, q, plan.pairs, rng, study.careless)
        return
    for q in range(study.queries):
        if design == PlanDesign.uniform.value:
            pairs = np.column_stack(uniform_pairs(rng, n, k))
        else:
            idx = np.arange((round_ - 1) * k, round_ * k) % len(orders[q])
            pairs = orders[q][idx]
        judge(sim, q, pairs, rng, study.careless)


def _settled(
    fits: Sequence[tuple[FloatArray, FloatArray]],
    prior: PosteriorPrior,
    wins: FloatArray,
    tiered: Sequence[PosteriorTiers],
) -> list[bool]:
    plans = posterior_pairs(
        fits,
        0,
        prior,
        rng=np.random.default_rng(0),
        comparisons=_comparisons(wins),
        tiers=[t.tiers for t in tiered],
    )
    return [p.settled for p in plans]


def posterior_designs(
    study: PosteriorStudy,
    designs: Sequence[str] = (PlanDesign.uniform.value, PlanDesign.planned.value),
) -> list[dict[str, float | str]]:
    """Every design for ``study.rounds`` rounds from a common start, measured after each.

    Returns
    -------
    list of dict
        One row per (design, round): ``design``, ``round``, ``judgments_per_query``,
        the fields of :func:`measure`, ``settled`` (share of queries), ``lam``, ``tau``
        (the round's prior) and ``seconds``.
    """
    for name in designs:
        if name not in values(PlanDesign):
            raise ConfigError(f"--design must be {', '.join(values(PlanDesign))}; got {name!r}")
    start = simulate_start(study)
    rows: list[dict[str, float | str]] = []
    for design in designs:
        rng = np.random.default_rng([study.seed, 0x726F756E, values(PlanDesign).index(design)])
        every = np.column_stack(np.triu_indices(study.items, 1))
        orders = [rng.permutation(every) for _ in range(study.queries)]
        sim = start.copy()
        fits = fit_study(sim, study)
        prior, tiered = tier_queries(fits, study.fdr)
        for round_ in range(study.rounds + 1):
            began = time.perf_counter()
            if round_:
                _add_round(design, study, sim, fits, prior, tiered, rng, orders, round_)
                fits = fit_study(sim, study)
                prior, tiered = tier_queries(fits, study.fdr)
            settled = _settled(fits, prior, sim.wins, tiered)
            rows.append(
                {
                    "design": design,
                    "round": round_,
                    "judgments_per_query": study.start + round_ * study.round_size,
                    **measure(sim, tiered),
                    "settled": float(np.mean(settled)),
                    "lam": prior.lam,
                    "tau": prior.tau,
                    "seconds": time.perf_counter() - began,
                }
            )
    return rows


def double_judgments(sim: Simulated, rng: np.random.Generator) -> Simulated:
    """Every judged pair asked once more (as often as it was judged), with fresh outcomes."""
    out = sim.copy()
    for q in range(len(sim.wins)):
        asked = np.rint(np.triu(sim.wins[q] + sim.wins[q].T, 1)).astype(np.int64)
        i, j = np.nonzero(asked)
        pairs = np.repeat(np.column_stack([i, j]), asked[i, j], axis=0)
        judge(out, q, pairs, rng)
    return out


def stopping_check(study: PosteriorStudy, design: str = "planned") -> dict[str, float]:
    """Do settled queries keep their ``posterior`` tiers when their judgments double?

    Runs ``design`` for ``study.rounds`` rounds, marks the queries settled, asks every judged
    pair once more (fresh outcomes; the careless share is not repeated) and tiers again with
    a refitted prior.

    Returns
    -------
    dict
        ``settled`` (share), ``kept`` (share of settled queries whose tiers are identical after
        doubling; nan if none settled), ``kept_open`` (the same among open queries),
        ``settled_count``.
    """
    sim = simulate_start(study)
    rng = np.random.default_rng([study.seed, 0x73746F70])
    every = np.column_stack(np.triu_indices(study.items, 1))
    orders = [rng.permutation(every) for _ in range(study.queries)]
    fits = fit_study(sim, study)
    prior, tiered = tier_queries(fits, study.fdr)
    for round_ in range(1, study.rounds + 1):
        _add_round(design, study, sim, fits, prior, tiered, rng, orders, round_)
        fits = fit_study(sim, study)
        prior, tiered = tier_queries(fits, study.fdr)
    settled = np.array(_settled(fits, prior, sim.wins, tiered))
    doubled = double_judgments(sim, rng)
    _, after = tier_queries(fit_study(doubled, study), study.fdr)
    same = np.array([np.array_equal(a.tiers, b.tiers) for a, b in zip(tiered, after, strict=True)])
    mean = lambda x: float(np.mean(x)) if len(x) else float("nan")  # noqa: E731
    return {
        "settled": float(settled.mean()),
        "settled_count": float(settled.sum()),
        "kept": mean(same[settled]),
        "kept_open": mean(same[~settled]),
    }


def with_rounds(study: PosteriorStudy, rounds: int) -> PosteriorStudy:
    """``study`` with another number of rounds."""
    return replace(study, rounds=rounds)


def judgments_to_reach(curve: Sequence[tuple[float, float]], target: float) -> float:
    """Judgments per query at which a curve ``(judgments, ari)`` first reaches ``target``,
    interpolated linearly between rounds; nan when it never does."""
    points = sorted(curve)
    if points and points[0][1] >= target:
        return points[0][0]
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if y1 >= target:
            return x0 + (target - y0) / (y1 - y0) * (x1 - x0) if y1 > y0 else x1
    return float("nan")


def planning_savings(
    seeds: Sequence[int], study: PosteriorStudy | None = None, *, reference: int = 1000
) -> dict[str, float]:
    """Fewer judgments planned rounds need to reach uniform pairs' adjusted Rand at
    ``reference`` judgments per query, on the curves averaged over ``seeds``.

    ``study`` (default: design A) sets the planned rounds (``start``, ``round_size``,
    ``rounds``, ``uniform_share``); uniform pairs run from the same start to ``reference``.

    Returns
    -------
    dict
        ``target`` (uniform's mean adjusted Rand at ``reference``), ``needed`` (judgments
        per query at which the planned mean curve reaches it, nan if it does not),
        ``savings`` (``1 - needed / reference``), ``wrong_share`` (the largest over rounds of
        the realised wrong share averaged over seeds) and ``worst_wrong_share`` (the largest of
        any round and seed), the start included.
    """
    study = study or PosteriorStudy(rounds=19)
    targets, curves, wrong = [], [], []
    for seed in seeds:
        this = replace(study, seed=seed)
        uniform = replace(this, rounds=1, round_size=reference - study.start)
        targets.append(float(posterior_designs(uniform, [PlanDesign.uniform.value])[-1]["ari"]))
        rows = posterior_designs(this, [PlanDesign.planned.value])
        curves.append([float(r["ari"]) for r in rows])
        wrong.append([float(r["wrong_share"]) for r in rows])
    budgets = [study.start + k * study.round_size for k in range(study.rounds + 1)]
    target = float(np.mean(targets))
    needed = judgments_to_reach(list(zip(budgets, np.mean(curves, axis=0), strict=True)), target)
    return {
        "target": target,
        "needed": needed,
        "savings": 1.0 - needed / reference,
        "wrong_share": float(np.max(np.mean(wrong, axis=0))),
        "worst_wrong_share": float(np.max(wrong)),
    }
