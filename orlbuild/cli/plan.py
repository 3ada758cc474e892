"""``orlbuild plan BUILD``: the next comparisons worth judging (what planning buys on simulated
queries: ``orlbuild calibrate --design``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from orlbuild.builders.parameters import PlanSettings
from orlbuild.cli.options import OutputForceOption
from orlbuild.cli.render import say
from orlbuild.cli.state import checked_output, opened_store
from orlbuild.vocabulary import (
    PlanFormat,
    PlanObjective,
)

__all__ = ["register"]

MarginOption = Annotated[
    float | None,
    typer.Option(
        "--margin",
        help="Equivalence margin (log-strength; default: the build's): a tie whose "
        "simultaneous interval lies within +-MARGIN is shown equivalent.",
        show_default=False,
    ),
]
ObjectiveOption = Annotated[
    PlanObjective,
    typer.Option("--objective", help="tiers: every open decision; top: the top tier first."),
]


def plan_command(
    ctx: typer.Context,
    build: Annotated[str, typer.Argument(help="Build id or name (pairwise).")],
    budget: Annotated[
        int, typer.Option("--budget", min=0, help="Comparisons to propose (0: only the status).")
    ],
    max_per_query: Annotated[
        int | None,
        typer.Option("--max-per-query", min=1, help="At most this many for one query."),
    ] = None,
    repeat_limit: Annotated[
        int, typer.Option("--repeat-limit", min=1, help="At most this many asks of one pair.")
    ] = PlanSettings.repeat_limit,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the presentation and pair order.")
    ] = PlanSettings.seed,
    objective: ObjectiveOption = PlanObjective.tiers,
    margin: MarginOption = None,
    fmt: Annotated[
        PlanFormat,
        typer.Option(
            "--format",
            help="tsv, csv, jsonl (the arena shape, winner left empty) or json (pairs, the "
            "decision each serves, and every query's status).",
        ),
    ] = PlanFormat.tsv,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the plan here (default: stdout).")
    ] = None,
    with_text: Annotated[
        bool,
        typer.Option(
            "--with-text",
            help="Add query_text, item_a_text and item_b_text columns (`ingest text`), to judge "
            "from the file alone.",
        ),
    ] = False,
    force: OutputForceOption = False,
) -> None:
    """Propose the next comparisons of a pairwise build, and say which queries are settled.

    Fill `winner` with a, b or tie and read the file back with `orlbuild
    ingest pairwise`. A summary goes to standard error; with --budget 0 only
    the status of every query is printed (json: the `queries` key). The plan
    serves the build's tiering: a --tiering model build's cuts and placements
    that could change, any other build's unbacked boundaries, open ties and
    poorly measured items.
    """
    from orlbuild.services.deleted_batches import deleted_batches_notice
    from orlbuild.services.plans import (
        attach_texts,
        plan_build,
        write_plan,
        write_plan_file,
        write_status,
    )

    protected = checked_output(ctx, output, force=force)
    with opened_store(ctx) as engine:
        say(deleted_batches_notice(engine, build, "the plan"))
        settings = PlanSettings(budget, max_per_query, repeat_limit, seed, objective, margin)
        result = plan_build(engine, build, settings)
        without_text = attach_texts(engine, result) if with_text else 0
    statuses = [q.status for q in result.plan.queries.values()]
    summary = (
        f"build {result.record.id}: {statuses.count('settled')} settled, "
        f"{statuses.count('open')} open queries; {len(result.plan.pairs)} comparisons proposed"
        + (f"; {len(result.skipped)} queries not planned" if result.skipped else "")
    )
    if output is None:
        (write_status if budget == 0 else write_plan)(result, fmt, sys.stdout)
    else:
        write_plan_file(result, fmt, output, status_only=budget == 0, protected=protected)
        typer.echo(f"wrote {output}", err=True)
    typer.echo(summary, err=True)
    if without_text:
        typer.echo(
            f"Warning: {without_text} of the planned queries and items have no stored text "
            "(see `orlbuild ingest text`)",
            err=True,
        )


def register(app: typer.Typer) -> None:
    """Add ``plan`` to the root application."""
    app.command("plan")(plan_command)
