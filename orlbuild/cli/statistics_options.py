"""The options of the significance tests and resampling, declared once (``--test``,
``--correction``, ``--alpha``, ``--permutations``, ``--seed``), with the
callbacks that check their limits before any work
(docs/development.md, "Development"). Like :mod:`orlbuild.cli.options`, this
module loads no NumPy, pandas, SciPy or SQLAlchemy.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any

import typer

from orlbuild.limits import (
    COUNT_LIMITS,
    PERMUTATIONS_MAX,
    SEED_MAX,
    check_count,
    check_permutations,
    check_seed,
)
from scoring.settings import TestSettings
from scoring.vocabulary import CorrectionName, SignificanceTest

__all__ = [
    "AlphaOption",
    "CorrectionOption",
    "PermutationsOption",
    "SeedOption",
    "TestOption",
    "count_callback",
    "count_help",
    "permutations_option",
    "seed_option",
    "with_test_settings",
]

TestOption = Annotated[
    SignificanceTest | None,
    typer.Option(
        "--test",
        help="max-t (studentized step-down Tukey HSD; default for 3+ systems), tukey-hsd, "
        "randomization (sign flips; default for 2) or t.",
        show_default=False,
    ),
]


def seed_option(value: int | None) -> int | None:
    """``--seed`` callback: a seed within the documented limit, checked before any work."""
    return None if value is None else check_seed(value)


def permutations_option(value: int) -> int:
    """``--permutations`` callback: 1 to the documented cap, checked before any work."""
    return check_permutations(value)


def count_callback(name: str) -> Callable[[int], int]:
    """The callback of a count option that sizes work (``--subsamples``, ``--bootstrap``):
    its documented limit (:data:`orlbuild.limits.COUNT_LIMITS`), checked before any work."""

    def check(value: int) -> int:
        return check_count(name, value)

    return check


def count_help(text: str, name: str) -> str:
    """``text`` with the count's limit, for ``--help``."""
    return f"{text} (at most {COUNT_LIMITS[name].high:,})."


PermutationsOption = Annotated[
    int,
    typer.Option(
        "--permutations",
        callback=permutations_option,
        help="Draws of the randomization tests (a minimum: raised when too few to reject; "
        f"at most {PERMUTATIONS_MAX:,}).",
    ),
]
SeedOption = Annotated[
    int,
    typer.Option(
        "--seed",
        callback=seed_option,
        help=f"Seed of sign flips (and subsets), 0 to {SEED_MAX}.",
    ),
]
CorrectionOption = Annotated[
    CorrectionName | None,
    typer.Option(
        "--correction",
        help="Adjust p-values over the pairs of each measure (default holm; "
        "not with max-t or tukey-hsd, which are family-wise already).",
        show_default=False,
    ),
]
AlphaOption = Annotated[
    float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level.")
]


#: ``--test``, ``--permutations``, ``--correction``, ``--alpha``, ``--seed``: the fields of
#: :class:`~scoring.settings.TestSettings`, in its order, with its defaults.
_TEST_SETTINGS_OPTIONS = (
    ("test", TestOption, TestSettings.test),
    ("permutations", PermutationsOption, TestSettings.permutations),
    ("correction", CorrectionOption, TestSettings.correction),
    ("alpha", AlphaOption, TestSettings.alpha),
    ("seed", SeedOption, TestSettings.seed),
)


def with_test_settings(command: Callable[..., None]) -> Callable[..., None]:
    """Declare the test options once for every command that tests pairs of systems.

    ``command`` takes a ``settings: TestSettings`` parameter; the command Typer
    registers takes ``--test``, ``--permutations``, ``--correction``, ``--alpha``
    and ``--seed`` in its place (same help, same order) and passes
    ``command`` the :class:`~scoring.settings.TestSettings` they make.

    Parameters
    ----------
    command
        A Typer command function with a ``settings`` parameter; its annotations
        are resolved here, so the aliases it uses are declared before it.

    Returns
    -------
    Callable
        The command with the five options instead of ``settings``.
    """
    signature = inspect.signature(command, eval_str=True)
    names = [name for name, _, _ in _TEST_SETTINGS_OPTIONS]

    @functools.wraps(command)
    def with_settings(*args: Any, **kwargs: Any) -> None:
        settings = TestSettings(*(kwargs.pop(name) for name in names))
        command(*args, settings=settings, **kwargs)

    parameters: list[inspect.Parameter] = []
    for parameter in signature.parameters.values():
        if parameter.name != "settings":
            parameters.append(parameter)
            continue
        parameters.extend(
            inspect.Parameter(name, parameter.kind, annotation=option, default=default)
            for name, option, default in _TEST_SETTINGS_OPTIONS
        )
    # what Typer reads: the five options in the place of ``settings``
    with_settings.__dict__["__signature__"] = signature.replace(parameters=parameters)
    with_settings.__annotations__ = {p.name: p.annotation for p in parameters} | {
        "return": signature.return_annotation
    }
    return with_settings
