"""Seeded Bradley-Terry simulations with known tiers, and the calibration of tierings.

``orlbuild calibrate`` and the tests use the same simulator (docs/tiers-and-audit.md, "How
tiers are decided and audited"):

* **all-equal queries**: ``n`` items (uniform in ``items``), every pair
  compared ``comparisons_per_pair`` times, all true strengths equal; any
  split is a false split;
* **mixed queries**: ``n`` items, ``T`` true tiers (uniform in ``tiers``,
  at most ``n``), tier sizes a uniformly drawn composition of ``n`` into
  ``T`` parts, log-strength ``-gap * (tier - 1)``; recovery is the adjusted
  Rand index between true and built tiers (every query) and Kendall's tau-b
  between true and built tier ranks (queries with several true tiers; a
  single built tier counts as 0).

Outcomes are drawn from Bradley-Terry, each comparison by one of
``n_annotators`` annotators drawn uniformly.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.stats import kendalltau

from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.build import build_orls
from orlbuild.builders.parameter_specs import check_option_ranges
from orlbuild.builders.parameters import TIERINGS, BuildParameters
from orlbuild.errors import ConfigError
from orlbuild.vocabulary import (
    Disconnected,
    Method,
    SimulatedMethod,
    Source,
    TieringProcedure,
    values,
)

__all__ = [
    "CALIBRATION_VARIANTS",
    "CalibrationDesign",
    "CalibrationVariant",
    "adjusted_rand_index",
    "calibrate_tierings",
    "random_composition",
    "simulate_pairwise",
    "simulate_round_robin",
    "simulated_queries",
    "tier_recovery",
    "tiered_strengths",
    "uniform_pairs",
    "wrong_stated_orders",
]


def tiered_strengths(tier_sizes: Sequence[int], gap: float) -> tuple[FloatArray, IntArray]:
    """True log-strengths (tier ``k`` has ``-gap * (k - 1)``) and true tier ranks (1 best)."""
    ranks = np.repeat(np.arange(1, len(tier_sizes) + 1), tier_sizes)
    return -gap * (ranks - 1).astype(np.float64), ranks.astype(np.int64)


def _frame(
    rng: np.random.Generator,
    strengths: FloatArray,
    first: IntArray,
    second: IntArray,
    query: str,
    n_annotators: int,
) -> pd.DataFrame:
    p_first = 1.0 / (1.0 + np.exp(strengths[second] - strengths[first]))
    first_wins = rng.random(len(first)) < p_first
    winners = np.where(first_wins, first, second)
    losers = np.where(first_wins, second, first)
    names = np.array([f"d{i:02d}" for i in range(len(strengths))], dtype=object)
    annotators = np.array([f"a{k}" for k in range(n_annotators)], dtype=object)
    return pd.DataFrame(
        {
            "query": query,
            "annotator": annotators[rng.integers(0, n_annotators, len(first))],
            "winner": names[winners],
            "loser": names[losers],
            "tie": 0,
        }
    )


def simulate_pairwise(
    rng: np.random.Generator,
    strengths: FloatArray,
    n_comparisons: int,
    *,
    query: str = "q",
    n_annotators: int = 3,
) -> pd.DataFrame:
    """``n_comparisons`` comparisons of uniformly drawn pairs, outcomes from Bradley-Terry.

    Items are named ``d00, d01, ...`` in the order of ``strengths``.
    """
    first, second = uniform_pairs(rng, len(strengths), n_comparisons)
    return _frame(rng, strengths, first, second, query, n_annotators)


def uniform_pairs(rng: np.random.Generator, n: int, k: int) -> tuple[IntArray, IntArray]:
    """``k`` pairs of distinct items drawn uniformly from ``n``: first and second indices."""
    first = rng.integers(0, n, k)
    return first, (first + rng.integers(1, n, k)) % n


def simulate_round_robin(
    rng: np.random.Generator,
    strengths: FloatArray,
    per_pair: int,
    *,
    query: str = "q",
    n_annotators: int = 5,
) -> pd.DataFrame:
    """Every pair of items compared ``per_pair`` times, outcomes from Bradley-Terry."""
    first, second = np.triu_indices(len(strengths), 1)
    return _frame(
        rng,
        strengths,
        np.repeat(first, per_pair),
        np.repeat(second, per_pair),
        query,
        n_annotators,
    )


def random_composition(rng: np.random.Generator, n: int, parts: int) -> list[int]:
    """A uniformly drawn composition of ``n`` into ``parts`` positive sizes."""
    cuts = np.sort(rng.choice(np.arange(1, n), size=parts - 1, replace=False))
    return np.diff(np.concatenate([[0], cuts, [n]])).tolist()


@dataclass(frozen=True)
class CalibrationDesign:
    """What ``orlbuild calibrate`` simulates.

    Attributes
    ----------
    method
        ``bt`` or ``rank-centrality`` (pairwise builds).
    items
        Inclusive range of items per query.
    comparisons_per_pair
        Comparisons of every pair of items.
    queries
        Queries of each simulation (all-equal and mixed).
    tiers
        Inclusive range of true tiers of a mixed query.
    gap
        Log-strength gap between adjacent true tiers.
    sig
        The build's ``sig``.
    seed
        Seed of the simulation (the builds use seed 0).
    bootstrap
        Bootstrap resamples (``rank-centrality``).
    """

    method: SimulatedMethod = SimulatedMethod.bt
    items: tuple[int, int] = (2, 30)
    comparisons_per_pair: int = 3
    queries: int = 200
    tiers: tuple[int, int] = (1, 5)
    gap: float = 1.5
    sig: float = BuildParameters.sig
    seed: int = 0
    bootstrap: int = BuildParameters.bootstrap

    def __post_init__(self) -> None:
        allowed = values(SimulatedMethod)
        if self.method not in allowed:
            raise ConfigError(f"--method must be {' or '.join(allowed)}, got {self.method!r}")
        object.__setattr__(self, "method", SimulatedMethod(self.method))  # the plain word too
        for name, (low, high), least in (("items", self.items, 2), ("tiers", self.tiers, 1)):
            if not least <= low <= high:
                raise ConfigError(f"--{name} must be a range LOW-HIGH with {least} <= LOW <= HIGH")
        if self.comparisons_per_pair < 1 or self.queries < 1:
            raise ConfigError("--comparisons-per-pair and --queries must be at least 1")
        check_option_ranges({"sig": self.sig, "bootstrap": self.bootstrap})  # the build's rules


def simulated_queries(
    design: CalibrationDesign, *, mixed: bool
) -> tuple[pd.DataFrame, dict[str, IntArray]]:
    """The all-equal (``mixed=False``) or mixed simulation of ``design``.

    Returns
    -------
    frame : pandas.DataFrame
        Pairwise comparisons (``query, annotator, winner, loser, tie``).
    truth : dict of str to numpy.ndarray
        Query -> true tier rank of items ``d00, d01, ...``.
    """
    rng = np.random.default_rng([design.seed, int(mixed)])
    frames, truth = [], {}
    low, high = design.items
    for k in range(design.queries):
        n = int(rng.integers(low, high + 1))
        if mixed:
            parts = int(rng.integers(design.tiers[0], min(design.tiers[1], n) + 1))
            strengths, ranks = tiered_strengths(random_composition(rng, n, parts), design.gap)
        else:
            strengths, ranks = np.zeros(n), np.ones(n, dtype=np.int64)
        query = f"{'m' if mixed else 'e'}{k:04d}"
        frames.append(
            simulate_round_robin(rng, strengths, design.comparisons_per_pair, query=query)
        )
        truth[query] = ranks
    return pd.concat(frames, ignore_index=True), truth


def adjusted_rand_index(first: npt.ArrayLike, second: npt.ArrayLike) -> float:
    """Adjusted Rand index of two labelings (Hubert & Arabie 1985).

    ``(index - expected) / (max - expected)`` over pairs of items, from the
    contingency table; two identical trivial partitions (one group each, or
    all singletons) score 1, as in scikit-learn.
    """
    _, a = np.unique(np.asarray(first), return_inverse=True)
    _, b = np.unique(np.asarray(second), return_inverse=True)
    table = np.zeros((a.max() + 1, b.max() + 1))
    np.add.at(table, (a, b), 1.0)

    def pairs(x: FloatArray) -> float:
        return float((x * (x - 1.0) / 2.0).sum())

    index = pairs(table)
    rows, cols = pairs(table.sum(axis=1)), pairs(table.sum(axis=0))
    total = len(a) * (len(a) - 1) / 2.0
    expected = rows * cols / total if total else 0.0
    maximum = (rows + cols) / 2.0
    if maximum == expected:
        return 1.0
    return float((index - expected) / (maximum - expected))


def wrong_stated_orders(
    built: dict[str, dict[str, int]], truth: dict[str, IntArray]
) -> tuple[int, int]:
    """``(stated, wrong)``: cross-tier orders the built tiers state, and those that are wrong.

    An order ``a`` above ``b`` (different built tiers) is wrong when ``a`` is
    not truly better (same true tier, or a worse one).
    """
    stated = wrong = 0
    for query, true in truth.items():
        ranks = built.get(query, {})
        got = np.array([ranks.get(f"d{i:02d}", 1) for i in range(len(true))])
        above = got[:, None] < got[None, :]
        stated += int(above.sum())
        wrong += int((above & (true[:, None] >= true[None, :])).sum())
    return stated, wrong


def tier_recovery(
    built: dict[str, dict[str, int]], truth: dict[str, IntArray]
) -> tuple[float, float, float]:
    """Share of split single-tier queries, mean adjusted Rand, mean Kendall tau-b.

    Parameters
    ----------
    built
        Query -> item -> built rank (a query that failed to build counts as one tier).
    truth
        Query -> true ranks of ``d00, d01, ...``.

    Returns
    -------
    false_split : float
        Among queries with one true tier, the share built with several (nan if none).
    ari : float
        Mean adjusted Rand index over every query.
    tau : float
        Mean Kendall tau-b over queries with several true tiers (nan if none);
        a single built tier counts as 0.
    """
    splits, aris, taus = [], [], []
    for query, true in truth.items():
        ranks = built.get(query, {})
        got = np.array([ranks.get(f"d{i:02d}", 1) for i in range(len(true))])
        aris.append(adjusted_rand_index(true, got))
        if len(np.unique(true)) == 1:
            splits.append(len(np.unique(got)) > 1)
        else:
            taus.append(0.0 if len(np.unique(got)) == 1 else kendalltau(true, got).statistic)
    mean = lambda x: float(np.mean(x)) if x else float("nan")  # noqa: E731
    return mean(splits), mean(aris), mean(taus)


class CalibrationVariant(TypedDict, total=False):
    """The build options a calibration variant sets (the rest are the design's)."""

    tiering: TieringProcedure
    step_down: bool
    backed: bool


#: What ``orlbuild calibrate --tiering`` accepts: every ``--tiering``,
#: ``single-step`` (``simultaneous`` without the step-down) to measure what the
#: step-down gains, and ``walk`` (``simultaneous`` without backed boundaries: the
#: max-t leader walk) to measure what backing every stated order costs.
CALIBRATION_VARIANTS: dict[str, CalibrationVariant] = {
    **{tiering.value: {"tiering": tiering} for tiering in TIERINGS},
    "single-step": {"tiering": TieringProcedure.simultaneous, "step_down": False},
    "walk": {"tiering": TieringProcedure.simultaneous, "backed": False},
}


def calibrate_tierings(
    design: CalibrationDesign, tierings: Sequence[str] = tuple(CALIBRATION_VARIANTS)
) -> pd.DataFrame:
    """Build both simulations with every tiering and measure them side by side.

    Returns
    -------
    pandas.DataFrame
        One row per tiering: ``tiering``, ``false_split`` (share of all-equal
        queries split) and its Monte Carlo standard error ``false_split_se``,
        ``ari`` and ``tau_b`` on the mixed queries (``mixed_false_split``:
        split share among mixed queries with one true tier), ``wrong_orders``
        (share of the cross-tier orders stated on the mixed queries that are
        wrong, :func:`wrong_stated_orders`) and ``stated_orders``, ``seconds``.
    """
    for name in tierings:
        if name not in CALIBRATION_VARIANTS:
            raise ConfigError(
                f"--tiering {name!r} is not valid; choose one of {', '.join(CALIBRATION_VARIANTS)}"
            )
    equal = simulated_queries(design, mixed=False)
    mixed = simulated_queries(design, mixed=True)
    rows = []
    for name in tierings:
        params = BuildParameters(
            source=Source.pairwise,
            method=Method(design.method),
            sig=design.sig,
            bootstrap=design.bootstrap,
            disconnected=Disconnected.tiers,
            **CALIBRATION_VARIANTS[name],
        )
        start = time.perf_counter()
        measured = []
        for frame, truth in (equal, mixed):
            _, outcome = build_orls(frame, params, on_error="skip")
            built = {q: o.ranks for q, o in outcome.orls.items()}
            measured.append(tier_recovery(built, truth))
        stated, wrong = wrong_stated_orders(built, mixed[1])
        rate = measured[0][0]
        rows.append(
            {
                "tiering": name,
                "false_split": rate,
                "false_split_se": float(np.sqrt(rate * (1.0 - rate) / design.queries)),
                "ari": measured[1][1],
                "tau_b": measured[1][2],
                "mixed_false_split": measured[1][0],
                "wrong_orders": wrong / stated if stated else float("nan"),
                "stated_orders": stated,
                "seconds": time.perf_counter() - start,
            }
        )
    return pd.DataFrame(rows)
