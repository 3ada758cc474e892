"""The parameters of a build: validated, with every default resolved.

A build stores :meth:`BuildParameters.to_json` so that it can be repeated
exactly (docs/tiers-and-audit.md, "Audit"). Defaults that depend on the method
(uncertainty, solver) or on the data (listwise ``direct`` versus ``bt``) are
filled in by :func:`resolve_parameters` before anything is built.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from orlbuild.errors import ConfigError
from orlbuild.vocabulary import (
    Cluster,
    Disconnected,
    GradeAggregate,
    Method,
    Resample,
    Solver,
    Source,
    TieringProcedure,
    Uncertainty,
    values,
)

__all__ = [
    "DEFAULT_REG",
    "METHODS",
    "NUMBER_RULES",
    "TIERINGS",
    "BuildParameters",
    "check_number",
    "resolve_parameters",
]

#: Default regularisation strength ``c``; choix receives ``alpha = c / n_items``
#: so that the pseudo-evidence per item stays constant as queries grow (docs/tiers-and-audit.md,
#: "Build routes"). With ILSR, ``alpha`` acts like ``alpha * (w_i + w_j)``
#: virtual wins each way between every pair, so each item carries about
#: ``2 c`` virtual comparisons in total whatever the number of items (one with the
#: default); without it a 20-0 record between two items is not significant (Wald
#: tests lose power at the boundary) and an item that never wins has no finite score.
DEFAULT_REG = 0.5

SOURCES = values(Source)
#: Methods of each source, the default first (listwise: ``direct`` only with one list per query).
METHODS: dict[str, tuple[str, ...]] = {
    Source.graded.value: (Method.graded.value,),
    Source.listwise.value: tuple(
        m.value for m in (Method.direct, Method.bt, Method.plackett_luce, Method.borda)
    ),
    Source.pairwise.value: (Method.bt.value, Method.rank_centrality.value),
}
GRADE_AGGREGATES = values(GradeAggregate)
#: ``--tiering`` procedures, the default first (docs/tiers-and-audit.md, "How tiers are decided and
#: audited").
TIERINGS = values(TieringProcedure)
#: What a stored build made before ``--tiering`` existed used: the leader test.
LEGACY_TIERING = "leader"
SOLVERS = values(Solver)
_FISHER, _BOOTSTRAP, _EP, _NONE = (u.value for u in Uncertainty)
#: Uncertainty kinds each method supports, the default first.
UNCERTAINTY_BY_METHOD: dict[str, tuple[str, ...]] = {
    "bt": (_FISHER, _BOOTSTRAP, _EP),
    "plackett-luce": (_FISHER, _BOOTSTRAP),
    "rank-centrality": (_BOOTSTRAP,),
    "borda": (_BOOTSTRAP,),
    "direct": (_NONE,),
    "graded": (_NONE,),
}


@dataclass(frozen=True)
class BuildParameters:
    """Every option of a build (``None`` means "use the default").

    Attributes
    ----------
    source
        ``graded``, ``listwise`` or ``pairwise``.
    method
        Graded: ``graded``; listwise: ``direct|bt|plackett-luce|borda``
        (default ``direct`` when every query has one list, else ``bt``);
        pairwise: ``bt|rank-centrality`` (default ``bt``).
    grade_agg
        Graded route aggregate over annotators: ``median`` (default; half-way
        medians rounded down), ``mean``, ``max`` or ``majority`` (most frequent
        grade; equally frequent grades resolve to the lowest).
    sig
        Significance level of the leader test; ``0`` disables ties.
    uncertainty
        ``fisher`` (BT and Plackett-Luce default) or ``bootstrap``
        (Rank Centrality and Borda default); ``ep`` (BT only: choix's
        expectation propagation, about 30 times slower); ``none`` for direct
        and graded.
    cluster
        ``none`` or ``annotators`` (clustered sandwich, BT with Fisher only).
    resample
        Bootstrap unit: ``comparisons`` (pairwise rows, or whole lists for
        Plackett-Luce and Borda) or ``annotators``.
    bootstrap
        Number of bootstrap resamples.
    reg
        Regularisation strength ``c``; choix gets ``alpha = c / n_items``.
    solver
        Bradley-Terry / Plackett-Luce solver: ``ilsr`` (default), ``opt`` or ``mm``.
    seed
        Seed of every random draw (bootstrap); default 0 so builds repeat.
    disconnected
        ``fail`` (default) or ``tiers`` (order each component separately).
    tiering
        How tiers are decided from scored items: ``simultaneous`` (default;
        max-t critical value, family-wise error per query), ``model`` (BIC-best
        partition into equal-strength groups) or ``leader`` (one test per item
        at ``sig``, no multiplicity control); ``none`` for direct and graded.
    mc_draws
        Monte Carlo draws of the ``simultaneous`` critical value from N(0, C).
    step_down
        ``simultaneous`` only: Romano-Wolf step-down (default) or the
        single-step critical value for every pair.
    """

    source: str
    method: str | None = None
    grade_agg: str | None = None
    sig: float = 0.05
    uncertainty: str | None = None
    cluster: str | None = None
    resample: str | None = None
    bootstrap: int = 200
    reg: float = DEFAULT_REG
    solver: str | None = None
    seed: int | None = None
    disconnected: str = "fail"
    tiering: str | None = None
    mc_draws: int = 2000
    step_down: bool = True

    def to_json(self) -> dict[str, Any]:
        """The parameters as a JSON-ready mapping (stored with the build)."""
        return asdict(self)

    @classmethod
    def from_json(cls, payload: dict[str, Any]) -> BuildParameters:
        """Rebuild parameters from :meth:`to_json` output.

        A build stored before ``--tiering`` existed has no ``tiering`` key: it
        reads as ``leader``, the rule it was made with.
        """
        if payload.get("method") not in ("graded", "direct") and "tiering" not in payload:
            payload = {**payload, "tiering": LEGACY_TIERING}
        return cls(**payload)


#: Numeric build options: name -> (whether a value is valid, what a valid value is).
NUMBER_RULES: dict[str, tuple[Callable[[float], bool], str]] = {
    "sig": (lambda v: 0.0 <= v < 1.0, "must be in [0, 1) (0 disables ties)"),
    "reg": (lambda v: math.isfinite(v) and v >= 0.0, "must be a finite number >= 0"),
    "bootstrap": (lambda v: v >= 2, "must be >= 2"),
    "mc_draws": (lambda v: v >= 100, "must be >= 100"),
}


def check_number(name: str, value: float) -> None:
    """Raise :class:`ConfigError` unless ``value`` is valid for the numeric option ``name``.

    Parameters
    ----------
    name
        A key of :data:`NUMBER_RULES` (``sig``, ``reg``, ``bootstrap``, ``mc_draws``).
    value
        The value given.

    Raises
    ------
    ConfigError
        ``--name <rule>, got <value>``; NaN is never valid.
    """
    valid, rule = NUMBER_RULES[name]
    if math.isnan(value) or not valid(value):
        raise ConfigError(f"--{name.replace('_', '-')} {rule}, got {value!r}")


def _choice(name: str, value: str, allowed: tuple[str, ...], context: str = "") -> None:
    if value not in allowed:
        where = f" for {context}" if context else ""
        raise ConfigError(
            f"--{name.replace('_', '-')} {value!r} is not valid{where}; "
            f"choose one of {', '.join(allowed)}"
        )


def resolve_parameters(
    params: BuildParameters, *, single_list_per_query: bool | None = None
) -> BuildParameters:
    """Validate ``params`` and fill in every default.

    Parameters
    ----------
    params
        The options as given by the user.
    single_list_per_query
        For listwise builds without a method: whether every query has exactly
        one list (then ``direct`` is the default, else ``bt``).

    Returns
    -------
    BuildParameters
        A copy with no ``None`` left (options that do not apply are set to
        ``"none"``/the neutral value so that the stored record is explicit).

    Raises
    ------
    ConfigError
        For an unknown source, method or option value, or an option that does
        not apply to the method.
    """
    _choice("source", params.source, SOURCES)
    method = params.method
    if method is None:
        if params.source == "listwise":
            method = "direct" if single_list_per_query in (True, None) else "bt"
        else:
            method = METHODS[params.source][0]
    _choice("method", method, METHODS[params.source], f"--source {params.source}")

    for name in ("sig", "reg", "bootstrap"):
        check_number(name, getattr(params, name))
    _choice("disconnected", params.disconnected, values(Disconnected))

    grade_agg = params.grade_agg
    if method == "graded":
        grade_agg = grade_agg or "median"
        _choice("grade_agg", grade_agg, GRADE_AGGREGATES)
    elif grade_agg not in (None, "none"):
        raise ConfigError(f"--grade-agg applies to --source graded only, not to {method!r}")
    else:
        grade_agg = "none"

    allowed = UNCERTAINTY_BY_METHOD[method]
    uncertainty = params.uncertainty or allowed[0]
    _choice("uncertainty", uncertainty, allowed, f"--method {method}")

    cluster = params.cluster or _default_cluster(params.source, method, uncertainty)
    _choice("cluster", cluster, values(Cluster))
    if cluster == "annotators" and not (method == "bt" and uncertainty == "fisher"):
        raise ConfigError(
            "--cluster annotators applies to --method bt with --uncertainty fisher; "
            "use --uncertainty bootstrap --resample annotators otherwise"
        )

    if uncertainty == "bootstrap":
        resample = params.resample or "comparisons"
        _choice("resample", resample, values(Resample))
    elif params.resample not in (None, "none"):
        raise ConfigError("--resample applies to --uncertainty bootstrap only")
    else:
        resample = "none"

    if method in ("bt", "plackett-luce"):
        solver = params.solver or "ilsr"
        _choice("solver", solver, SOLVERS, f"--method {method}")
    elif params.solver not in (None, "none"):
        raise ConfigError(f"--solver applies to bt and plackett-luce, not to {method!r}")
    else:
        solver = "none"

    seed = 0 if params.seed is None else int(params.seed)
    tiering = _tiering(params, method, uncertainty)
    check_number("mc_draws", params.mc_draws)
    return replace(
        params,
        method=method,
        grade_agg=grade_agg,
        uncertainty=uncertainty,
        cluster=cluster,
        resample=resample,
        solver=solver,
        seed=seed,
        sig=float(params.sig),
        reg=float(params.reg),
        bootstrap=int(params.bootstrap),
        tiering=tiering,
        mc_draws=int(params.mc_draws),
        step_down=bool(params.step_down),
    )


def _default_cluster(source: str, method: str, uncertainty: str) -> str:
    """Lists expanded into pairs cluster by annotator by default: one annotator's
    implied pairs are not independent (docs/tiers-and-audit.md, "How tiers are decided and
    audited")."""
    if source == "listwise" and method == "bt" and uncertainty == "fisher":
        return "annotators"
    return "none"


def _tiering(params: BuildParameters, method: str, uncertainty: str) -> str:
    if uncertainty == "none":  # graded and direct: tiers come from the labels
        if params.tiering not in (None, "none"):
            raise ConfigError(f"--tiering applies to scored methods, not to {method!r}")
        return "none"
    tiering = params.tiering or TIERINGS[0]
    _choice("tiering", tiering, TIERINGS, f"--method {method}")
    return tiering
