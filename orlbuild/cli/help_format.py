"""How ``--help`` shows options and arguments: what a reader types, nothing else.

Typer's own rendering shows ``<bool>`` after every flag (even ``--help``,
though ``--per-query true`` is rejected), ``<list[str]>`` for a repeatable
option and ``{orl_file}`` in usage lines. :func:`tidy_help` gives every command
of the tree the conventions of the README's examples instead: flags show no
value, a repeatable option shows the value of one occurrence (``-m <str>``),
and arguments are written ``ORL_FILE``, ``[REVISION]`` and ``RUN_FILES...``.
Only the help and usage text change; parsing is Typer's.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand, TyperGroup
from typer.models import DefaultPlaceholder

__all__ = ["tidy_help"]

_LIST_TYPE = re.compile(r"^<list\[(.*)\]>$")
_REQUIRED_ARGUMENT = re.compile(r"^\{(.+)\}(\.\.\.)?$")


def _tidy_parameter(param: Any, ctx: Any) -> None:
    """Give ``param`` the metavar its help line should show (once)."""
    if param.metavar is not None:
        return
    if param.param_type_name == "argument":
        param.metavar = param.name.upper()
        match = _LIST_TYPE.match(param.display_type(ctx))
        if match:  # RUN_FILES... <path>: the type of one value
            shown = f"<{match.group(1).lower()}>"
            param.display_type_rich = lambda ctx: shown
    elif getattr(param, "is_flag", False) or getattr(param, "count", False):
        param.metavar = ""  # a flag takes no value
    elif getattr(param, "multiple", False):
        shown = param.display_type(ctx)
        match = _LIST_TYPE.match(shown)
        param.metavar = f"<{match.group(1)}>" if match else shown


if TYPE_CHECKING:  # the mixin only ever precedes a command class
    _Command = TyperCommand
else:
    _Command = object


class _TidyHelp(_Command):
    """Mixed into each command class: parameters and usage pieces tidied as described above."""

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)
        for param in params:
            _tidy_parameter(param, ctx)
        return params

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces: list[str] = super().collect_usage_pieces(ctx)
        return [_REQUIRED_ARGUMENT.sub(r"\1\2", piece) for piece in pieces]


@cache
def _tidy_class(cls: type) -> type:
    if issubclass(cls, _TidyHelp):
        return cls
    return type(cls.__name__, (_TidyHelp, cls), {"__doc__": cls.__doc__})


def tidy_help(app: typer.Typer) -> typer.Typer:
    """Make every command and group of ``app`` (sub-apps included) use the conventions above.

    Call it before Typer builds the click commands; returns ``app``.

    Parameters
    ----------
    app
        A Typer application whose commands are registered.
    """
    for command in app.registered_commands:
        command.cls = _tidy_class(_given(command.cls) or TyperCommand)
    for group in app.registered_groups:
        sub = group.typer_instance
        own = None if sub is None else _given(sub.info.cls)
        cls = _tidy_class(_given(group.cls) or own or TyperGroup)
        group.cls = cls
        if sub is not None:
            sub.info.cls = cls
            tidy_help(sub)
    return app


def _given(value: Any) -> Any:
    """``value``, or ``None`` when it is Typer's "not given" placeholder."""
    return None if value is None or isinstance(value, DefaultPlaceholder) else value
