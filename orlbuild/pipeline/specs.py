"""The validated pipeline configuration: one frozen dataclass per table of the TOML
(docs/pipeline.md); :mod:`orlbuild.pipeline.config` reads a file into them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from orlbuild.builders.parameters import BuildParameters, PlanSettings
from orlbuild.services.build_evaluation import PowerSpec
from orlbuild.vocabulary import InputKind, Method, OnError, Source
from scoring.settings import TestSettings
from scoring.vocabulary import MissingPolicy, ScorePrecisionName

__all__ = [
    "BuildSpec",
    "ExecutionSpec",
    "InputSpec",
    "PipelineConfig",
    "PlanSpec",
    "ReportSpec",
    "ScoringSpec",
    "builder_parameters",
]


@dataclass(frozen=True)
class InputSpec:
    """One file to ingest (``[[inputs]]``).

    Attributes
    ----------
    kind
        ``listwise``, ``pairwise``, ``graded`` or ``run``.
    path
        Absolute path of the file (given relative to the config file).
    collection
        Collection the rows go to.
    system
        System name: for runs given by ``system``, or by ``system_from`` from
        the run's tag or file stem; ``None`` otherwise.
    format
        Explicit input format, or ``None`` to detect it from the extension.
    query
        Pairwise only: every row goes into this one query (``--query``).
    columns
        The file's column names mapped onto ours (``columns = {preferred = "winner"}``
        or ``columns = "preferred=winner,other=loser"``, as ``ingest --columns``).
    key
        The table it comes from (``inputs[2]``), for messages; a glob's files share it.
    """

    kind: InputKind
    path: Path
    collection: str
    system: str | None = None
    format: str | None = None
    query: str | None = None
    columns: tuple[tuple[str, str], ...] = ()
    key: str = field(default="inputs", compare=False)


@dataclass(frozen=True)
class BuildSpec:
    """One ORL build (``[[builds]]``): source, method and builder parameters."""

    name: str
    source: Source
    method: Method | None
    collection: str
    parameters: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def on_error(self) -> OnError:
        """``stop`` (default) or ``skip``: what a failed query does."""
        return OnError(self.parameters.get("on_error", OnError.stop))

    def builder_parameters(self) -> BuildParameters:
        """The builder's options (every parameter but ``on_error``, which is not stored)."""
        return builder_parameters(self.source, self.method, self.parameters)


def builder_parameters(
    source: Source, method: Method | None, parameters: Mapping[str, Any]
) -> BuildParameters:
    """:class:`BuildParameters` of a ``[[builds]]`` entry's source, method and parameters."""
    options = {k: v for k, v in parameters.items() if k != "on_error"}
    return BuildParameters(source=source, method=method, **options)


@dataclass(frozen=True)
class ScoringSpec:
    """Which build the systems are scored against (``[scoring]``)."""

    build: str
    systems: tuple[str, ...]
    missing: MissingPolicy = MissingPolicy.zero
    score_precision: ScorePrecisionName = ScorePrecisionName.float32


@dataclass(frozen=True)
class ReportSpec:
    """Where the HTML report goes (``[report]``)."""

    path: Path
    title: str = "orlbuild report"


@dataclass(frozen=True)
class PlanSpec:
    """The next round of judgments to propose (``[plan]``; docs/planning.md, "Planning the next
    judgments"): ``budget`` comparisons for ``build`` (default: the scored build), written to
    ``output`` in the arena shape (the extension picks tsv, csv, jsonl or json), with the
    planner's ``settings``."""

    settings: PlanSettings
    output: Path
    build: str

    @property
    def format(self) -> str:
        """``tsv``, ``csv``, ``jsonl`` or ``json``, from the output's extension."""
        return self.output.suffix.lstrip(".").lower()


@dataclass(frozen=True)
class ExecutionSpec:
    """Where the per-query work of the builds runs (``[execution]``).

    ``jobs = 1`` (default) runs serially, ``N`` on ``N`` local processes, ``-1``
    on every core; ``scheduler = "tcp://HOST:PORT"`` on a Dask cluster (when not
    given, ``$ORLBUILD_SCHEDULER`` is used at run time). Execution is not a
    build parameter: it is not stored with the build and does not change it.
    """

    jobs: int = 1
    scheduler: str | None = None


@dataclass(frozen=True)
class PipelineConfig:
    """A validated pipeline configuration (see :func:`load_config`)."""

    source: Path
    database_url: str
    inputs: tuple[InputSpec, ...]
    builds: tuple[BuildSpec, ...]
    measures: tuple[str, ...]
    scoring: ScoringSpec
    compare: TestSettings
    power: PowerSpec | None = None
    #: ``[compare] reference_resamples``: annotator-bootstrap rebuilds of the
    #: reference (0: off; docs/comparing-systems.md, "Comparing many systems").
    reference_resamples: int = 0
    report: ReportSpec | None = None
    collection: str = "default"
    execution: ExecutionSpec = field(default_factory=ExecutionSpec)
    plan: PlanSpec | None = None

    @property
    def database_is_sqlite_file(self) -> bool:
        """Whether the database is an SQLite file (the pipeline may create and migrate it)."""
        return self.database_url.startswith("sqlite:///")

    def build(self, name: str) -> BuildSpec:
        """Return the build called ``name``."""
        return next(b for b in self.builds if b.name == name)
