"""The range checks of a round of planning's options (``orlbuild plan``, the pipeline's
``[plan]``; docs/planning.md, "Planning the next judgments"), declared as the build
options are (:mod:`orlbuild.builders.parameter_specs`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType

from orlbuild.builders.parameter_specs import Interval, ParamSpec, option_name
from orlbuild.errors import ConfigError

__all__ = ["PLAN_OPTIONS", "check_plan_options"]

#: The counts of a plan and their ranges (``margin`` and ``seed`` are the build's).
PLAN_OPTIONS: Mapping[str, ParamSpec] = MappingProxyType(
    {
        "budget": ParamSpec(
            int,
            "Comparisons to propose (0: only the status).",
            interval=Interval(0, math.inf, "left"),
        ),
        "max_per_query": ParamSpec(
            int,
            "At most this many comparisons for one query.",
            interval=Interval(1, math.inf, "left"),
        ),
        "repeat_limit": ParamSpec(
            int, "At most this many proposals of one pair.", interval=Interval(1, math.inf, "left")
        ),
    }
)


def check_plan_options(budget: int, max_per_query: int | None, repeat_limit: int) -> None:
    """Raise :class:`ConfigError` for a negative budget, or a cap or repeat limit below 1
    (``orlbuild plan`` and the pipeline's ``[plan]`` table check with this)."""
    given = {"budget": budget, "max_per_query": max_per_query, "repeat_limit": repeat_limit}
    for name, value in given.items():
        problem = None if value is None else PLAN_OPTIONS[name].problem(value)
        if problem is not None:
            raise ConfigError(f"{option_name(name)} {problem}, got {value}")
