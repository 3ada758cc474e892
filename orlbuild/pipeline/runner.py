"""Run a pipeline config end to end: ingest -> build -> score -> compare (-> power) -> report.

Each step is one service call, the one the matching command makes:
:func:`orlbuild.services.ingests.ingest_unless_stored` (``ingest``),
:func:`orlbuild.services.builds.build_or_reuse` (``build``),
:func:`orlbuild.services.build_evaluation.evaluate_stored_build` (``report``:
score, compare, power) and :func:`orlbuild.report.write_report`. Inputs
already in the store (same content, by SHA-256) are skipped without being read
again, and a build whose newest stored namesake has the same resolved
parameters and read exactly the same batches is reused, so running the same
config twice stores nothing new and gives the same result.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from orlbuild.builders import QueryORL
from orlbuild.executor import Executor, resolve_executor
from orlbuild.output_files import check_output
from orlbuild.pipeline.config import pipeline_inputs
from orlbuild.pipeline.specs import BuildSpec, InputSpec, PipelineConfig
from orlbuild.progress import ingest_progress, progress_bar
from orlbuild.report import write_report
from orlbuild.services.build_evaluation import (
    LISTED_SYSTEMS,
    BuildEvaluation,
    evaluate_stored_build,
)
from orlbuild.services.builds import build_or_reuse, built_orls, version_note
from orlbuild.services.databases import displayed_url, open_database
from orlbuild.services.ingests import IngestedInput, ingest_unless_stored
from orlbuild.services.reference_resampling import (
    ReferenceVerdicts,
    reference_verdicts_for_build,
)
from orlbuild.vocabulary import ExecutorKind

if TYPE_CHECKING:
    from orlbuild.services.databases import Engine
    from orlbuild.services.orls import BuildRecord

__all__ = [
    "BuiltOrls",
    "PipelineResult",
    "open_pipeline_store",
    "run_pipeline",
]


@dataclass(frozen=True)
class BuiltOrls:
    """One ``[[builds]]`` entry: the stored build and the size of its ORLs."""

    name: str
    build_id: int
    reused: bool
    source: str
    method: str
    queries: int
    tiers: int
    items: int
    failures: tuple[str, ...] = ()
    new_version: str | None = None

    @classmethod
    def of(
        cls, spec: BuildSpec, record: BuildRecord, orls: dict[str, QueryORL], *, reused: bool
    ) -> BuiltOrls:
        """Summarise a build's ORLs."""
        return cls(
            name=spec.name,
            build_id=record.id,
            reused=reused,
            source=record.source,
            method=record.method,
            queries=len(orls),
            tiers=sum(len(o.tiers) for o in orls.values()),
            items=sum(len(t) for o in orls.values() for t in o.tiers),
        )

    @property
    def message(self) -> str:
        """One line for the log."""
        verb = "reused" if self.reused else "built"
        text = (
            f"{verb} {self.name} (build {self.build_id}, {self.source}/{self.method}): "
            f"{self.queries} queries, {self.tiers} tiers, {self.items} items"
        )
        if self.failures:
            text += f"; {len(self.failures)} queries failed"
        if self.new_version is not None:
            text += f"\nnote: {self.new_version}"
        return text


@dataclass(frozen=True)
class PipelineResult:
    """Everything a pipeline run did and found."""

    database_url: str
    inputs: tuple[IngestedInput, ...]
    builds: tuple[BuiltOrls, ...]
    scored_build: str
    evaluation: BuildEvaluation
    report: Path | None = None
    seconds: float = 0.0
    measures: tuple[str, ...] = field(default_factory=tuple)

    def builds_frame(self) -> pd.DataFrame:
        """One row per build: ``name, build, source, method, queries, tiers, items, failed``."""
        rows = [
            (b.name, b.build_id, b.source, b.method, b.queries, b.tiers, b.items, len(b.failures))
            for b in self.builds
        ]
        columns = ["name", "build", "source", "method", "queries", "tiers", "items", "failed"]
        return pd.DataFrame(rows, columns=columns)

    def to_json(self) -> dict[str, Any]:
        """The machine-readable summary (``orlbuild pipeline --format json``)."""
        means = self.evaluation.means()
        return {
            "database": displayed_url(self.database_url),
            "inputs": [
                {
                    "kind": i.kind,
                    "path": str(i.path),
                    "collection": i.collection,
                    "system": i.system,
                    "batch": i.batch_id,
                    "stored": i.created,
                    "rows": i.rows,
                }
                for i in self.inputs
            ],
            "builds": [
                {
                    "name": b.name,
                    "build": b.build_id,
                    "reused": b.reused,
                    "new_version": b.new_version,
                    "source": b.source,
                    "method": b.method,
                    "queries": b.queries,
                    "tiers": b.tiers,
                    "items": b.items,
                    "failures": list(b.failures),
                }
                for b in self.builds
            ],
            "scored_build": self.scored_build,
            "mean": {s: means.loc[s].to_dict() for s in means.index},
            "significant": self.evaluation.significant().to_dict(orient="records"),
            "pairs": self.evaluation.comparisons.to_dict(orient="records"),
            "comparison": self.evaluation.comparison_summary(),
            "power": None
            if self.evaluation.power is None
            else {m: r.to_dict() for m, r in self.evaluation.power.items()},
            "conventions": dict(self.evaluation.conventions),
            "warnings": self.evaluation.run_notes(),
            "report": None if self.report is None else str(self.report),
            "seconds": round(self.seconds, 3),
        }


Log = Callable[[str], None]


def open_pipeline_store(config: PipelineConfig, db_url: str | None = None) -> Engine:
    """Open the pipeline's store.

    Without ``db_url`` and with an SQLite file named by the config (the default
    ``orlbuild.db`` next to it), the file is created if needed and migrated to the
    newest schema. A database given with ``--db`` (or ``[database] url``) is
    migrated only when it is empty; an older schema stops with the usual hint to
    run ``orlbuild db upgrade``.
    """
    if db_url is None and config.database_is_sqlite_file:
        return open_database(config.database_url, create_sqlite_file=True)
    return open_database(db_url or config.database_url)


def ingest_input(engine: Engine, spec: InputSpec, *, quiet: bool = True) -> IngestedInput:
    """Ingest one ``[[inputs]]`` entry unless identical content is already stored."""
    return ingest_unless_stored(
        engine,
        spec.kind,
        spec.path,
        collection=spec.collection,
        system=spec.system,
        fmt=spec.format,
        progress=lambda size: ingest_progress(size, f"ingest {spec.path.name}", quiet=quiet),
        query=spec.query,
        columns=dict(spec.columns),
    )


def build_orls_for(
    engine: Engine, spec: BuildSpec, *, quiet: bool = True, executor: Executor | None = None
) -> tuple[BuiltOrls, dict[str, QueryORL]]:
    """Make (or reuse) the build ``spec`` and return its summary and ORLs.

    The per-query work runs on ``executor`` (default serial; ``[execution]``).
    """
    record, reused = build_or_reuse(
        engine,
        spec.builder_parameters(),
        name=spec.name,
        collection=spec.collection,
        on_error=spec.on_error,
        progress=lambda total: progress_bar(total, f"build {spec.name}", quiet=quiet),
        executor=executor,
    )
    orls, failed = built_orls(engine, record.id)
    note = None if reused else version_note(engine, spec.name, record.id)
    built = BuiltOrls.of(spec, record, orls, reused=reused)
    return replace(built, failures=tuple(failed), new_version=note), orls


def plan_next_round(
    engine: Engine,
    config: PipelineConfig,
    builds: list[BuiltOrls],
    say: Log,
    protected: list[tuple[str, Path]] | None = None,
) -> pd.DataFrame:
    """``[plan]``: propose the next comparisons of its build, write them, return the status
    per query (the report's "What the next round would buy")."""
    from orlbuild.services.plans import plan_build, status_frame, write_plan_file

    spec = config.plan
    assert spec is not None
    build_id = next(b.build_id for b in builds if b.name == spec.build)
    result = plan_build(engine, build_id, spec.settings)
    write_plan_file(result, spec.format, spec.output, protected=protected or ())
    settled = sum(q.status == "settled" for q in result.plan.queries.values())
    say(
        f"planned {len(result.plan.pairs)} comparisons for {spec.build} "
        f"({settled} of {len(result.plan.queries)} queries settled): {spec.output}"
    )
    return status_frame(result.plan)


def run_pipeline(
    config: PipelineConfig,
    *,
    db_url: str | None = None,
    quiet: bool = True,
    log: Log | None = None,
    executor: Executor | None = None,
) -> PipelineResult:
    """Run ``config``: ingest, build, score, compare, power (if configured), report.

    Parameters
    ----------
    config
        A validated config (:func:`~orlbuild.pipeline.config.load_config`).
    db_url
        Use this database instead of the config's (``--db``).
    quiet
        No progress bars.
    log
        Called with one line per step (the CLI prints them on standard error).
    executor
        Where the builds' queries, the systems' scoring and the power
        analysis's budgets run (``--jobs``/``--scheduler``); default: the
        config's ``[execution]``, else serially. Results are the same on any
        executor (docs/parallel.md, "Running on many cores or a cluster").

    Returns
    -------
    PipelineResult
        What was ingested and built, the evaluation, and the report's path.

    Raises
    ------
    OrlbuildError
        A bad input file (nothing of that file is stored), a failed build, or a
        store problem; the message says which.
    """
    started = time.perf_counter()
    say = log or (lambda _line: None)
    url = db_url or config.database_url
    protected = pipeline_inputs(config.source, url, config.inputs)
    outputs = [] if config.report is None else [config.report.path]
    if config.plan is not None:
        outputs.append(config.plan.output)
    for path in outputs:  # refused before any work starts
        check_output(path, protected=protected)
    if executor is None:
        executor = resolve_executor(config.execution.jobs, config.execution.scheduler)
    engine = open_pipeline_store(config, db_url)
    # Follow-up commands (`orlbuild --db URL status`, ...) need the same database.
    say(f"database: {displayed_url(url)}")
    if executor.kind is not ExecutorKind.SERIAL:
        say(f"builds run on {executor.describe()}")
    try:
        inputs = []
        for spec in config.inputs:
            done = ingest_input(engine, spec, quiet=quiet)
            say(done.message)
            inputs.append(done)
        builds = []
        for build_spec in config.builds:
            summary, _ = build_orls_for(engine, build_spec, quiet=quiet, executor=executor)
            say(summary.message)
            builds.append(summary)
        scored = next(b for b in builds if b.name == config.scoring.build)
        evaluation = evaluate_stored_build(
            engine,
            scored.build_id,
            config.measures,
            systems=config.scoring.systems,
            missing=config.scoring.missing,
            score_precision=config.scoring.score_precision,
            compare=config.compare,
            power=config.power,
            progress=lambda total: progress_bar(total, "power analysis", quiet=quiet),
            executor=executor,
        )
        n_systems = len(evaluation.per_query)
        say(f"scored {n_systems} systems against {scored.name} on {scored.queries} queries")
        if n_systems > LISTED_SYSTEMS and not evaluation.comparisons.empty:
            say(
                f"{n_systems} systems: the summary counts the significant pairs per measure; "
                f"`orlbuild compare --build {scored.build_id} --all-systems` lists them and "
                "the report shows the tiers and rank intervals"
            )
        for note in evaluation.run_notes():
            say(f"warning: {note}")
        for message in evaluation.plan_messages():
            say(message)
        next_round = None
        if config.plan is not None:
            next_round = plan_next_round(engine, config, builds, say, protected)
        report = None
        reference = None
        if config.reference_resamples:
            reference = reference_verdicts_for_stored(engine, scored.build_id, config, executor)
            fragile = int(reference.pairs["fragile"].sum())
            say(
                f"reference resampling: {reference.resamples} rebuilds, {fragile} pair verdicts "
                "hold under fewer than 95% of them"
            )
        if config.report is not None:
            data = evaluation.report_data(config.report.title)
            if next_round is not None:
                data = replace(data, next_round=next_round)
            if reference is not None:
                data = replace(
                    data, reference=reference.pairs, reference_resamples=reference.resamples
                )
            report = write_report(data, config.report.path, protected=protected)
            say(f"wrote the report to {report}")
    finally:
        engine.dispose()
    return PipelineResult(
        database_url=url,
        inputs=tuple(inputs),
        builds=tuple(builds),
        scored_build=config.scoring.build,
        evaluation=evaluation,
        report=report,
        seconds=time.perf_counter() - started,
        measures=config.measures,
    )


def reference_verdicts_for_stored(
    engine: Any, build_id: int, config: PipelineConfig, executor: Executor | None
) -> ReferenceVerdicts:
    """``[compare] reference_resamples``: the scored build's verdicts under rebuilt references."""
    compare = config.compare
    return reference_verdicts_for_build(
        engine,
        build_id,
        list(config.scoring.systems),
        list(config.measures),
        resamples=config.reference_resamples,
        seed=compare.seed,
        alpha=compare.alpha,
        test=None if compare.test is None else compare.test.value,
        permutations=compare.permutations,
        executor=executor,
    )
