"""``orlbuild plan BUILD``: the next comparisons worth judging; ``orlbuild plan-simulate``: what
planning buys on simulated queries."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from orlbuild.cli.options import FormatOption
from orlbuild.cli.render import emit
from orlbuild.cli.state import checked_output, opened_store
from orlbuild.vocabulary import (
    OutputFormat,
    PlanDesign,
    PlanFormat,
    PlanObjective,
    TieringProcedure,
)

__all__ = ["register"]

MarginOption = Annotated[
    float | None,
    typer.Option(
        "--margin",
        help="Equivalence margin (log-strength): a tie whose simultaneous interval lies "
        "within +-MARGIN is shown equivalent.",
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
    ] = 2,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the presentation and pair order.")
    ] = 0,
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
) -> None:
    """Propose the next comparisons of a pairwise build, and say which queries are settled.

    Fill `winner` with a, b or tie and read the file back with `orlbuild
    ingest pairwise`. A summary goes to standard error; with --budget 0 only
    the status of every query is printed (json: the `queries` key).
    """
    from orlbuild.services.plans import plan_build, write_plan, write_plan_file, write_status

    protected = checked_output(ctx, output)
    with opened_store(ctx) as engine:
        result = plan_build(
            engine,
            build,
            budget=budget,
            max_per_query=max_per_query,
            repeat_limit=repeat_limit,
            seed=seed,
            objective=objective,
            margin=margin,
        )
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


def plan_simulate_command(
    design: Annotated[
        list[PlanDesign] | None,
        typer.Option("--design", help="complete, uniform, planned (repeatable; default: all)."),
    ] = None,
    scenario: Annotated[
        str,
        typer.Option(
            help="mixed (true tiers), equal (all items equal: false splits) or sparse "
            "(judgments concentrated on the best items)."
        ),
    ] = "mixed",
    items: Annotated[int, typer.Option(help="Items per query.")] = 20,
    tiers: Annotated[str, typer.Option(help="True tiers of a mixed query, LOW-HIGH.")] = "2-5",
    gap: Annotated[float, typer.Option(help="Log-strength gap between true tiers.")] = 1.0,
    queries: Annotated[int, typer.Option(help="Queries simulated.")] = 100,
    start: Annotated[int, typer.Option(help="Judgments per query before the rounds.")] = 60,
    budget_per_query: Annotated[
        int, typer.Option(help="Judgments per query added in each round.")
    ] = 60,
    rounds: Annotated[int, typer.Option(help="Rounds after the start.")] = 3,
    tiering: Annotated[
        list[TieringProcedure] | None,
        typer.Option(help="Tierings measured (repeatable; default simultaneous and model)."),
    ] = None,
    sig: Annotated[float, typer.Option(help="The builds' --sig.")] = 0.05,
    margin: MarginOption = None,
    objective: ObjectiveOption = PlanObjective.tiers,
    seed: Annotated[int, typer.Option(help="Seed of the simulation.")] = 0,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Compare designs at equal budgets on simulated queries: complete, uniform, planned.

    Every design starts from the same judgments and adds --budget-per-query per
    query in each round (planned: allocated across queries by value). Per
    round and tiering: adjusted Rand and Kendall tau-b (mixed), false splits
    (equal), wrong stated cross-tier orders, top-tier size, settled share.
    No database is used.
    """
    from orlbuild.cli.calibrate import _range
    from orlbuild.services.plans import simulate_designs

    frame = simulate_designs(
        scenario=scenario,
        designs=[d.value for d in design] if design else [d.value for d in PlanDesign],
        tierings=[t.value for t in tiering] if tiering else ["simultaneous", "model"],
        items=items,
        tiers=_range("--tiers", tiers),
        gap=gap,
        queries=queries,
        start=start,
        budget_per_query=budget_per_query,
        rounds=rounds,
        sig=sig,
        margin=margin,
        objective=objective.value,
        seed=seed,
    )
    title = (
        f"{scenario}: {queries} queries x {items} items, {start} judgments + {rounds} rounds of "
        f"{budget_per_query} per query"
    )
    emit(fmt, frame=frame.round(4), payload=frame.to_dict("records"), title=title)


def register(app: typer.Typer) -> None:
    """Add ``plan`` and ``plan-simulate`` to the root application."""
    app.command("plan")(plan_command)
    app.command("plan-simulate")(plan_simulate_command)
