"""``orlbuild calibrate``: what each tiering does on simulated Bradley-Terry data, and with
``--design`` what each way of spending judgments buys (docs/planning.md, "What planning buys")."""

from __future__ import annotations

from typing import Annotated

import typer

from orlbuild.builders.parameters import BuildParameters
from orlbuild.cli.options import FormatOption
from orlbuild.cli.render import emit
from orlbuild.cli.statistics_options import count_callback, count_help, seed_option
from orlbuild.errors import ConfigError
from orlbuild.vocabulary import OutputFormat, PlanDesign, PlanObjective, SimulatedMethod

__all__ = ["register"]


def _range(option: str, text: str) -> tuple[int, int]:
    """``"2-30"`` -> ``(2, 30)``; ``"5"`` -> ``(5, 5)``."""
    low, _, high = text.partition("-")
    try:
        return int(low), int(high or low)
    except ValueError:
        raise ConfigError(f"{option} must be a range like 2-30, got {text!r}") from None


#: ``--items``, ``--tiers``, ``--gap``, ``--queries`` defaults: tiering calibration, then designs.
_TIERING_DEFAULTS = ("2-30", "1-5", 1.5, 200)
_DESIGN_DEFAULTS = ("20", "2-5", 1.0, 100)


def calibrate_command(
    method: Annotated[
        SimulatedMethod, typer.Option(help="The pairwise method the simulated builds use.")
    ] = SimulatedMethod.bt,
    tiering: Annotated[
        list[str] | None,
        typer.Option(
            help="simultaneous, single-step (simultaneous without step-down), model, leader "
            "(repeatable; default: all; with --design: simultaneous and model)."
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
    ] = 200,
    design: Annotated[
        list[PlanDesign] | None,
        typer.Option(
            "--design",
            help="Compare ways of spending judgments at equal budgets instead: complete (every "
            "pair in turn), uniform (random pairs), planned (orlbuild plan on the build so far) "
            "(repeatable).",
            show_default=False,
        ),
    ] = None,
    scenario: Annotated[
        str,
        typer.Option(
            help="--design: mixed (true tiers), equal (all items equal: false splits) or sparse "
            "(judgments concentrated on the best items)."
        ),
    ] = "mixed",
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
    if design:
        _compare_designs(
            design, scenario, method, tiering, items, queries, tiers, gap, sig, seed, start,
            budget_per_query, rounds, max_per_query, repeat_limit, objective, margin, fmt,
        )  # fmt: skip
        return
    from orlbuild.builders.simulation import CalibrationDesign, calibrate_tierings

    defaults = _TIERING_DEFAULTS
    design_ = CalibrationDesign(
        method=method,
        items=_range("--items", items or defaults[0]),
        comparisons_per_pair=comparisons_per_pair,
        queries=queries or int(defaults[3]),
        tiers=_range("--tiers", tiers or defaults[1]),
        gap=float(defaults[2]) if gap is None else gap,
        sig=sig,
        seed=seed,
        bootstrap=bootstrap,
    )
    frame = calibrate_tierings(design_, *([tiering] if tiering else []))
    payload = {"design": {**design_.__dict__}, "tierings": frame.to_dict("records")}
    title = (
        f"{method.value}: {design_.queries} all-equal + {design_.queries} mixed queries, "
        f"{items or defaults[0]} items, {comparisons_per_pair} comparisons per pair, sig {sig:g}"
    )
    shown = frame.round(4)
    if fmt is OutputFormat.table:  # short headers so that the table fits a terminal
        shown = shown.drop(columns=["mixed_false_split", "stated_orders"]).rename(
            columns={
                "false_split": "false splits",
                "false_split_se": "± se",
                "wrong_orders": "wrong orders",
                "seconds": "s",
            }
        )
    emit(fmt, frame=shown, payload=payload, title=title)


def _compare_designs(
    design: list[PlanDesign],
    scenario: str,
    method: SimulatedMethod,
    tiering: list[str] | None,
    items: str | None,
    queries: int | None,
    tiers: str | None,
    gap: float | None,
    sig: float,
    seed: int,
    start: int,
    budget_per_query: int,
    rounds: int,
    max_per_query: int | None,
    repeat_limit: int,
    objective: PlanObjective,
    margin: float | None,
    fmt: OutputFormat,
) -> None:
    """``calibrate --design``: :func:`orlbuild.services.plans.simulate_designs`."""
    from orlbuild.builders.equivalence import check_margin
    from orlbuild.services.plans import simulate_designs

    if method is not SimulatedMethod.bt:
        raise ConfigError("--design simulates --method bt builds (the planner's model)")
    low, high = _range("--items", items or _DESIGN_DEFAULTS[0])
    if low != high:
        raise ConfigError(f"--items must be one number with --design, got {items!r}")
    if max_per_query is not None and max_per_query < 1:
        raise ConfigError(f"--max-per-query must be >= 1, got {max_per_query}")
    n_queries = queries or int(_DESIGN_DEFAULTS[3])
    frame = simulate_designs(
        scenario=scenario,
        designs=list(dict.fromkeys(d.value for d in design)),
        tierings=tiering or ["simultaneous", "model"],
        items=low,
        tiers=_range("--tiers", tiers or _DESIGN_DEFAULTS[1]),
        gap=float(_DESIGN_DEFAULTS[2]) if gap is None else gap,
        queries=n_queries,
        start=start,
        budget_per_query=budget_per_query,
        rounds=rounds,
        sig=sig,
        margin=check_margin(margin),
        objective=objective.value,
        max_per_query=max_per_query,
        repeat_limit=repeat_limit,
        seed=seed,
    )
    title = (
        f"{scenario}: {n_queries} queries x {low} items, {start} judgments + {rounds} rounds of "
        f"{budget_per_query} per query"
    )
    emit(fmt, frame=frame.round(4), payload=frame.to_dict("records"), title=title)


def register(app: typer.Typer) -> None:
    """Add ``calibrate`` to the root application."""
    app.command("calibrate")(calibrate_command)
