"""Verdicts under the reference's own uncertainty.

See docs/comparing-systems.md, "Comparing many systems".

An ORL built from judgments is an estimate. :func:`reference_verdicts`
rebuilds the ORLs on ``B`` annotator-bootstrap resamples of the judgments
(annotators drawn with replacement, each copy kept as its own annotator),
rescores every system against each rebuilt reference, reruns the comparison,
and reports for every verdict of the original comparison the share of
resamples under which it holds:

* a pair's verdict: significant in the same direction, or not significant;
* a system's tier (the same tier number);
* a system's rank interval (the same ``[rank_lo, rank_hi]``).

The rebuilds run on the executor, one task per resample, so ``--jobs`` and
Dask apply (and the result does not depend on them). A resample is the
multiset of annotators drawn: the copies are named in sorted order, so two
draws of the same multiset give the same judgments, and each distinct
multiset is rebuilt once and counted as often as it was drawn (with six
annotators, 200 draws hold about 140 distinct multisets).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from orlbuild.builders.build import build_orls
from orlbuild.builders.parameters import BuildParameters
from orlbuild.errors import ConfigError
from orlbuild.executor import Executor, map_ordered
from scoring import ORL
from scoring.evaluation import evaluate_runs
from scoring.settings import TestSettings
from scoring.statistics import score_panels, system_comparison
from scoring.vocabulary import SignificanceTest

__all__ = [
    "HOLD_THRESHOLD",
    "ReferenceVerdicts",
    "annotator_resample",
    "reference_verdicts",
]

#: Verdicts holding under fewer than this share of resamples are flagged.
HOLD_THRESHOLD = 0.95
KEY_PAIRS = ["measure", "a", "b"]
KEY_SYSTEMS = ["measure", "system"]


@dataclass(frozen=True)
class ReferenceVerdicts:
    """The original verdicts and the share of reference resamples that keep each.

    Attributes
    ----------
    pairs
        One row per (measure, pair): the comparison's columns plus ``holds``
        (share of resamples with the same verdict) and ``fragile`` (``holds``
        below :data:`HOLD_THRESHOLD`).
    systems
        One row per (measure, system): tier, letters, ``rank_lo``, ``rank_hi``,
        ``tier_holds``, ``interval_holds`` and ``fragile``.
    resamples
        Rebuilds that produced an ORL for every query scored.
    """

    pairs: pd.DataFrame
    systems: pd.DataFrame
    resamples: int


def _annotators(frame: pd.DataFrame) -> npt.NDArray[np.object_]:
    """The judgments' annotators, sorted.

    Raises
    ------
    ConfigError
        When the judgments have no ``annotator`` column.
    """
    if "annotator" not in frame.columns:
        raise ConfigError("reference resampling needs judgments with an annotator column")
    return np.asarray(sorted(frame["annotator"].astype(str).unique()), dtype=object)


def _draw(annotators: npt.NDArray[np.object_], rng: np.random.Generator) -> tuple[str, ...]:
    """As many annotators as there are, drawn with replacement, in sorted order."""
    return tuple(sorted(rng.choice(annotators, size=annotators.size, replace=True).tolist()))


def _annotator_rows(frame: pd.DataFrame) -> dict[str, npt.NDArray[np.intp]]:
    """Each annotator's row positions in ``frame``, in row order (grouped once per frame)."""
    groups = frame.groupby(frame["annotator"].astype(str), sort=False).indices
    return {str(name): np.asarray(rows, dtype=np.intp) for name, rows in groups.items()}


def _drawn_judgments(
    frame: pd.DataFrame,
    drawn: Sequence[str],
    rows: Mapping[str, npt.NDArray[np.intp]] | None = None,
) -> pd.DataFrame:
    """The judgments of every drawn annotator, the ``i``-th draw renamed ``NAME#i``.

    The rows of every draw, draw after draw, each in ``frame``'s order, taken
    in one pass; ``rows`` is :func:`_annotator_rows` of ``frame`` (computed
    when not given), so the resamples of one frame group it once.
    """
    if rows is None:
        rows = _annotator_rows(frame)
    parts = [rows[name] for name in drawn]
    names = [f"{name}#{i}" for i, name in enumerate(drawn)]
    taken = frame.take(np.concatenate(parts)).reset_index(drop=True)
    renamed = np.repeat(np.asarray(names, dtype=object), [len(part) for part in parts])
    return taken.assign(annotator=pd.Series(renamed, index=taken.index))


def annotator_resample(frame: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Judgments of annotators drawn with replacement; the ``i``-th draw is renamed ``NAME#i``.

    The draws are taken in sorted order, so the judgments depend only on how
    often each annotator was drawn.

    Raises
    ------
    ConfigError
        When the judgments have no ``annotator`` column.
    """
    return _drawn_judgments(frame, _draw(_annotators(frame), rng))


def _orls(outcome_orls: Mapping[str, Any]) -> dict[str, ORL]:
    return {q: ORL(o.ranks, grades=o.native_grades) for q, o in outcome_orls.items()}


def _verdicts(
    orls: Mapping[str, ORL],
    runs: Mapping[str, pd.DataFrame],
    measures: Sequence[str],
    settings: TestSettings,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    results = evaluate_runs(orls, list(runs.values()), measures)
    per_system = {name: r.per_query for name, r in zip(runs, results, strict=True)}
    comparison = system_comparison(score_panels(per_system, measures), settings)
    return comparison.pairs, comparison.tiers()


def _direction(pairs: pd.DataFrame) -> pd.Series:
    """+1 / -1 for a significant pair (by the sign of the difference), 0 otherwise."""
    sign = np.sign(pairs["diff"].to_numpy(dtype=float))
    return pd.Series(np.where(pairs["significant"].to_numpy(dtype=bool), sign, 0.0))


def _resample_verdicts(
    setup: _Setup, drawn: tuple[str, ...]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]] | None:
    """One rebuilt reference: which pair verdicts, tiers and rank intervals it keeps."""
    frame = _drawn_judgments(setup.judgments, drawn, setup.annotator_rows)
    _, rebuilt = build_orls(frame, setup.params, on_error="skip")
    orls = _orls(rebuilt.orls)
    if set(orls) != set(setup.queries):
        return None  # a query lost its ORL: this resample cannot judge the same verdicts
    pairs, systems = _verdicts(orls, setup.runs, setup.measures, setup.options)
    # The original's rows in the resample's verdicts (what a left merge on the keys
    # lined up; a verdict the resample lacks keeps nothing).
    pair_rows = _rows_of(setup.pairs, pairs, KEY_PAIRS)
    system_rows = _rows_of(setup.systems, systems, KEY_SYSTEMS)
    same_pair = _same(_direction(pairs).to_numpy(), _direction(setup.pairs).to_numpy(), pair_rows)
    same_tier = _same(systems["tier"].to_numpy(), setup.systems["tier"].to_numpy(), system_rows)
    same_interval = _same(
        systems["rank_lo"].to_numpy(), setup.systems["rank_lo"].to_numpy(), system_rows
    ) & _same(systems["rank_hi"].to_numpy(), setup.systems["rank_hi"].to_numpy(), system_rows)
    return same_pair.astype(float), same_tier.astype(float), same_interval.astype(float)


def _rows_of(keys: pd.DataFrame, frame: pd.DataFrame, on: Sequence[str]) -> npt.NDArray[np.intp]:
    """The row of ``frame`` with each row's ``on`` values of ``keys`` (-1 when it has none).

    Raises
    ------
    ValueError
        When ``frame`` repeats a key (a merge would have repeated the row).
    """
    where: dict[tuple[Any, ...], int] = {}
    for row, key in enumerate(zip(*(frame[c].tolist() for c in on), strict=True)):
        if where.setdefault(key, row) != row:
            raise ValueError(f"verdicts repeat the key {key!r}")
    wanted = zip(*(keys[c].tolist() for c in on), strict=True)
    return np.fromiter((where.get(key, -1) for key in wanted), dtype=np.intp, count=len(keys))


def _same(
    resampled: npt.NDArray[Any], original: npt.NDArray[Any], rows: npt.NDArray[np.intp]
) -> npt.NDArray[np.bool_]:
    """``resampled[rows] == original``, false where ``rows`` is -1."""
    found = rows >= 0
    same = np.zeros(len(rows), dtype=bool)
    same[found] = resampled[rows[found]] == original[found]
    return same


@dataclass(frozen=True)
class _Setup:
    """What every resample task needs (pickled once per chunk of tasks)."""

    judgments: pd.DataFrame
    params: BuildParameters
    runs: Mapping[str, pd.DataFrame]
    measures: Sequence[str]
    options: TestSettings
    seed: int
    queries: frozenset[str]
    pairs: pd.DataFrame
    systems: pd.DataFrame
    annotator_rows: Mapping[str, npt.NDArray[np.intp]]


def reference_verdicts(
    judgments: pd.DataFrame,
    params: BuildParameters,
    runs: Mapping[str, pd.DataFrame],
    measures: Sequence[str],
    *,
    resamples: int = 200,
    seed: int = 0,
    alpha: float = 0.05,
    test: str | None = None,
    permutations: int = 1000,
    executor: Executor | None = None,
    advance: Callable[[int], None] | None = None,
) -> ReferenceVerdicts:
    """Share of annotator-bootstrap references under which each verdict holds.

    Parameters
    ----------
    judgments
        The build's judgments (with ``annotator``), as :func:`build_orls` takes them.
    params
        The build's parameters; every rebuild uses them (and the same seed).
    runs
        System -> run table (``query, item, score``).
    measures
        Measure names.
    resamples
        ``B``, the number of rebuilt references.
    seed
        Seed of the annotator draws (resample ``b`` draws from ``(seed, b)``;
        draws of the same multiset of annotators are rebuilt once) and of the
        comparisons.
    alpha, test, permutations
        The comparison (:func:`scoring.statistics.system_comparison`).
    executor
        Where the rebuilds run (``--jobs``, Dask): one task per distinct
        resample, so the result does not depend on it.
    advance
        Called with the number of resamples each finished rebuild stands for
        (progress; they add up to ``resamples``).

    Returns
    -------
    ReferenceVerdicts

    Raises
    ------
    ConfigError
        Without annotators, with ``resamples < 1``, or when no rebuild succeeds.
    """
    if resamples < 1:
        raise ConfigError(f"--reference-resamples must be at least 1, got {resamples}")
    options = TestSettings(
        test=None if test is None else SignificanceTest(test),
        permutations=permutations,
        alpha=alpha,
        seed=seed,
    )
    annotators = _annotators(judgments)
    draws = Counter(
        _draw(annotators, np.random.default_rng([seed, index])) for index in range(resamples)
    )
    distinct = list(draws)  # first drawn first
    resolved, outcome = build_orls(judgments, params)
    pairs, systems = _verdicts(_orls(outcome.orls), runs, measures, options)
    setup = _Setup(
        judgments, resolved, dict(runs), list(measures), options, seed,
        frozenset(outcome.orls), pairs, systems, _annotator_rows(judgments),
    )  # fmt: skip
    pair_hits = np.zeros(len(pairs))
    tier_hits = np.zeros(len(systems))
    interval_hits = np.zeros(len(systems))
    done = 0
    results = map_ordered(
        partial(_resample_verdicts, setup), distinct, executor=executor, chunk_size=1
    )
    for drawn, result in zip(distinct, results, strict=True):
        weight = draws[drawn]
        if advance is not None:
            advance(weight)
        if result is None:
            continue
        pair_hits += weight * result[0]
        tier_hits += weight * result[1]
        interval_hits += weight * result[2]
        done += weight
    if done == 0:
        raise ConfigError("no reference resample rebuilt an ORL for every query")
    pairs = pairs.assign(holds=pair_hits / done)
    pairs = pairs.assign(fragile=pairs["holds"] < HOLD_THRESHOLD)
    systems = systems.assign(tier_holds=tier_hits / done, interval_holds=interval_hits / done)
    fragile = (systems["tier_holds"] < HOLD_THRESHOLD) | (
        systems["interval_holds"] < HOLD_THRESHOLD
    )
    return ReferenceVerdicts(pairs=pairs, systems=systems.assign(fragile=fragile), resamples=done)


def reference_verdicts_for_build(
    engine: Any,
    build: str | int,
    systems: Sequence[str],
    measures: Sequence[str],
    **options: Any,
) -> ReferenceVerdicts:
    """:func:`reference_verdicts` of a stored build: its judgments, parameters and the
    systems' stored runs (``options`` as there)."""
    from orlbuild.store.builds import get_build, load_build_judgments
    from orlbuild.store.read import load_run

    record = get_build(engine, build)
    judgments = load_build_judgments(engine, record)
    params = BuildParameters(**record.parameters)
    runs = {system: load_run(engine, record.collection, system) for system in systems}
    runs = {s: r[["query", "item", "score"]] for s, r in runs.items()}
    return reference_verdicts(judgments, params, runs, measures, **options)
