"""Evaluate a stored build: score every system against it, compare them, measure power.

The use case behind ``orlbuild report`` and the pipeline's score, compare and
power steps. Scoring goes through :mod:`orlbuild.services.evaluations`, panels,
tests and power through :mod:`orlbuild.services.comparisons` (the same path
as ``orlbuild score``, ``compare`` and ``power``); this module turns the test
and power settings (:class:`TestSettings`, :class:`PowerSpec`, the pipeline's
``[compare]`` and ``[power]`` tables) into those calls and holds the result
the report renders.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from orlbuild.errors import ConfigError
from orlbuild.executor import Executor
from orlbuild.records import QueryORL
from orlbuild.report import ReportData
from orlbuild.report.data import ReportTexts
from orlbuild.services import comparisons as service
from orlbuild.services.builds import built_orls
from orlbuild.services.evaluations import missing_queries_note, score_systems
from orlbuild.services.texts import report_texts
from orlbuild.services.undefined_scores import left_out_reasons, reasons_words
from orlbuild.store import list_systems
from orlbuild.store.builds import (
    BuildRecord,
    get_build,
)
from orlbuild.store.read import systems_without_run
from orlbuild.vocabulary import UndefinedPanels
from scoring.settings import TestSettings
from scoring.statistics import (
    PowerResult,
    ProgressCallback,
    SystemComparison,
    TestPlan,
)
from scoring.vocabulary import MissingPolicy, ScorePrecisionName, SignificanceTest

if TYPE_CHECKING:
    from sqlalchemy import Engine

__all__ = [
    "LISTED_SYSTEMS",
    "BuildEvaluation",
    "PowerSpec",
    "build_metadata",
    "comparable_panels",
    "comparison_power",
    "evaluate_stored_build",
    "systems_to_compare",
]

Progress = Callable[[int], AbstractContextManager[ProgressCallback]]

#: Up to this many systems the pipeline summary lists every pair; beyond, it counts them.
LISTED_SYSTEMS = 8


@dataclass(frozen=True)
class PowerSpec:
    """Optional power and stability analysis (the pipeline's ``[power]``)."""

    budgets: tuple[int, ...]
    subsamples: int = 300
    permutations: int = TestSettings.permutations
    alpha: float = TestSettings.alpha
    seed: int = TestSettings.seed
    measures: tuple[str, ...] = ()


@dataclass(frozen=True)
class BuildEvaluation:
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
    failures
        ``query: cause`` of every query the build could not order (``on_error = "skip"``).
    missing
        ``zero`` or ``skip``: what the missing queries counted as.
    without_run
        Systems left out because their runs were deleted.
    plans
        Measure -> how its pairs were tested (test, draws, what was changed, warnings).
    texts
        The stored texts of the ORLs' queries and items, shown on hover in the report.
    panel_notes
        One per measure whose paired panel lost queries, with why and how many
        (:func:`orlbuild.services.comparisons.panels_from_scores`).
    """

    build: Mapping[str, Any]
    orls: Mapping[str, QueryORL]
    per_query: Mapping[str, pd.DataFrame]
    comparisons: pd.DataFrame
    compare: TestSettings
    power: Mapping[str, PowerResult] | None = None
    conventions: Mapping[str, str] = field(default_factory=dict)
    missing_queries: Mapping[str, Sequence[str]] = field(default_factory=dict)
    failures: Sequence[str] = ()
    missing: str = "zero"
    without_run: Sequence[str] = ()
    plans: Mapping[str, TestPlan] = field(default_factory=dict)
    texts: ReportTexts | None = None
    panel_notes: Sequence[str] = ()

    def test_label(self) -> str:
        """The test as run, in words (empty when nothing was compared)."""
        first = next(iter(self.plans.values()), None)
        return "" if first is None else first.describe()

    def plan_messages(self) -> list[str]:
        """What the test plans changed (``Note: ...``) and could not fix (``Warning: ...``)."""
        comparison = SystemComparison(self.comparisons, self.plans)
        return [
            *(f"Note: {note}" for note in comparison.notes),
            *(f"Warning: {warning}" for warning in comparison.warnings),
        ]

    def comparison_summary(self) -> dict[str, Any]:
        """The test as run, its notes and warnings, and the system tiers (JSON summary)."""
        comparison = SystemComparison(self.comparisons, self.plans)
        first = next(iter(self.plans.values()), None)
        return {
            "test": None if first is None else first.test.value,
            "description": self.test_label(),
            "permutations": {m: p.permutations for m, p in self.plans.items()},
            "correction": None if first is None else first.correction,
            "notes": comparison.notes,
            "warnings": comparison.warnings,
            "tiers": [] if first is None else comparison.tiers().to_dict(orient="records"),
        }

    def means(self) -> pd.DataFrame:
        """Mean score per system (rows, best first on the first measure) and measure (columns)."""
        frame = pd.DataFrame({s: f.mean(axis=0) for s, f in self.per_query.items()}).T
        frame.index.name = "system"
        return frame.sort_values(list(frame.columns[:1]), ascending=False, kind="stable")

    def significant(self) -> pd.DataFrame:
        """The significant pairs, oriented ``better``, ``worse``, with the difference."""
        if self.comparisons.empty:
            return pd.DataFrame(columns=["measure", "better", "worse", "diff", "p_adjusted"])
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

    def verdicts(self, *, listed: int = LISTED_SYSTEMS) -> pd.DataFrame:
        """One row per measure: the significant pairs ``better > worse`` and the others.

        With more than ``listed`` systems the pairs are counted instead (63 systems
        make 1,953 pairs a measure), and a ``details`` column names the ``compare``
        command that lists them; the report shows their tiers and rank intervals.
        """
        columns = ["measure", "significant", "not significant"]
        rows: list[dict[str, str]] = []
        if self.comparisons.empty:
            return pd.DataFrame(rows, columns=columns)
        many = len(self.per_query) > listed
        for measure, pairs in self.comparisons.groupby("measure", sort=False):
            significant = pairs["significant"].astype(bool)
            if many:
                count = int(significant.sum())
                rows.append(
                    {
                        "measure": str(measure),
                        "significant": f"{count} of {len(pairs)} pairs",
                        "not significant": f"{len(pairs) - count} pairs",
                        "details": f"orlbuild compare --build {self.build.get('id', '?')} "
                        f"--all-systems -m '{measure}'; the report's tiers and rank intervals",
                    }
                )
                continue
            ordered = [
                f"{a} > {b}" if diff > 0 else f"{b} > {a}"
                for a, b, diff in zip(pairs["a"], pairs["b"], pairs["diff"], strict=True)
            ]
            rows.append(
                {
                    "measure": str(measure),
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
        return pd.DataFrame(rows, columns=[*columns, "details"] if many else columns)

    def run_notes(self) -> list[str]:
        """Warnings about the runs: systems left out, ORL queries a run misses (named), queries
        left out of a measure's paired panel (why, with counts)."""
        notes = [f"{s} has no run (its batches were deleted): left out" for s in self.without_run]
        return [
            *notes,
            *(
                missing_queries_note(system, queries, self.missing)
                for system, queries in self.missing_queries.items()
                if queries
            ),
            *self.panel_notes,
        ]

    def report_data(self, title: str, *, notes: Sequence[str] = ()) -> ReportData:
        """The inputs of the HTML report."""
        lines = [*notes, *(f"{k}: {v}" for k, v in self.conventions.items())]
        lines += [f"no ORL for {failure}" for failure in self.failures]
        if not self.comparisons.empty:
            compared = set(self.comparisons["measure"])
            frame = next(iter(self.per_query.values()))
            tiers = {query: len(orl.tiers) for query, orl in self.orls.items()}
            lines += [
                f"{m} is undefined on every query: not compared ("
                + reasons_words(left_out_reasons(str(m), [str(q) for q in frame.index], tiers))
                + ")"
                for m in frame.columns
                if m not in compared
            ]
        lines += self.run_notes()
        lines += self.plan_messages()
        return ReportData(
            title=title,
            per_query=dict(self.per_query),
            comparisons=self.comparisons,
            orls=list(self.orls.values()),
            build=dict(self.build),
            power=None if self.power is None else dict(self.power),
            notes=lines,
            alpha=self.compare.alpha,
            correction=_correction_label(self.plans),
            seed=self.compare.seed,
            test=self.test_label(),
            texts=self.texts,
        )


def _correction_label(plans: Mapping[str, TestPlan]) -> str:
    """The correction as the report's legend names it."""
    first = next(iter(plans.values()), None)
    if first is None:
        return "holm"
    if first.correction is not None:
        return first.correction
    return (
        "family-wise (max-T)" if first.test is SignificanceTest.max_t else "family-wise (Tukey HSD)"
    )


def _power_plan(
    panels: Mapping[str, pd.DataFrame], power: PowerSpec | None
) -> dict[str, list[int]]:
    """Budgets of every ``power.measures`` entry that has a panel (those fitting its queries)."""
    if power is None:
        return {}
    chosen = {m: panels[m] for m in power.measures if m in panels}
    return service.power_budgets(chosen, power.budgets, fit=True)


def comparison_power(
    panels: Mapping[str, pd.DataFrame],
    comparison: SystemComparison,
    power: PowerSpec,
    advance: ProgressCallback | None = None,
    executor: Executor | None = None,
) -> dict[str, PowerResult] | None:
    """Power and stability per measure, under the test each measure was compared with.

    Parameters
    ----------
    panels
        Measure -> paired panel (:func:`comparable_panels`).
    comparison
        The tests of those panels; each measure's power uses its test.
    power
        Budgets, subsamples, draws and seed; only ``power.measures`` with a panel.
    advance
        Progress callback (one step per subsample).
    executor
        Where the budgets run (default: serially).

    Returns
    -------
    dict or None
        Measure -> :class:`~scoring.statistics.PowerResult`; ``None`` when no budget fits.
    """
    plan = _power_plan(panels, power)
    results = service.power_for_panels(
        panels,
        plan,
        subsamples=power.subsamples,
        permutations=power.permutations,
        alpha=power.alpha,
        test={m: comparison.plans[m].test.value for m in plan},
        seed=power.seed,
        executor=executor,
        advance=advance,
    )
    return results or None


def comparable_panels(
    per_query: Mapping[str, pd.DataFrame], measures: Sequence[str]
) -> dict[str, pd.DataFrame]:
    """Measure -> (queries x systems) panel; nothing with fewer than two systems.

    A measure undefined on every query (e.g. Kendall tau when no run retrieves
    exactly the ORL's items) has nothing to compare and is left out.
    """
    if len(per_query) < 2:
        return {}
    panels, _ = service.panels_from_scores(per_query, measures, undefined=UndefinedPanels.drop)
    return panels


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


def systems_to_compare(
    engine: Engine, build: str | int, systems: Sequence[str], *, all_systems: bool
) -> list[str]:
    """The systems ``compare``, ``power`` and ``report`` take: ``systems``, or with
    ``all_systems`` every system with a run in the build's collection (``--all-systems``).

    Raises
    ------
    ConfigError
        Both ``systems`` and ``all_systems``, or fewer than two systems with a run.
    """
    if not all_systems:
        return list(systems)
    if systems:
        raise ConfigError("give --system or --all-systems, not both")
    record = get_build(engine, build)
    names = list_systems(engine, record.collection)
    if len(names) < 2:
        raise ConfigError(
            f"--all-systems: collection {record.collection!r} of build {build!r} has "
            f"{len(names)} system(s) with a run; comparing needs at least two"
        )
    return names


def evaluate_stored_build(
    engine: Engine,
    build: str | int,
    measures: Sequence[str],
    *,
    systems: Sequence[str] | None = None,
    missing: MissingPolicy = MissingPolicy.zero,
    score_precision: ScorePrecisionName = ScorePrecisionName.float32,
    compare: TestSettings | None = None,
    power: PowerSpec | None = None,
    progress: Progress | None = None,
    executor: Executor | None = None,
) -> BuildEvaluation:
    """Score the stored runs against a stored build, compare the systems, measure power.

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
    missing
        ``zero`` or ``skip`` (docs/conventions.md, "Conventions and caveats").
    score_precision
        Compare run scores as ``float32`` (default) or ``float64`` (docs/evaluating-files.md,
        "Score precision").
    compare
        Test settings (default :class:`TestSettings`).
    power
        When given, power and stability per measure.
    progress
        Called with the number of power-analysis steps; returns a context
        manager yielding the progress callback (``orlbuild.progress.progress_bar``).
    executor
        Where the systems are scored and the power analysis's budgets run
        (default: serially; the figures are the same on any executor).

    Returns
    -------
    BuildEvaluation
    """
    record = get_build(engine, build)
    names = list(systems) if systems else list_systems(engine, record.collection)
    without_run = [] if systems else systems_without_run(engine, record.collection)
    if not names:
        raise ConfigError(f"collection {record.collection!r} has no system run to score")
    scores = score_systems(
        engine,
        record.id,
        names,
        measures=measures,
        missing=missing,
        score_precision=score_precision,
        executor=executor,
    )
    per_query = {name: score.per_query for name, score in scores.items()}
    settings = compare or TestSettings()
    tiers = dict(next(iter(scores.values())).orl_tiers)
    panels, panel_notes = (
        service.panels_from_scores(per_query, measures, undefined=UndefinedPanels.drop, tiers=tiers)
        if len(per_query) >= 2
        else ({}, [])
    )
    comparison = service.compare_panels(panels, settings) if panels else None
    results = None
    if comparison is not None and power is not None:
        steps = service.power_steps(_power_plan(panels, power), power.subsamples)
        bar = progress(steps) if progress is not None and steps else nullcontext(None)
        with bar as advance:
            results = comparison_power(panels, comparison, power, advance, executor)
    first = next(iter(scores.values()))
    orls, failures = built_orls(engine, record.id)
    return BuildEvaluation(
        build=build_metadata(record),
        orls=orls,
        per_query=per_query,
        comparisons=pd.DataFrame() if comparison is None else comparison.pairs,
        compare=settings,
        power=results,
        conventions=first.conventions,
        missing_queries={name: score.missing_queries for name, score in scores.items()},
        failures=failures,
        missing=missing,
        without_run=without_run,
        plans={} if comparison is None else dict(comparison.plans),
        texts=report_texts(engine, record.collection, orls.values()),
        panel_notes=tuple(panel_notes),
    )
