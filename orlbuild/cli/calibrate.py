"""``orlbuild calibrate``: what each tiering does on simulated Bradley-Terry data."""

from __future__ import annotations

from typing import Annotated

import typer

from orlbuild.builders.parameters import BuildParameters
from orlbuild.cli.options import FormatOption
from orlbuild.cli.render import emit
from orlbuild.cli.statistics_options import count_callback, count_help, seed_option
from orlbuild.errors import ConfigError
from orlbuild.vocabulary import OutputFormat, SimulatedMethod

__all__ = ["register"]


def _range(option: str, text: str) -> tuple[int, int]:
    """``"2-30"`` -> ``(2, 30)``; ``"5"`` -> ``(5, 5)``."""
    low, _, high = text.partition("-")
    try:
        return int(low), int(high or low)
    except ValueError:
        raise ConfigError(f"{option} must be a range like 2-30, got {text!r}") from None


def calibrate_command(
    method: Annotated[
        SimulatedMethod, typer.Option(help="The pairwise method the simulated builds use.")
    ] = SimulatedMethod.bt,
    tiering: Annotated[
        list[str] | None,
        typer.Option(
            help="simultaneous, single-step (simultaneous without step-down), model, leader "
            "(repeatable; default: all)."
        ),
    ] = None,
    items: Annotated[str, typer.Option(help="Items per query, LOW-HIGH.")] = "2-30",
    comparisons_per_pair: Annotated[
        int, typer.Option(help="Comparisons of every pair of items.")
    ] = 3,
    queries: Annotated[int, typer.Option(help="Queries of each simulation.")] = 200,
    tiers: Annotated[str, typer.Option(help="True tiers of a mixed query, LOW-HIGH.")] = "1-5",
    gap: Annotated[float, typer.Option(help="Log-strength gap between true tiers.")] = 1.5,
    sig: Annotated[float, typer.Option(help="The builds' --sig.")] = BuildParameters.sig,
    seed: Annotated[int, typer.Option(callback=seed_option, help="Seed of the simulation.")] = 0,
    bootstrap: Annotated[
        int,
        typer.Option(
            callback=count_callback("bootstrap"),
            help=count_help("Bootstrap resamples (rank-centrality)", "bootstrap"),
        ),
    ] = 200,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Simulate queries from a Bradley-Terry model and measure every tiering side by side.

    All-equal queries: the share split into several tiers (a false split).
    Mixed queries (1-5 true tiers): adjusted Rand index between true and built
    tiers, and Kendall tau-b between true and built ranks (multi-tier queries;
    a single built tier counts as 0). No database is used.
    """
    from orlbuild.builders.simulation import CalibrationDesign, calibrate_tierings

    design = CalibrationDesign(
        method=method,
        items=_range("--items", items),
        comparisons_per_pair=comparisons_per_pair,
        queries=queries,
        tiers=_range("--tiers", tiers),
        gap=gap,
        sig=sig,
        seed=seed,
        bootstrap=bootstrap,
    )
    frame = calibrate_tierings(design, *([tiering] if tiering else []))
    payload = {"design": {**design.__dict__}, "tierings": frame.to_dict("records")}
    title = (
        f"{method.value}: {queries} all-equal + {queries} mixed queries, {items} items, "
        f"{comparisons_per_pair} comparisons per pair, sig {sig:g}"
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


def register(app: typer.Typer) -> None:
    """Add ``calibrate`` to the root application."""
    app.command("calibrate")(calibrate_command)
