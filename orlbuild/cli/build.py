"""``orlbuild build``: build ORLs from the stored judgments of a collection."""

from __future__ import annotations

from typing import Annotated

import pandas as pd
import typer

from orlbuild.builders.parameters import DEFAULT_REG, BuildParameters
from orlbuild.cli.options import CollectionOption, FormatOption, JobsOption, SchedulerOption
from orlbuild.cli.render import emit
from orlbuild.cli.state import get_state, opened_store
from orlbuild.cli.statistics_options import seed_option
from orlbuild.executor import resolve_executor
from orlbuild.limits import SEED_MAX
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


def build_command(
    ctx: typer.Context,
    source: Annotated[Source, typer.Option("--source", help="Which judgments to read.")],
    method: Annotated[
        Method | None,
        typer.Option(
            help="graded: graded; listwise: direct|bt|plackett-luce|borda "
            "(default direct with one list per query, else bt); pairwise: bt|rank-centrality.",
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
        typer.Option(
            help="Family-wise level per query (simultaneous, model), per test (leader); "
            "0 = no ties."
        ),
    ] = BuildParameters.sig,
    tiering: Annotated[
        TieringProcedure | None,
        typer.Option(
            help="posterior (bt default: expected share of wrong stated orders <= fdr), "
            "simultaneous (other methods' default: max-t, false splits per query <= sig), "
            "model (BIC partition) or leader (one test per item, no multiplicity control).",
            show_default=False,
        ),
    ] = None,
    fdr: Annotated[
        float | None,
        typer.Option(
            help="posterior: bound on each query's posterior expected share of wrong "
            "stated orders (default 0.05).",
            show_default=False,
        ),
    ] = None,
    mc_draws: Annotated[
        int, typer.Option(help="Monte Carlo draws of the simultaneous critical value.")
    ] = BuildParameters.mc_draws,
    step_down: Annotated[
        bool,
        typer.Option(
            "--step-down/--single-step",
            help="simultaneous: Romano-Wolf step-down (default) or one critical value.",
        ),
    ] = True,
    ties: Annotated[
        TieModel | None,
        typer.Option(
            help="pairwise: half (default: a tie is half a win each way, as LMArena and "
            "evalica) or davidson (bt: Davidson's tie parameter per query).",
            show_default=False,
        ),
    ] = None,
    annotators: Annotated[
        AnnotatorWeighting | None,
        typer.Option(
            help="pairwise bt: equal (default) or reliability (Crowd-BT: one reliability "
            "per annotator fitted with the strengths).",
            show_default=False,
        ),
    ] = None,
    margin: Annotated[
        float | None,
        typer.Option(
            help="Equivalence margin (log-strength): a tested pair whose simultaneous interval "
            "lies within +-MARGIN is recorded as equivalent (tiers do not change).",
            show_default=False,
        ),
    ] = None,
    uncertainty: Annotated[
        Uncertainty | None,
        typer.Option(
            help="fisher (bt default), bootstrap (rank-centrality default), ep (bt), "
            "none (direct, graded).",
            show_default=False,
        ),
    ] = None,
    cluster: Annotated[
        Cluster | None,
        typer.Option(help="Sandwich by annotator (bt + fisher).", show_default=False),
    ] = None,
    resample: Annotated[
        Resample | None, typer.Option(help="Bootstrap unit.", show_default=False)
    ] = None,
    reg: Annotated[
        float, typer.Option(help="Regularisation c; choix gets alpha = c / n_items.")
    ] = DEFAULT_REG,
    bootstrap: Annotated[
        int, typer.Option(help="Bootstrap resamples.")
    ] = BuildParameters.bootstrap,
    seed: Annotated[
        int | None,
        typer.Option(callback=seed_option, help=f"Random seed, 0 to {SEED_MAX} (default 0)."),
    ] = None,
    solver: Annotated[
        Solver | None, typer.Option(help="Default ilsr (bt, plackett-luce).", show_default=False)
    ] = None,
    grade_agg: Annotated[
        GradeAggregate | None, typer.Option(help="Default median (graded).", show_default=False)
    ] = None,
    disconnected: Annotated[
        Disconnected, typer.Option(help="fail, or tiers: order each component separately.")
    ] = Disconnected.fail,
    on_error: Annotated[
        OnError, typer.Option(help="stop (store nothing) or skip (build the rest, list failures).")
    ] = OnError.stop,
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
