"""The words a build understands: one :class:`~enum.Enum` per option.

``orlbuild build`` (its Typer options), the pipeline TOML validator
(:mod:`orlbuild.pipeline.config`) and :func:`~orlbuild.builders.parameters.resolve_parameters`
all take their allowed values from here, so the three cannot drift (docs/development.md,
"Development"). Members are ``str`` enums: ``Uncertainty.ep == "ep"``, and the
stored build parameters stay plain strings.
"""

from __future__ import annotations

from enum import Enum
from types import MappingProxyType

__all__ = [
    "BUILD_OPTION_VALUES",
    "Cluster",
    "Disconnected",
    "GradeAggregate",
    "Method",
    "OnError",
    "Resample",
    "SimulatedMethod",
    "Solver",
    "Source",
    "TieringProcedure",
    "Uncertainty",
    "values",
]


class Source(str, Enum):
    """``--source``: which judgments a build reads."""

    graded = "graded"
    listwise = "listwise"
    pairwise = "pairwise"


class Method(str, Enum):
    """``--method``: how a build orders items; which apply to which source is ``METHODS`` in
    :mod:`orlbuild.builders.parameters`."""

    graded = "graded"
    direct = "direct"
    bt = "bt"
    plackett_luce = "plackett-luce"
    borda = "borda"
    rank_centrality = "rank-centrality"


class SimulatedMethod(str, Enum):
    """``orlbuild calibrate --method``: the pairwise methods the tiering simulation builds with."""

    bt = "bt"
    rank_centrality = "rank-centrality"


class GradeAggregate(str, Enum):
    """``--grade-agg``: how the graded route combines annotators' grades (median first: default)."""

    median = "median"
    mean = "mean"
    max = "max"
    majority = "majority"


class Uncertainty(str, Enum):
    """``--uncertainty``: how item-score uncertainty is estimated (``none``: direct and graded)."""

    fisher = "fisher"
    bootstrap = "bootstrap"
    ep = "ep"
    none = "none"


class TieringProcedure(str, Enum):
    """``--tiering``: how tiers are decided from scored items, the default first
    (docs/tiers-and-audit.md,
    "How tiers are decided and audited")."""

    simultaneous = "simultaneous"
    model = "model"
    leader = "leader"


class Cluster(str, Enum):
    """``--cluster``: clustered sandwich covariance by annotator, or none."""

    none = "none"
    annotators = "annotators"


class Resample(str, Enum):
    """``--resample``: the bootstrap unit."""

    comparisons = "comparisons"
    annotators = "annotators"


class Solver(str, Enum):
    """``--solver``: Bradley-Terry / Plackett-Luce solver (``ilsr`` first: default)."""

    ilsr = "ilsr"
    opt = "opt"
    mm = "mm"


class Disconnected(str, Enum):
    """``--disconnected``: a query whose comparison graph is disconnected fails, or is tiered
    per component."""

    fail = "fail"
    tiers = "tiers"


class OnError(str, Enum):
    """``--on-error``: a query that cannot be ordered stops the build (nothing is stored), or is
    skipped and listed.

    ``"raise"``, the library's word before this vocabulary, still reads as ``stop``.
    """

    stop = "stop"
    skip = "skip"

    @classmethod
    def _missing_(cls, value: object) -> OnError | None:
        return cls.stop if value == "raise" else None


def values(vocabulary: type[Enum]) -> tuple[str, ...]:
    """The allowed words of ``vocabulary``, in declaration order."""
    return tuple(str(member.value) for member in vocabulary)


#: Build option name -> its vocabulary (the options that take a word).
BUILD_OPTION_VALUES = MappingProxyType(
    {
        "grade_agg": values(GradeAggregate),
        "uncertainty": values(Uncertainty),
        "cluster": values(Cluster),
        "resample": values(Resample),
        "solver": values(Solver),
        "disconnected": values(Disconnected),
        "tiering": values(TieringProcedure),
        "on_error": values(OnError),
    }
)
