"""Score several systems against one build's ORLs, compare them, and (optionally) measure power.

This is the part of the pipeline after the ORLs exist; the ``orlbuild report``
command runs it too. Inputs are plain: the build's ORLs (the builders'
``QueryORL`` records or anything with ``query``, ``tiers`` and ``native_grades``)
and each system's run as the store returns it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from sqlalchemy import Engine

from orlbuild.builders.results import QueryORL
from orlbuild.errors import ConfigError
from orlbuild.pipeline.config import CompareSpec, PowerSpec
from orlbuild.report import ReportData
from orlbuild.store import list_systems, load_run
from orlbuild.store.builds import BuildRecord, get_build, load_query_orls
from scoring import ORL, evaluate
from scoring.evaluate import Missing
from scoring.statistics import (
    PowerResult,
    ProgressCallback,
    compare_systems,
    power_analysis,
    power_analysis_steps,
)

__all__ = [
    "Evaluation",
    "build_metadata",
    "evaluate_stored_build",
    "evaluate_systems",
    "orls_for_scoring",
    "power_steps",
]

Progress = Callable[[int], AbstractContextManager[ProgressCallback]]


@dataclass(frozen=True)
class Evaluation:
    """Per-query scores of every system, their pairwise tests and power curves.

    Attributes
    ----------
    build
        Metadata of the build the systems were scored against.
    orls
        The build's ORLs by query.
    per_query
        System -> per-query scores (rows: queries, columns: measures).
    comparisons
        One row per (measure, pair): ``scoring.statistics.COMPARISON_COLUMNS``.
    compare
        The test settings used.
    power
        Measure -> power/stability, when asked for.
    conventions
        How missing queries, run order and undefined values were handled.
    missing_queries
        System -> ORL queries its run does not answer.
    """

    build: Mapping[str, Any]
    orls: Mapping[str, QueryORL]
    per_query: Mapping[str, pd.DataFrame]
    comparisons: pd.DataFrame
    compare: CompareSpec
    power: Mapping[str, PowerResult] | None = None
    conventions: Mapping[str, str] = field(default_factory=dict)
    missing_queries: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def means(self) -> pd.DataFrame:
        """Mean score per system (rows, best first on the first measure) and measure (columns)."""
        frame = pd.DataFrame({s: f.mean(axis=0) for s, f in self.per_query.items()}).T
        frame.index.name = "system"
        return frame.sort_values(list(frame.columns[:1]), ascending=False, kind="stable")

    def significant(self) -> pd.DataFrame:
        """The significant pairs, oriented ``better``, ``worse``, with the difference."""
        rows = self.comparisons[self.comparisons["significant"].astype(bool)]
        better = rows["a"].where(rows["diff"] > 0, rows["b"])
        worse = rows["b"].where(rows["diff"] > 0, rows["a"])
        return pd.DataFrame(
            {
                "measure": rows["measure"],
                "better": better,
                "worse": worse,
                "diff": rows["diff"].abs(),
                "p_adjusted": rows["p_adjusted"],
            }
        ).reset_index(drop=True)

    def verdicts(self) -> pd.DataFrame:
        """One row per measure: the significant pairs ``better > worse`` and the others."""
        rows = []
        for measure, pairs in self.comparisons.groupby("measure", sort=False):
            significant = pairs["significant"].astype(bool)
            ordered = [
                f"{a} > {b}" if diff > 0 else f"{b} > {a}"
                for a, b, diff in zip(pairs["a"], pairs["b"], pairs["diff"], strict=True)
            ]
            rows.append(
                {
                    "measure": measure,
                    "significant": ", ".join(
                        o for o, s in zip(ordered, significant, strict=True) if s
                    )
                    or "none",
                    "not significant": ", ".join(
                        f"{a} ~ {b}"
                        for a, b, s in zip(pairs["a"], pairs["b"], significant, strict=True)
                        if not s
                    )
                    or "none",
                }
            )
        return pd.DataFrame(rows, columns=["measure", "significant", "not significant"])

    def report_data(self, title: str, *, notes: Sequence[str] = ()) -> ReportData:
        """The inputs of the HTML report."""
        lines = [*notes, *(f"{k}: {v}" for k, v in self.conventions.items())]
        for system, queries in self.missing_queries.items():
            if queries:
                lines.append(f"{system} has no results for {len(queries)} ORL queries")
        return ReportData(
            title=title,
            per_query=dict(self.per_query),
            comparisons=self.comparisons,
            orls=list(self.orls.values()),
            build=dict(self.build),
            power=None if self.power is None else dict(self.power),
            notes=lines,
            alpha=self.compare.alpha,
            correction=self.compare.correction,
            seed=self.compare.seed,
        )


def orls_for_scoring(orls: Mapping[str, QueryORL]) -> dict[str, ORL]:
    """The scoring core's :class:`~scoring.ORL` of every query (native grades kept)."""
    return {
        query: ORL(orl.ranks, grades=orl.native_grades) if orl.native_grades else ORL(orl.ranks)
        for query, orl in orls.items()
    }


def evaluate_systems(
    orls: Mapping[str, QueryORL],
    runs: Mapping[str, pd.DataFrame],
    measures: Sequence[str],
    *,
    build: Mapping[str, Any] | None = None,
    missing: Missing = "zero",
    compare: CompareSpec | None = None,
    power: PowerSpec | None = None,
    advance: ProgressCallback | None = None,
) -> Evaluation:
    """Score every run against ``orls``, test every pair of systems, optionally measure power.

    Parameters
    ----------
    orls
        Query -> built ORL.
    runs
        System -> run (columns ``query, item, rank, score``; RDQ.md section 8 order).
    measures
        Measure names.
    build
        Build metadata carried into the result.
    missing
        ``zero`` or ``skip`` (RDQ.md section 8).
    compare
        Test settings (default :class:`CompareSpec`); skipped with fewer than two systems.
    power
        When given, power and stability per measure (RDQ.md section 9).
    advance
        Progress callback for the power analysis (one step per subsample).

    Returns
    -------
    Evaluation
    """
    if not orls:
        raise ConfigError("the build has no ORL to score against")
    if not runs:
        raise ConfigError("no system to score: give at least one run")
    settings = compare or CompareSpec()
    targets = orls_for_scoring(orls)
    per_query: dict[str, pd.DataFrame] = {}
    missing_queries: dict[str, list[str]] = {}
    conventions: dict[str, str] = {}
    for system, run in runs.items():
        frame = evaluate(targets, run, list(measures), missing=missing)
        missing_queries[system] = list(frame.attrs.get("missing_queries", []))
        conventions = dict(frame.attrs.get("conventions", {}))
        per_query[system] = frame
    panels = _panels(per_query, measures)
    if len(runs) >= 2:
        comparisons = compare_systems(
            panels,
            test=settings.test,
            permutations=settings.permutations,
            correction=settings.correction,
            alpha=settings.alpha,
            seed=settings.seed,
        )
    else:
        comparisons = pd.DataFrame()
    results = None
    if power is not None and len(runs) >= 2:
        results = {
            measure: power_analysis(
                panels[measure],
                budgets=_budgets(power.budgets, len(panels[measure])),
                subsamples=power.subsamples,
                permutations=power.permutations,
                alpha=power.alpha,
                test=settings.test,
                seed=power.seed,
                progress=advance,
            )
            for measure in power.measures
        }
    return Evaluation(
        build=dict(build or {}),
        orls=orls,
        per_query=per_query,
        comparisons=comparisons,
        compare=settings,
        power=results,
        conventions=conventions,
        missing_queries=missing_queries,
    )


def power_steps(power: PowerSpec, n_queries: int) -> int:
    """Progress-bar steps of :func:`evaluate_systems`'s power analysis."""
    budgets = _budgets(power.budgets, n_queries)
    return len(power.measures) * power_analysis_steps(len(budgets), power.subsamples)


def _budgets(budgets: Sequence[int], n_queries: int) -> list[int]:
    """The budgets that fit the number of queries (a budget above it cannot be drawn)."""
    fitting = [b for b in budgets if b <= n_queries]
    if not fitting:
        raise ConfigError(
            f"power.budgets {list(budgets)} are all larger than the {n_queries} scored queries"
        )
    return fitting


def _panels(
    per_query: Mapping[str, pd.DataFrame], measures: Sequence[str]
) -> dict[str, pd.DataFrame]:
    """Measure -> (queries x systems) panel; queries where a value is undefined are left out."""
    return {
        m: pd.DataFrame({s: frame[m] for s, frame in per_query.items()}).dropna(how="any")
        for m in measures
    }


def build_metadata(record: BuildRecord) -> dict[str, Any]:
    """What the report's header shows about a stored build."""
    return {
        "name": record.name or "–",
        "id": record.id,
        "collection": record.collection,
        "route": f"{record.source} / {record.method}",
        "parameters": {k: v for k, v in record.parameters.items() if v not in (None, "none")},
        "queries": f"{record.n_queries} built, {record.n_failed} failed",
        "inputs": ", ".join(f"{b.file_name} (batch {b.id})" for b in record.batches),
        "created": f"{record.created_at:%Y-%m-%d %H:%M} UTC by {record.created_by}",
        "orlbuild": record.package_version,
    }


def evaluate_stored_build(
    engine: Engine,
    build: str | int,
    measures: Sequence[str],
    *,
    systems: Sequence[str] | None = None,
    missing: Missing = "zero",
    compare: CompareSpec | None = None,
    power: PowerSpec | None = None,
    progress: Progress | None = None,
) -> Evaluation:
    """:func:`evaluate_systems` on a stored build and the stored runs of its collection.

    Parameters
    ----------
    engine
        The store.
    build
        Build id or name (the newest build of that name).
    measures
        Measure names.
    systems
        Systems to score; default every system with a run in the build's collection.
    missing, compare, power
        See :func:`evaluate_systems`.
    progress
        Called with the number of power-analysis steps; returns a context
        manager yielding the progress callback (e.g. ``orlbuild.progress.progress_bar``).
    """
    record = get_build(engine, build)
    orls = load_query_orls(engine, record.id)
    names = list(systems) if systems else list_systems(engine, record.collection)
    runs = {name: load_run(engine, record.collection, name) for name in names}
    steps = 0 if power is None or not orls else power_steps(power, len(orls))
    bar = progress(steps) if progress is not None and steps else nullcontext(None)
    with bar as advance:
        return evaluate_systems(
            orls,
            runs,
            measures,
            build=build_metadata(record),
            missing=missing,
            compare=compare,
            power=power,
            advance=advance,
        )
