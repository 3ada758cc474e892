"""The ``orlbuild`` Typer application: global options, sub-command registry, error handling.

Sub-commands live in their own modules under :mod:`orlbuild.cli` and are
registered at the bottom of this file. Library code raises
:class:`~orlbuild.errors.OrlbuildError` (or the scoring core's
:class:`~scoring.errors.ScoringError`); only this module turns those into a
one-line message on standard error and exit code 1.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from orlbuild import __version__
from orlbuild.cli.state import AppState, get_state
from orlbuild.errors import OrlbuildError
from scoring.errors import ScoringError

HANDLED_ERRORS: tuple[type[Exception], ...] = (OrlbuildError, ScoringError)


class _ErrorHandlingGroup(TyperGroup):
    """Turn library errors into ``Error: ...`` on standard error and exit code 1."""

    def invoke(self, ctx: Any) -> Any:  # click or typer._click Context, by typer version
        try:
            return super().invoke(ctx)
        except HANDLED_ERRORS as exc:
            state = ctx.obj if isinstance(ctx.obj, AppState) else AppState()
            if state.debug:
                raise
            message = " ".join(str(exc).split())
            typer.echo(f"Error: {message}", err=True)
            raise typer.Exit(1) from None


app = typer.Typer(
    name="orlbuild",
    cls=_ErrorHandlingGroup,
    help="Build ordered reference lists (ORLs) from judgments and score systems with RDQ.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version_callback(value: bool) -> None:
    if value:
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
    """Console-script entry point."""
    app()


# --- sub-command registry (one line per module) ---------------------------------------
from orlbuild.cli import db as _db  # noqa: E402

_db.register(app)
from orlbuild.cli import build as _build  # noqa: E402

_build.register(app)
from orlbuild.cli import calibrate as _calibrate  # noqa: E402

_calibrate.register(app)
from orlbuild.cli import orl as _orl  # noqa: E402

_orl.register(app)
from orlbuild.cli import audit as _audit  # noqa: E402

_audit.register(app)
from orlbuild.cli import quality as _quality  # noqa: E402

_quality.register(app)
from orlbuild.cli import evaluation as _evaluation  # noqa: E402

_evaluation.register(app)
from orlbuild.cli import pipeline as _pipeline  # noqa: E402

_pipeline.register(app)
from orlbuild.cli import report as _report  # noqa: E402

_report.register(app)
from orlbuild.cli import score as _score  # noqa: E402

_score.register(app)
from orlbuild.cli import compare as _compare  # noqa: E402

_compare.register(app)
from orlbuild.cli import power as _power  # noqa: E402

_power.register(app)
from orlbuild.cli import results as _results  # noqa: E402

_results.register(app)
from orlbuild.cli import ingest as _ingest  # noqa: E402

_ingest.register(app)
from orlbuild.cli import batches as _batches  # noqa: E402

_batches.register(app)
from orlbuild.cli import status as _status  # noqa: E402

_status.register(app)
