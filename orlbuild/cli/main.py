"""The ``orlbuild`` Typer application: global options, sub-command registry, error handling.

Sub-commands live in their own modules under :mod:`orlbuild.cli` and are
listed in :data:`COMMANDS` (one line per command); a module is imported only
when its command runs, so ``orlbuild --help`` and ``--version`` load no
SQLAlchemy, pandas or matplotlib. Library code raises
:class:`~orlbuild.errors.OrlbuildError` (or the scoring core's
:class:`~scoring.errors.ScoringError`); only this module turns those into a
one-line message on standard error and exit code 1.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from orlbuild.cli.help_format import tidy_help
from orlbuild.cli.state import AppState, get_state
from orlbuild.errors import OrlbuildError

#: Command name -> (module under ``orlbuild.cli`` whose ``register(app)`` adds it, short help).
#: ``tests/cli/test_startup.py`` checks that each help line is the command's own.
COMMANDS: dict[str, tuple[str, str]] = {
    "build": ("build", "Build one ORL per query from the stored judgments and store the build."),
    "calibrate": (
        "calibrate",
        "Simulate queries from a Bradley-Terry model and measure every tiering side by side.",
    ),
    "plan": (
        "plan",
        "Propose the next comparisons of a pairwise build, and say which queries are settled.",
    ),
    "judge": (
        "judge",
        "Ask an LLM judge each planned pair, in both presentation orders, and write its answers.",
    ),
    "quality": (
        "quality",
        "Check a build: comparisons per item/pair, agreement overall and per annotator, cycles.",
    ),
    "eval": ("evaluation", "Score one or more run files against an ORL file (no database needed)."),
    "measures": (
        "measures",
        "List the measures, their parameters, the RDQ aliases, weight presets and penalties.",
    ),
    "pipeline": (
        "pipeline",
        "Ingest, build ORLs, score and compare systems, write the report - as CONFIG says.",
    ),
    "report": (
        "report",
        "Write one self-contained HTML report: scores with intervals, significance, ORLs, power.",
    ),
    "score": ("score", "Score a system (stored run, or a run file) against the ORLs of a build."),
    "compare": (
        "compare",
        "Test every pair of systems on every measure, and group the systems into tiers.",
    ),
    "power": (
        "power",
        "How many queries each measure needs to separate the systems, and how stably it ranks "
        "them.",
    ),
    "status": (
        "status",
        "Count queries, items, annotators, judgments, run entries and batches.",
    ),
    "db": ("db", "Create and migrate the database schema."),
    "orl": ("orl", "List, show, export and compare built ORLs."),
    "audit": ("audit", "Tie decisions of builds, and auditor overrides (which derive new builds)."),
    "results": ("results", "List, show and export saved evaluations (orlbuild score --save)."),
    "ingest": ("ingest", "Load judgments and runs into the store (one batch per file)."),
    "batches": ("batches", "List and delete ingest batches."),
    "users": (
        "web_users",
        "Add, list and disable the users of `orlbuild serve`, and make their login links.",
    ),
    "round": (
        "rounds",
        "Open a round of the planned pairs of a build, list the rounds, close one.",
    ),
    "serve": ("serve", "Serve the judging pages of the open rounds to the team's browsers."),
    "systems": ("listings", "List the systems that have runs."),
    "collections": ("listings", "List the collections."),
}


def _is_handled(exc: BaseException) -> bool:
    """An :class:`OrlbuildError`, or a ``ScoringError`` (only possible once scoring is loaded)."""
    if isinstance(exc, OrlbuildError):
        return True
    errors = sys.modules.get("scoring.errors")
    return errors is not None and isinstance(exc, errors.ScoringError)


def load_command(name: str) -> Any:
    """The click command ``name``, importing its module (``None`` for an unknown name)."""
    entry = COMMANDS.get(name)
    if entry is None:
        return None
    holder = typer.Typer()
    importlib.import_module(f"orlbuild.cli.{entry[0]}").register(holder)
    group = typer.main.get_group(tidy_help(holder))
    return group.get_command(typer.Context(group), name)


class _LazyErrorHandlingGroup(TyperGroup):
    """Load sub-commands on demand; turn library errors into ``Error: ...`` and exit code 1."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        return load_command(cmd_name)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The command list from :data:`COMMANDS`, without importing any command module."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, text) for name, (_, text) in COMMANDS.items()])

    def invoke(self, ctx: Any) -> Any:  # click or typer._click Context, by typer version
        try:
            return super().invoke(ctx)
        except Exception as exc:
            if not _is_handled(exc):
                raise
            state = ctx.obj if isinstance(ctx.obj, AppState) else AppState()
            if state.debug:
                raise
            message = " ".join(str(exc).split())
            typer.echo(f"Error: {message}", err=True)
            raise typer.Exit(1) from None


app = typer.Typer(
    name="orlbuild",
    cls=_LazyErrorHandlingGroup,
    help="Build ordered reference lists (ORLs) from judgments and score systems with RDQ.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    # Plain top-level help: drawing it with rich costs more than starting Python.
    rich_markup_mode=None,
)


def _version_callback(value: bool) -> None:
    if value:
        from orlbuild import __version__

        typer.echo(f"orlbuild {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="Database URL (default: $ORLBUILD_DB, else sqlite:///orlbuild.db).",
            show_default=False,
        ),
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Show the version."
        ),
    ] = False,
) -> None:
    """Build ordered reference lists (ORLs) from judgments and score systems with RDQ."""
    state = get_state(ctx)
    state.db, state.debug, state.quiet = db, debug, quiet


def run() -> None:
    """Console-script entry point.

    At exit, after every other exit handler (registered first, it runs last),
    every object is moved to the collector's permanent generation
    (:func:`gc.freeze`): the interpreter's last collections then skip the
    objects of NumPy, pandas, SQLAlchemy and the estimators, which took
    0.1-0.4 s of CPU after the command's work was stored and printed
    (docs/performance.md, "Builds on many cores or a cluster"). Objects are
    still freed by their reference counts as the modules are cleared.
    """
    atexit.register(gc.freeze)
    app()
