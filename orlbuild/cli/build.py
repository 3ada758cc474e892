"""``orlbuild build``: build ORLs from the stored judgments of a collection."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import pandas as pd
import typer

from orlbuild.builders.parameter_specs import check_option, option_help
from orlbuild.builders.parameters import DEFAULT_REG, BuildParameters
from orlbuild.cli.options import CollectionOption, FormatOption, JobsOption, SchedulerOption
from orlbuild.cli.render import emit
from orlbuild.cli.state import get_state, opened_store
from orlbuild.cli.statistics_options import seed_option
from orlbuild.executor import resolve_executor
from orlbuild.progress import progress_bar
from orlbuild.services.builds import build_and_store
from orlbuild.vocabulary import (
    DEFAULT_COLLECTION,
    AnnotatorWeighting,
    Cluster,
    Disconnected,
    GradeAggregate,
    Method,
    OnError,
    OutputFormat,
    Resample,
    Solver,
    Source,
    TieModel,
    TieringProcedure,
    Uncertainty,
)

__all__ = [
    "register",
]

#: Queries the build summary table shows (``--format csv`` and ``json`` list every query).
SHOWN_QUERIES = 50


def _checked(name: str) -> Callable[[float | None], float | None]:
    """The callback of a numeric option: its range (the build options' table), checked
    before the store is opened."""

    def check(value: float | None) -> float | None:
        return None if value is None else check_option(name, value)

    return check


def build_command(
    ctx: typer.Context,
    source: Annotated[Source, typer.Option("--source", help=option_help("source"))],
    method: Annotated[
        Method | None,
        typer.Option(
            help=option_help("method"),
            show_default=False,
        ),
    ] = None,
    collection: CollectionOption = DEFAULT_COLLECTION,
    name: Annotated[
        str | None,
        typer.Option(
            help="A name for the build; a name already used gets the next version (NAME@2)."
        ),
    ] = None,
    sig: Annotated[
        float,
        typer.Option(callback=_checked("sig"), help=option_help("sig")),
    ] = BuildParameters.sig,
    tiering: Annotated[
        TieringProcedure | None,
        typer.Option(
            help=option_help("tiering"),
            show_default=False,
        ),
    ] = None,
    fdr: Annotated[
        float | None,
        typer.Option(
            callback=_checked("fdr"),
            help=option_help("fdr"),
            show_default=False,
        ),
    ] = None,
    mc_draws: Annotated[
        int, typer.Option(callback=_checked("mc_draws"), help=option_help("mc_draws"))
    ] = BuildParameters.mc_draws,
    step_down: Annotated[
        bool,
        typer.Option(
            "--step-down/--single-step",
            help=option_help("step_down"),
        ),
    ] = True,
    ties: Annotated[
        TieModel | None,
        typer.Option(
            help=option_help("ties"),
            show_default=False,
        ),
    ] = None,
    annotators: Annotated[
        AnnotatorWeighting | None,
        typer.Option(
            help=option_help("annotators"),
            show_default=False,
        ),
    ] = None,
    margin: Annotated[
        float | None,
        typer.Option(
            callback=_checked("margin"),
            help=option_help("margin"),
            show_default=False,
        ),
    ] = None,
    uncertainty: Annotated[
        Uncertainty | None,
        typer.Option(
            help=option_help("uncertainty"),
            show_default=False,
        ),
    ] = None,
    cluster: Annotated[
        Cluster | None,
        typer.Option(help=option_help("cluster"), show_default=False),
    ] = None,
    resample: Annotated[
        Resample | None, typer.Option(help=option_help("resample"), show_default=False)
    ] = None,
    reg: Annotated[
        float, typer.Option(callback=_checked("reg"), help=option_help("reg"))
    ] = DEFAULT_REG,
    bootstrap: Annotated[
        int, typer.Option(callback=_checked("bootstrap"), help=option_help("bootstrap"))
    ] = BuildParameters.bootstrap,
    seed: Annotated[
        int | None,
        typer.Option(callback=seed_option, help=option_help("seed")),
    ] = None,
    solver: Annotated[
        Solver | None, typer.Option(help=option_help("solver"), show_default=False)
    ] = None,
    grade_agg: Annotated[
        GradeAggregate | None, typer.Option(help=option_help("grade_agg"), show_default=False)
    ] = None,
    disconnected: Annotated[
        Disconnected, typer.Option(help=option_help("disconnected"))
    ] = Disconnected.fail,
    on_error: Annotated[OnError, typer.Option(help=option_help("on_error"))] = OnError.stop,
    fmt: FormatOption = OutputFormat.table,
    jobs: JobsOption = 1,
    scheduler: SchedulerOption = None,
) -> None:
    """Build one ORL per query from the stored judgments and store the build."""
    params = BuildParameters(
        source=source, method=method, grade_agg=grade_agg, sig=sig, uncertainty=uncertainty,
        cluster=cluster, resample=resample, bootstrap=bootstrap, reg=reg, solver=solver,
        seed=seed, disconnected=disconnected, tiering=tiering, fdr=fdr, mc_draws=mc_draws,
        step_down=step_down, ties=ties, annotators=annotators, margin=margin,
    )  # fmt: skip
    executor = resolve_executor(jobs, scheduler)
    state = get_state(ctx)
    with opened_store(ctx, writes=True) as engine:
        new = build_and_store(
            engine,
            params,
            collection=collection,
            name=name,
            on_error=on_error,
            progress=lambda total: progress_bar(total, "building ORLs", quiet=state.quiet),
            executor=executor,
        )
    outcome = new.outcome
    for warning in outcome.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if new.new_version is not None:
        typer.echo(f"note: {new.new_version}", err=True)
    frame, payload = new.summary(name)
    title = f"build {new.id} ({new.params.method}, tiering {new.params.tiering})"
    if fmt is OutputFormat.table and len(frame) > SHOWN_QUERIES:  # a table of 1M rows: hours
        title += f": the first {SHOWN_QUERIES} of {len(frame)} queries (all: --format csv|json)"
        frame = frame.head(SHOWN_QUERIES)
    emit(fmt, frame=frame, payload=payload, title=title)
    if fmt is OutputFormat.table and outcome.reliabilities:
        emit(
            fmt,
            frame=pd.DataFrame([r.__dict__ for r in outcome.reliabilities]),
            title="annotator reliabilities (eta: 1 careful, 0.5 random, 0 reversed)",
        )
    if fmt is not OutputFormat.json:  # the JSON document has both as data
        for line in (new.risk_line(), payload["note"]):
            if line is not None:  # after a table on stdout, beside a CSV on stderr
                typer.echo(line, err=fmt is not OutputFormat.table)


def register(app: typer.Typer) -> None:
    """Add ``build`` to the root application."""
    app.command("build")(build_command)
