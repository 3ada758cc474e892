"""The parameters of a build: validated, with every default resolved.

A build stores :meth:`BuildParameters.to_json` so that it can be repeated
exactly (docs/tiers-and-audit.md, "Audit"). Defaults that depend on the method
(uncertainty, solver) or on the data (listwise ``direct`` versus ``bt``) are
filled in by :func:`resolve_parameters` before anything is built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from types import MappingProxyType
from typing import Any

from orlbuild.builders.parameter_specs import BUILD_OPTIONS, attributes_section, check_option
from orlbuild.errors import ConfigError
from orlbuild.vocabulary import (
    AnnotatorWeighting,
    Cluster,
    Disconnected,
    GradeAggregate,
    Method,
    NotApplicable,
    PlanObjective,
    Resample,
    Solver,
    Source,
    TieModel,
    TieringProcedure,
    Uncertainty,
)
from scoring.vocabulary import Word

__all__ = [
    "DEFAULT_FDR",
    "DEFAULT_REG",
    "DEFAULT_TIERING",
    "METHODS",
    "NUMBER_RULES",
    "TIERINGS",
    "BuildParameters",
    "PlanSettings",
    "check_number",
    "check_source",
    "resolve_parameters",
]

#: The default ``--fdr`` (docs/tiers-and-audit.md, "How tiers are decided and audited").
DEFAULT_FDR = 0.05

#: Default regularisation strength ``c``; choix receives ``alpha = c / n_items``
#: so that the pseudo-evidence per item stays constant as queries grow (docs/tiers-and-audit.md,
#: "Build routes"). With ILSR, ``alpha`` acts like ``alpha * (w_i + w_j)``
#: virtual wins each way between every pair, so each item carries about
#: ``2 c`` virtual comparisons in total whatever the number of items (one with the
#: default); without it a 20-0 record between two items is not significant (Wald
#: tests lose power at the boundary) and an item that never wins has no finite score.
DEFAULT_REG = 0.5

#: Methods of each source, the default first (listwise: ``direct`` only with one list per query).
METHODS: Mapping[Source, tuple[Method, ...]] = MappingProxyType(
    {
        Source.graded: (Method.graded,),
        Source.listwise: (Method.direct, Method.bt, Method.plackett_luce, Method.borda),
        Source.pairwise: (Method.bt, Method.rank_centrality),
    }
)
#: ``--tiering`` procedures (docs/tiers-and-audit.md, "How tiers are decided and audited").
TIERINGS = tuple(TieringProcedure)
#: The default ``--tiering`` of each scored method: ``posterior`` for Bradley-Terry (pairwise
#: and expanded listwise), ``simultaneous`` for the others (builds stored before ``posterior``
#: existed keep the tiering they recorded).
DEFAULT_TIERING: Mapping[Method, TieringProcedure] = MappingProxyType(
    {
        Method.bt: TieringProcedure.posterior,
        Method.plackett_luce: TieringProcedure.simultaneous,
        Method.rank_centrality: TieringProcedure.simultaneous,
        Method.borda: TieringProcedure.simultaneous,
    }
)
#: What a stored build made before ``--tiering`` existed used: the leader test.
LEGACY_TIERING = TieringProcedure.leader
_FISHER, _BOOTSTRAP, _EP, _NONE = Uncertainty
#: Uncertainty kinds each method supports, the default first.
UNCERTAINTY_BY_METHOD: Mapping[Method, tuple[Uncertainty, ...]] = MappingProxyType(
    {
        Method.bt: (_FISHER, _BOOTSTRAP, _EP),
        Method.plackett_luce: (_FISHER, _BOOTSTRAP),
        Method.rank_centrality: (_BOOTSTRAP,),
        Method.borda: (_BOOTSTRAP,),
        Method.direct: (_NONE,),
        Method.graded: (_NONE,),
    }
)
#: The word-valued fields of :class:`BuildParameters` and their vocabularies (from
#: :data:`~orlbuild.builders.parameter_specs.BUILD_OPTIONS`); an option that does not apply
#: to every method also reads ``none`` (:class:`NotApplicable`).
_WORD_FIELDS: Mapping[str, tuple[type[Word], ...]] = MappingProxyType(
    {
        name: spec.choices
        for name, spec in BUILD_OPTIONS.items()
        if spec.choices and name != "on_error"  # on_error is the build loop's, not a field
    }
)
_NOT_APPLICABLE = NotApplicable.none


@dataclass(frozen=True)
class BuildParameters:
    """Every option of a build (``None`` means "use the default").

    Each word is a member of its vocabulary in :mod:`orlbuild.vocabulary` (the plain word is
    read into it); an option that does not apply to the method resolves to
    :class:`~orlbuild.vocabulary.NotApplicable` or its vocabulary's ``none``.

    Each option's help, words and range are declared once, in
    :data:`~orlbuild.builders.parameter_specs.BUILD_OPTIONS`; the Attributes section
    below is made from it.
    """

    source: Source
    method: Method | None = None
    grade_agg: GradeAggregate | NotApplicable | None = None
    sig: float = 0.05
    uncertainty: Uncertainty | None = None
    cluster: Cluster | None = None
    resample: Resample | NotApplicable | None = None
    bootstrap: int = 200
    reg: float = DEFAULT_REG
    solver: Solver | NotApplicable | None = None
    seed: int | None = None
    disconnected: Disconnected = Disconnected.fail
    tiering: TieringProcedure | NotApplicable | None = None
    fdr: float | None = None
    mc_draws: int = 2000
    step_down: bool = True
    backed: bool = True
    ties: TieModel | None = None
    annotators: AnnotatorWeighting | None = None
    margin: float | None = None

    def __post_init__(self) -> None:
        """Read each word into its vocabulary: a caller may give the plain word (Python,
        stored JSON), and every word is a member from here on."""
        for name, vocabularies in _WORD_FIELDS.items():
            word = getattr(self, name)
            if word is not None:
                object.__setattr__(self, name, _member(name, word, vocabularies))

    def to_json(self) -> dict[str, Any]:
        """The parameters as a JSON-ready mapping of plain values (stored with the build)."""
        return {
            f.name: value.value if isinstance(value, Word) else value
            for f in fields(self)
            for value in (getattr(self, f.name),)
        }

    @classmethod
    def from_json(cls, payload: dict[str, Any]) -> BuildParameters:
        """Rebuild parameters from :meth:`to_json` output.

        A build stored before ``--tiering`` existed has no ``tiering`` key: it
        reads as ``leader``, the rule it was made with. Every build stored since
        records its tiering, so the default's change to ``posterior`` reads none
        of them differently; one stored before ``--fdr`` has no ``fdr`` (``None``).
        """
        if payload.get("method") not in ("graded", "direct") and "tiering" not in payload:
            payload = {**payload, "tiering": LEGACY_TIERING}
        if "backed" not in payload:  # made by the max-t walk, before backed boundaries
            payload = {**payload, "backed": False}
        return cls(**payload)


BuildParameters.__doc__ = (BuildParameters.__doc__ or "") + attributes_section(
    {f.name for f in fields(BuildParameters)}
)

#: Numeric build options: name -> (whether a value is valid, what a valid value is), read
#: from :data:`~orlbuild.builders.parameter_specs.BUILD_OPTIONS`.
NUMBER_RULES: Mapping[str, tuple[Callable[[float], bool], str]] = MappingProxyType(
    {
        name: (lambda v, spec=spec: spec.problem(v) is None, spec.rule)
        for name, spec in BUILD_OPTIONS.items()
        if spec.type in (int, float) and name != "seed"
    }
)


@dataclass(frozen=True)
class PlanSettings:
    """The options of one round of planning (``orlbuild plan``, the pipeline's ``[plan]``;
    docs/planning.md, "Planning the next judgments"), each default written once here.

    Attributes
    ----------
    budget
        Comparisons to propose (0: only the status).
    max_per_query
        At most this many comparisons for one query (``None``: no cap).
    repeat_limit
        At most this many proposals of one pair in the plan: the pairs across a
        plausible boundary are worth asking many times (docs/planning.md, "What
        planning buys": 2 cut the planned adjusted Rand at 240 judgments from 0.38
        to 0.15 on 10-item queries).
    seed
        Seed of the presentation order, of the order of the pairs and of breaking
        exact value ties.
    objective
        ``tiers`` (every open decision) or ``top`` (decisions of the top tier).
    margin
        Equivalence margin (log-strength), or ``None`` (a stored build's own).
    """

    budget: int
    max_per_query: int | None = None
    repeat_limit: int = 8
    seed: int = 0
    objective: PlanObjective | str = PlanObjective.tiers
    margin: float | None = None


def check_source(source: str) -> str:
    """``source`` if it is a ``--source`` word (:class:`~orlbuild.vocabulary.Source`).

    Parameters
    ----------
    source
        ``graded``, ``listwise`` or ``pairwise``.

    Returns
    -------
    str
        ``source``, unchanged.

    Raises
    ------
    ConfigError
        Any other word, in one line listing the valid ones.
    """
    words = [word.value for word in Source]
    if source not in words:
        raise ConfigError(f"--source {source!r} is not valid; choose one of {', '.join(words)}")
    return source


def check_number(name: str, value: float) -> None:
    """Raise :class:`ConfigError` unless ``value`` is valid for the numeric option ``name``
    (:func:`~orlbuild.builders.parameter_specs.check_option`).

    Parameters
    ----------
    name
        A key of :data:`NUMBER_RULES` (``sig``, ``reg``, ``bootstrap``, ``mc_draws``,
        ``fdr``, ``margin``).
    value
        The value given.

    Raises
    ------
    ConfigError
        ``--name <rule>, got <value>``; NaN is never valid.
    """
    check_option(name, value)


def _member(name: str, word: str, vocabularies: tuple[type[Word], ...]) -> Word:
    """``word`` as a member of the first of ``vocabularies`` that has it."""
    for vocabulary in vocabularies:
        if word in vocabulary._value2member_map_:
            return vocabulary(word)
    raise ConfigError(
        f"--{name.replace('_', '-')} {word!r} is not valid; "
        f"choose one of {', '.join(map(str, vocabularies[0]))}"
    )


def _choice(name: str, value: Word, allowed: tuple[Word, ...], context: str = "") -> None:
    if value not in allowed:
        where = f" for {context}" if context else ""
        raise ConfigError(
            f"--{name.replace('_', '-')} {value!r} is not valid{where}; "
            f"choose one of {', '.join(map(str, allowed))}"
        )


def _applies(word: Word | None) -> bool:
    """Whether an option was given a word other than ``none``."""
    return word not in (None, _NOT_APPLICABLE)


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
        ``none``/the neutral value so that the stored record is explicit).

    Raises
    ------
    ConfigError
        For a method or option value that does not apply to the source or method.
    """
    source = params.source
    method = params.method
    if method is None:
        if source is Source.listwise:
            method = Method.direct if single_list_per_query in (True, None) else Method.bt
        else:
            method = METHODS[source][0]
    _choice("method", method, METHODS[source], f"--source {source}")

    for name in ("sig", "reg", "bootstrap"):
        check_number(name, getattr(params, name))

    grade_agg: GradeAggregate | NotApplicable
    if method is Method.graded:
        grade_agg = params.grade_agg or GradeAggregate.median
        _choice("grade_agg", grade_agg, tuple(GradeAggregate))
    elif _applies(params.grade_agg):
        raise ConfigError(f"--grade-agg applies to --source graded only, not to {method!r}")
    else:
        grade_agg = _NOT_APPLICABLE

    allowed = UNCERTAINTY_BY_METHOD[method]
    uncertainty = params.uncertainty or allowed[0]
    _choice("uncertainty", uncertainty, allowed, f"--method {method}")

    cluster = params.cluster or _default_cluster(source, method, uncertainty)
    if cluster is Cluster.annotators and not (
        method is Method.bt and uncertainty is Uncertainty.fisher
    ):
        raise ConfigError(
            "--cluster annotators applies to --method bt with --uncertainty fisher; "
            "use --uncertainty bootstrap --resample annotators otherwise"
        )

    resample: Resample | NotApplicable
    if uncertainty is Uncertainty.bootstrap:
        resample = params.resample or Resample.comparisons
        _choice("resample", resample, tuple(Resample))
    elif _applies(params.resample):
        raise ConfigError("--resample applies to --uncertainty bootstrap only")
    else:
        resample = _NOT_APPLICABLE

    solver: Solver | NotApplicable
    if method in (Method.bt, Method.plackett_luce):
        solver = params.solver or Solver.ilsr
        _choice("solver", solver, tuple(Solver), f"--method {method}")
    elif _applies(params.solver):
        raise ConfigError(f"--solver applies to bt and plackett-luce, not to {method!r}")
    else:
        solver = _NOT_APPLICABLE

    seed = 0 if params.seed is None else int(params.seed)
    tiering = _tiering(params, method, uncertainty)
    fdr = _fdr(params, tiering)
    ties, annotators = _pairwise_options(params, method, uncertainty)
    check_number("mc_draws", params.mc_draws)
    margin = None if params.margin is None else float(params.margin)
    if margin is not None:
        check_number("margin", margin)
        if uncertainty is Uncertainty.none:
            raise ConfigError(f"--margin applies to scored methods, not to {method!r}")
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
        fdr=fdr,
        mc_draws=int(params.mc_draws),
        step_down=bool(params.step_down),
        backed=bool(params.backed),
        ties=ties,
        annotators=annotators,
        margin=margin,
    )


def _pairwise_options(
    params: BuildParameters, method: Method, uncertainty: Uncertainty
) -> tuple[TieModel, AnnotatorWeighting]:
    """``ties`` and ``annotators``: pairwise options (docs/tiers-and-audit.md, "Build routes")."""
    if params.source is not Source.pairwise:
        for name in ("ties", "annotators"):
            if _applies(getattr(params, name)):
                raise ConfigError(f"--{name} applies to --source pairwise, not to {params.source}")
        return TieModel.none, AnnotatorWeighting.none
    ties = params.ties or TieModel.half
    _choice("ties", ties, (TieModel.half, TieModel.davidson), f"--method {method}")
    annotators = params.annotators or AnnotatorWeighting.equal
    _choice(
        "annotators",
        annotators,
        (AnnotatorWeighting.equal, AnnotatorWeighting.reliability),
        f"--method {method}",
    )
    if ties is TieModel.davidson and method is not Method.bt:
        raise ConfigError("--ties davidson applies to --method bt only")
    if annotators is AnnotatorWeighting.reliability:
        if method is not Method.bt or uncertainty not in (
            Uncertainty.fisher,
            Uncertainty.bootstrap,
        ):
            raise ConfigError(
                "--annotators reliability applies to --method bt with --uncertainty fisher "
                "or bootstrap"
            )
        if ties is TieModel.davidson:
            raise ConfigError("--annotators reliability does not combine with --ties davidson")
        if params.cluster is Cluster.annotators:
            raise ConfigError(
                "--annotators reliability models the annotators already; "
                "it does not combine with --cluster annotators"
            )
    return ties, annotators


def _default_cluster(source: Source, method: Method, uncertainty: Uncertainty) -> Cluster:
    """Lists expanded into pairs cluster by annotator by default: one annotator's
    implied pairs are not independent (docs/tiers-and-audit.md, "How tiers are decided and
    audited")."""
    if source is Source.listwise and method is Method.bt and uncertainty is Uncertainty.fisher:
        return Cluster.annotators
    return Cluster.none


def _tiering(
    params: BuildParameters, method: Method, uncertainty: Uncertainty
) -> TieringProcedure | NotApplicable:
    if uncertainty is Uncertainty.none:  # graded and direct: tiers come from the labels
        if _applies(params.tiering):
            raise ConfigError(f"--tiering applies to scored methods, not to {method!r}")
        return _NOT_APPLICABLE
    tiering = params.tiering or DEFAULT_TIERING[method]
    _choice("tiering", tiering, TIERINGS, f"--method {method}")
    return tiering


def _fdr(params: BuildParameters, tiering: TieringProcedure | NotApplicable) -> float | None:
    """``--fdr``: the ``posterior`` tiering's bound (default 0.05), ``None`` for the others."""
    if tiering is not TieringProcedure.posterior:
        if params.fdr is not None:
            raise ConfigError(f"--fdr applies to --tiering posterior, not to {tiering!r}")
        return None
    fdr = DEFAULT_FDR if params.fdr is None else float(params.fdr)
    check_number("fdr", fdr)
    return fdr
