"""``orlbuild calibrate``: what each tiering does on simulated Bradley-Terry data, and with
``--design`` what each way of spending judgments buys (docs/planning.md, "What planning buys")."""

from __future__ import annotations

from typing import Annotated

import typer

from orlbuild.builders.parameters import BuildParameters
from orlbuild.cli.options import FormatOption
from orlbuild.cli.render import emit
from orlbuild.cli.statistics_options import count_callback, count_help, seed_option
from orlbuild.vocabulary import (
    OutputFormat,
    PlanDesign,
    PlanObjective,
    SimulatedMethod,
    SimulatedScenario,
)

__all__ = ["register"]


def calibrate_command(
    method: Annotated[
        SimulatedMethod, typer.Option(help="The pairwise method the simulated builds use.")
    ] = SimulatedMethod.bt,
    tiering: Annotated[
        list[str] | None,
        typer.Option(
            help="simultaneous, single-step (simultaneous without step-down), model, leader, "
            "posterior (repeatable; default: all; with --design: simultaneous and model; "
            "posterior with --design plans its rounds from the posterior)."
        ),
    ] = None,
    items: Annotated[
        str | None,
        typer.Option(
            help="Items per query, LOW-HIGH (default 2-30; with --design one number, 20)."
        ),
    ] = None,
    comparisons_per_pair: Annotated[
        int, typer.Option(help="Comparisons of every pair of items (not with --design).")
    ] = 3,
    queries: Annotated[
        int | None, typer.Option(help="Queries of each simulation (default 200; --design 100).")
    ] = None,
    tiers: Annotated[
        str | None,
        typer.Option(help="True tiers of a mixed query, LOW-HIGH (default 1-5; --design 2-5)."),
    ] = None,
    gap: Annotated[
        float | None,
        typer.Option(help="Log-strength gap between true tiers (default 1.5; --design 1.0)."),
    ] = None,
    sig: Annotated[float, typer.Option(help="The builds' --sig.")] = BuildParameters.sig,
    seed: Annotated[int, typer.Option(callback=seed_option, help="Seed of the simulation.")] = 0,
    bootstrap: Annotated[
        int,
        typer.Option(
            callback=count_callback("bootstrap"),
            help=count_help("Bootstrap resamples (rank-centrality)", "bootstrap"),
        ),
    ] = BuildParameters.bootstrap,
    design: Annotated[
        list[PlanDesign] | None,
        typer.Option(
            "--design",
            help="Compare ways of spending judgments at equal budgets instead: complete (every "
            "pair in turn), uniform (random pairs), planned (orlbuild plan on the build so far, "
            "planned for each --tiering on its own builds) (repeatable).",
            show_default=False,
        ),
    ] = None,
    scenario: Annotated[
        SimulatedScenario,
        typer.Option(
            help="--design: mixed (true tiers), equal (all items equal: false splits) or sparse "
            "(judgments concentrated on the best items)."
        ),
    ] = SimulatedScenario.mixed,
    start: Annotated[
        int, typer.Option(help="--design: judgments per query before the rounds.")
    ] = 60,
    budget_per_query: Annotated[
        int, typer.Option(help="--design: judgments per query added in each round.")
    ] = 60,
    rounds: Annotated[int, typer.Option(help="--design: rounds after the start.")] = 3,
    max_per_query: Annotated[
        int | None,
        typer.Option(
            help="--design planned: at most this many per query and round (default: by value).",
            show_default=False,
        ),
    ] = None,
    repeat_limit: Annotated[
        int, typer.Option(help="--design planned: at most this many asks of one pair per round.")
    ] = 8,
    objective: Annotated[
        PlanObjective,
        typer.Option(help="--design planned: tiers (every open decision) or top."),
    ] = PlanObjective.tiers,
    margin: Annotated[
        float | None,
        typer.Option(
            help="--design planned: the planner's equivalence margin.", show_default=False
        ),
    ] = None,
    fdr: Annotated[
        float | None,
        typer.Option(
            help="--design with --tiering posterior: the bound on the expected share of wrong "
            "stated orders (default 0.05).",
            show_default=False,
        ),
    ] = None,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Simulate queries from a Bradley-Terry model and measure every tiering side by side.

    All-equal queries: the share split into several tiers (a false split).
    Mixed queries (1-5 true tiers): adjusted Rand index between true and built
    tiers, and Kendall tau-b between true and built ranks (multi-tier queries;
    a single built tier counts as 0). No database is used.

    With --design: every design starts from the same --start judgments per
    query and adds --budget-per-query per query in each of --rounds rounds
    (planned: allocated across queries by value). Per round and tiering:
    adjusted Rand and Kendall tau-b (mixed), false splits (equal), wrong stated
    cross-tier orders, top-tier size and the share of queries settled.
    """
    from orlbuild.services.calibration import design_comparison, tiering_calibration

    if design:
        result = design_comparison(
            design, scenario=scenario, method=method, tierings=tiering, items=items,
            queries=queries, tiers=tiers, gap=gap, sig=sig, seed=seed, start=start,
            budget_per_query=budget_per_query, rounds=rounds, max_per_query=max_per_query,
            repeat_limit=repeat_limit, objective=objective, margin=margin, fdr=fdr,
        )  # fmt: skip
        emit(fmt, frame=result.frame, payload=result.payload, title=result.title)
        return
    result = tiering_calibration(
        method=method, tierings=tiering, items=items, queries=queries, tiers=tiers,
        comparisons_per_pair=comparisons_per_pair, gap=gap, sig=sig, seed=seed,
        bootstrap=bootstrap,
    )  # fmt: skip
    shown = result.frame.round(4)
    if fmt is OutputFormat.table:  # short headers so that the table fits a terminal
        shown = shown.drop(columns=["mixed_false_split", "stated_orders"]).rename(
            columns={
                "false_split": "false splits",
                "false_split_se": "± se",
                "wrong_orders": "wrong orders",
                "seconds": "s",
            }
        )
    emit(fmt, frame=shown, payload=result.payload, title=result.title)


def register(app: typer.Typer) -> None:
    """Add ``calibrate`` to the root application."""
    app.command("calibrate")(calibrate_command)
