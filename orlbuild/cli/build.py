"""``orlbuild build``: build ORLs from the stored judgments of a collection."""

from __future__ import annotations

from typing import Annotated

import pandas as pd
import typer

from orlbuild.builders.parameters import DEFAULT_REG, BuildParameters
from orlbuild.cli.render import FormatOption, OutputFormat, emit
from orlbuild.cli.state import get_state, opened_store
from orlbuild.errors import ConfigError
from orlbuild.progress import progress_bar
from orlbuild.services.builds import build_and_store
from orlbuild.services.executor import resolve_executor
from orlbuild.store.read import DEFAULT_COLLECTION

__all__ = ["opened_store", "register"]


def build_command(
    ctx: typer.Context,
    source: Annotated[str, typer.Option("--source", help="graded, listwise or pairwise.")],
    method: Annotated[
        str | None,
        typer.Option(
            help="graded: graded; listwise: direct|bt|plackett-luce|borda "
            "(default direct with one list per query, else bt); pairwise: bt|rank-centrality."
        ),
    ] = None,
    collection: Annotated[str, typer.Option(help="Collection to read.")] = DEFAULT_COLLECTION,
    name: Annotated[str | None, typer.Option(help="A name for the build.")] = None,
    sig: Annotated[
        float,
        typer.Option(
            help="Family-wise level per query (simultaneous, model), per test (leader); "
            "0 = no ties."
        ),
    ] = 0.05,
    tiering: Annotated[
        str | None,
        typer.Option(
            help="simultaneous (default: max-t, false splits per query <= sig), "
            "model (BIC partition) or leader (one test per item, no multiplicity control)."
        ),
    ] = None,
    mc_draws: Annotated[
        int, typer.Option(help="Monte Carlo draws of the simultaneous critical value.")
    ] = 2000,
    step_down: Annotated[
        bool,
        typer.Option(
            "--step-down/--single-step",
            help="simultaneous: Romano-Wolf step-down (default) or one critical value.",
        ),
    ] = True,
    uncertainty: Annotated[
        str | None,
        typer.Option(help="fisher (bt default), bootstrap (rank-centrality default) or ep (bt)."),
    ] = None,
    cluster: Annotated[
        str | None, typer.Option(help="none or annotators (sandwich, bt + fisher).")
    ] = None,
    resample: Annotated[
        str | None, typer.Option(help="Bootstrap unit: comparisons or annotators.")
    ] = None,
    reg: Annotated[
        float, typer.Option(help="Regularisation c; choix gets alpha = c / n_items.")
    ] = DEFAULT_REG,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples.")] = 200,
    seed: Annotated[int | None, typer.Option(help="Random seed (default 0).")] = None,
    solver: Annotated[str | None, typer.Option(help="ilsr (default), opt or mm.")] = None,
    grade_agg: Annotated[
        str | None, typer.Option(help="median (default), mean, max or majority.")
    ] = None,
    disconnected: Annotated[
        str, typer.Option(help="fail, or tiers: order each component separately.")
    ] = "fail",
    on_error: Annotated[
        str, typer.Option(help="stop (store nothing) or skip (build the rest, list failures).")
    ] = "stop",
    fmt: FormatOption = OutputFormat.table,
    jobs: Annotated[
        int,
        typer.Option(
            help="Worker processes for the per-query work: 1 runs serially, -1 uses every core."
        ),
    ] = 1,
    scheduler: Annotated[
        str | None,
        typer.Option(
            help="Dask scheduler address tcp://HOST:PORT (default $ORLBUILD_SCHEDULER); "
            "wins over --jobs."
        ),
    ] = None,
) -> None:
    """Build one ORL per query from the stored judgments and store the build."""
    if on_error not in ("stop", "skip"):
        raise ConfigError(f"--on-error must be stop or skip, got {on_error!r}")
    params = BuildParameters(
        source=source, method=method, grade_agg=grade_agg, sig=sig, uncertainty=uncertainty,
        cluster=cluster, resample=resample, bootstrap=bootstrap, reg=reg, solver=solver,
        seed=seed, disconnected=disconnected, tiering=tiering, mc_draws=mc_draws,
        step_down=step_down,
    )  # fmt: skip
    executor = resolve_executor(jobs, scheduler)
    state = get_state(ctx)
    with opened_store(ctx) as engine:
        build_id, resolved, outcome = build_and_store(
            engine,
            params,
            collection=collection,
            name=name,
            on_error="skip" if on_error == "skip" else "raise",
            progress=lambda total: progress_bar(total, "building ORLs", quiet=state.quiet),
            executor=executor,
        )
    for warning in outcome.warnings:
        typer.echo(f"warning: {warning}", err=True)
    tiers = {q: len(orl.tiers) for q, orl in outcome.orls.items()}
    frame = pd.DataFrame(
        [(q, sum(len(t) for t in orl.tiers), len(orl.tiers)) for q, orl in outcome.orls.items()],
        columns=["query", "items", "tiers"],
    )
    payload = {
        "build": build_id,
        "name": name,
        "method": resolved.method,
        "tiering": resolved.tiering,
        "queries": len(outcome.orls),
        "tiers": tiers,
        "warnings": outcome.warnings,
        "failures": [{"query": f.query, "cause": f.cause} for f in outcome.failures],
    }
    emit(
        fmt,
        frame=frame,
        payload=payload,
        title=f"build {build_id} ({resolved.method}, tiering {resolved.tiering})",
    )


def register(app: typer.Typer) -> None:
    """Add ``build`` to the root application."""
    app.command("build")(build_command)
