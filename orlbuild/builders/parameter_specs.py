"""Every build option declared once: its type, its words or range, the routes it applies
to, its limit and its help (docs/pipeline.md, "Build parameters").

:data:`BUILD_OPTIONS` is the one table, after scikit-learn's ``_parameter_constraints``
and ir_measures' ``SUPPORTED_PARAMS``. Everything else is read from it: the word
vocabularies and numeric rules of :mod:`orlbuild.builders.parameters`, the keys the
pipeline's ``[builds.parameters]`` accepts per source, the help and choices of
``orlbuild build``, the table of docs/pipeline.md (:func:`parameter_table`), the
calibration studies' checks and the docstring of
:class:`~orlbuild.builders.parameters.BuildParameters`. A count that sizes work takes its
range from :data:`orlbuild.limits.COUNT_LIMITS`, where its cost is measured, so no range
is written twice. This module loads no NumPy, pandas or SciPy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from orlbuild.errors import ConfigError
from orlbuild.limits import COUNT_LIMITS, SEED_MAX, check_count, check_seed, count_problem
from orlbuild.vocabulary import (
    AnnotatorWeighting,
    Cluster,
    Disconnected,
    GradeAggregate,
    Method,
    NotApplicable,
    OnError,
    Resample,
    Solver,
    Source,
    TieModel,
    TieringProcedure,
    Uncertainty,
    values,
)
from scoring.vocabulary import Word

__all__ = [
    "BUILD_OPTIONS",
    "Interval",
    "ParamSpec",
    "attributes_section",
    "check_option",
    "check_option_ranges",
    "option_help",
    "option_name",
    "parameter_table",
]

Closed = Literal["both", "left", "right", "neither"]


@dataclass(frozen=True)
class Interval:
    """A numeric range, as scikit-learn's ``Interval(Real, 0, 1, closed="left")``.

    Attributes
    ----------
    low, high
        The bounds (``math.inf`` for none above).
    closed
        Which bounds belong to the range: ``both``, ``left``, ``right`` or ``neither``.
    """

    low: float
    high: float
    closed: Closed

    def __contains__(self, value: float) -> bool:
        if math.isnan(value) or math.isinf(value):
            return False
        above = value >= self.low if self.closed in ("both", "left") else value > self.low
        below = value <= self.high if self.closed in ("both", "right") else value < self.high
        return above and below

    def describe(self, *, whole: bool = False) -> str:
        """``in [0, 1)``, ``a finite number >= 0`` or ``a whole number from 0 to 9``."""
        if whole and self.closed == "both" and math.isfinite(self.high):
            return f"a whole number from {_number(self.low)} to {_number(self.high)}"
        if math.isinf(self.high):
            sign = ">=" if self.closed in ("both", "left") else ">"
            return (
                f"{sign} {_number(self.low)}"
                if whole
                else f"a finite number {sign} {_number(self.low)}"
            )
        left = "[" if self.closed in ("both", "left") else "("
        right = "]" if self.closed in ("both", "right") else ")"
        return f"in {left}{_number(self.low)}, {_number(self.high)}{right}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


_SCORED = frozenset({Source.listwise, Source.pairwise})
_EVERY = frozenset(Source)


@dataclass(frozen=True)
class ParamSpec:
    """One build option: what it takes and what it is for.

    Attributes
    ----------
    type
        ``float``, ``int``, ``bool`` or the vocabulary of its words.
    help
        What it does: the CLI's ``--help``, docs/pipeline.md's table and the
        :class:`~orlbuild.builders.parameters.BuildParameters` docstring.
    choices
        The vocabularies a word is read from, the option's own first (an option that
        does not apply to every method also reads :class:`NotApplicable`'s ``none``).
    interval
        The valid range of a number (``None``: no range, or the limit's).
    note
        What a bound means, after the range in messages (``0 disables ties``).
    applies_to
        The sources whose builds read it (the pipeline accepts it there).
    limit
        A key of :data:`orlbuild.limits.COUNT_LIMITS`: a count that sizes work, whose
        range and cost are declared there.
    option
        Whether a user sets it (``orlbuild build``, the pipeline); ``False`` for an
        option kept only to repeat stored builds.
    """

    type: type
    help: str
    choices: tuple[type[Word], ...] = ()
    interval: Interval | None = None
    note: str = ""
    applies_to: frozenset[Source] = _SCORED
    limit: str | None = None
    option: bool = True

    @property
    def range(self) -> Interval | None:
        """The valid range, the count limit's when it has one."""
        if self.limit is not None:
            limit = COUNT_LIMITS[self.limit]
            return Interval(limit.low, limit.high, "both")
        return self.interval

    def problem(self, value: float) -> str | None:
        """What is wrong with ``value`` (``None``: nothing), as ``must be ...``."""
        if self.limit is not None:
            return count_problem(self.limit, int(value))
        if self.interval is None or value in self.interval:
            return None
        return self.rule

    @property
    def rule(self) -> str:
        """``must be in [0, 1) (0 disables ties)``: the range as a message."""
        if self.limit is not None:
            limit = COUNT_LIMITS[self.limit]
            return f"must be a whole number from {limit.low:,} to {limit.high:,}"
        assert self.interval is not None, "only numbers have a rule"
        rule = f"must be {self.interval.describe(whole=self.type is int)}"
        return f"{rule} ({self.note})" if self.note else rule

    @property
    def words(self) -> tuple[str, ...]:
        """The option's own words (its first vocabulary)."""
        return values(self.choices[0]) if self.choices else ()


#: The build options, by :class:`~orlbuild.builders.parameters.BuildParameters` field (and
#: ``on_error``, which the build loop reads), in the order of docs/pipeline.md's table.
BUILD_OPTIONS: Mapping[str, ParamSpec] = MappingProxyType(
    {
        "source": ParamSpec(
            Source, "Which judgments to read.", (Source,), applies_to=_EVERY
        ),
        "method": ParamSpec(
            Method,
            "graded: graded; listwise: direct|bt|plackett-luce|borda (default direct with "
            "one list per query, else bt); pairwise: bt|rank-centrality.",
            (Method,),
            applies_to=_EVERY,
        ),
        "sig": ParamSpec(
            float,
            "Family-wise level per query (simultaneous, model), per test (leader); 0 = no ties.",
            interval=Interval(0.0, 1.0, "left"),
            note="0 disables ties",
        ),
        "tiering": ParamSpec(
            TieringProcedure,
            "posterior (bt default: expected share of wrong stated orders <= fdr), "
            "simultaneous (other methods' default: max-t, false splits per query <= sig), "
            "model (BIC partition) or leader (one test per item, no multiplicity control).",
            (TieringProcedure, NotApplicable),
        ),
        "fdr": ParamSpec(
            float,
            "posterior: bound on each query's posterior expected share of wrong stated "
            "orders (default 0.05).",
            interval=Interval(0.0, 1.0, "left"),
            note="0 states no order",
        ),
        "mc_draws": ParamSpec(
            int, "Monte Carlo draws of the simultaneous critical value.", limit="mc_draws"
        ),
        "step_down": ParamSpec(
            bool, "simultaneous: Romano-Wolf step-down (default) or one critical value."
        ),
        "backed": ParamSpec(
            bool,
            "simultaneous: a boundary only where every pair of well-measured items across it "
            "is separated (default), or the max-t leader walk of older builds.",
            option=False,
        ),
        "margin": ParamSpec(
            float,
            "Equivalence margin (log-strength): a tested pair whose simultaneous interval "
            "lies within +-MARGIN is recorded as equivalent (tiers do not change).",
            interval=Interval(0.0, math.inf, "neither"),
            note="a log-strength difference",
        ),
        "ties": ParamSpec(
            TieModel,
            "pairwise: half (default: a tie is half a win each way, as LMArena and "
            "evalica) or davidson (bt: Davidson's tie parameter per query).",
            (TieModel,),
            applies_to=frozenset({Source.pairwise}),
        ),
        "annotators": ParamSpec(
            AnnotatorWeighting,
            "pairwise bt: equal (default) or reliability (Crowd-BT: one reliability "
            "per annotator fitted with the strengths).",
            (AnnotatorWeighting,),
            applies_to=frozenset({Source.pairwise}),
        ),
        "uncertainty": ParamSpec(
            Uncertainty,
            "fisher (bt default), bootstrap (rank-centrality default), ep (bt), "
            "none (direct, graded).",
            (Uncertainty,),
        ),
        "cluster": ParamSpec(Cluster, "Sandwich by annotator (bt + fisher).", (Cluster,)),
        "resample": ParamSpec(Resample, "Bootstrap unit.", (Resample, NotApplicable)),
        "bootstrap": ParamSpec(int, "Bootstrap resamples.", limit="bootstrap"),
        "reg": ParamSpec(
            float,
            "Regularisation c; choix gets alpha = c / n_items.",
            interval=Interval(0.0, math.inf, "left"),
        ),
        "solver": ParamSpec(Solver, "Default ilsr (bt, plackett-luce).", (Solver, NotApplicable)),
        "seed": ParamSpec(
            int,
            "Random seed (default 0).",
            interval=Interval(0, SEED_MAX, "both"),
        ),
        "disconnected": ParamSpec(
            Disconnected, "fail, or tiers: order each component separately.", (Disconnected,)
        ),
        "grade_agg": ParamSpec(
            GradeAggregate,
            "Default median (graded).",
            (GradeAggregate, NotApplicable),
            applies_to=frozenset({Source.graded}),
        ),
        "on_error": ParamSpec(
            OnError,
            "stop (store nothing) or skip (build the rest, list failures).",
            (OnError,),
            applies_to=_EVERY,
        ),
    }
)  # fmt: skip


def option_name(name: str) -> str:
    """``--mc-draws``: how the CLI names the option ``mc_draws``."""
    return "--" + name.replace("_", "-")


def check_option(name: str, value: float, option: str | None = None) -> float:
    """``value`` when it is valid for the numeric option ``name``; else one ConfigError line.

    Parameters
    ----------
    name
        A numeric key of :data:`BUILD_OPTIONS` (``sig``, ``fdr``, ``mc_draws``, ``margin``,
        ``bootstrap``, ``reg``, ``seed``).
    value
        The value given.
    option
        How the user named it (default the CLI option, ``--sig``).

    Raises
    ------
    ConfigError
        ``--name <rule>, got <value>``; NaN is never valid.
    """
    spec = BUILD_OPTIONS[name]
    if spec.limit is not None:  # its message names the cost, as every count's does
        return check_count(spec.limit, int(value), option or option_name(name))
    if name == "seed":
        return check_seed(int(value), option or "--seed")
    problem = spec.problem(value)
    if problem is not None:
        raise ConfigError(f"{option or option_name(name)} {problem}, got {value!r}")
    return value


def check_option_ranges(options: Mapping[str, object]) -> None:
    """Check every numeric option given (``None`` is "the default") before any data is read.

    Parameters
    ----------
    options
        Option name -> value, e.g. ``dataclasses.asdict`` of a
        :class:`~orlbuild.builders.parameters.BuildParameters`.

    Raises
    ------
    ConfigError
        For the first value out of its range (see :func:`check_option`).
    """
    for name, value in options.items():
        spec = BUILD_OPTIONS.get(name)
        if spec is None or spec.type not in (int, float) or value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{option_name(name)} must be a number, got {value!r}")
        check_option(name, value)


def attributes_section(names: set[str]) -> str:
    """The numpydoc ``Attributes`` section of the options ``names``, from their help.

    Parameters
    ----------
    names
        Keys of :data:`BUILD_OPTIONS` (every field of a dataclass of options).
    """
    unknown = names - set(BUILD_OPTIONS)
    assert not unknown, f"options without a ParamSpec: {sorted(unknown)}"
    lines = ["", "    Attributes", "    ----------"]
    for name, spec in BUILD_OPTIONS.items():
        if name in names:
            allowed = f" Allowed: {_allowed(spec, markdown=False)}." if spec.choices else ""
            lines += [f"    {name}", f"        {option_help(name)}{allowed}"]
    return "\n".join(lines) + "\n"


def option_help(name: str) -> str:
    """The help of the option ``name``, with its range if it is a number (``orlbuild build
    --help``; Typer lists a word option's choices itself)."""
    spec = BUILD_OPTIONS[name]
    if spec.range is not None:
        return f"{spec.help} Allowed: {_allowed(spec, markdown=False)}."
    return spec.help


def _allowed(spec: ParamSpec, *, markdown: bool = True) -> str:
    quote = "`" if markdown else ""
    if spec.choices:
        return ", ".join(f"{quote}{word}{quote}" for word in spec.words)
    if spec.type is bool:
        return f"{quote}true{quote}, {quote}false{quote}"
    rule = spec.rule.removeprefix("must be ")
    return rule.replace("[", "\\[") if markdown else rule


def parameter_table() -> str:
    """The Markdown table of docs/pipeline.md's ``[builds.parameters]`` keys (generated:
    ``python -m orlbuild.builders.parameter_specs``)."""
    rows = ["| key | sources | allowed | what it does |", "|---|---|---|---|"]
    for name, spec in BUILD_OPTIONS.items():
        if not spec.option or name in ("source", "method"):
            continue
        sources = ", ".join(str(s) for s in Source if s in spec.applies_to)
        help_text = spec.help.replace("|", "\\|")
        rows.append(f"| `{name}` | {sources} | {_allowed(spec)} | {help_text} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # pragma: no cover - the generator of the docs table
    print(parameter_table(), end="")
