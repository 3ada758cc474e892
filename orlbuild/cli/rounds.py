"""``orlbuild round open|list|close``: rounds of judging the planned pairs in the browser."""

from __future__ import annotations

from typing import Annotated

import typer

from orlbuild.cli.options import BuildArgument, FormatOption
from orlbuild.cli.render import Columns, emit
from orlbuild.cli.state import opened_store
from orlbuild.vocabulary import OutputFormat

__all__ = ["register"]

round_app = typer.Typer(
    help="Open a round of the planned pairs of a build, list the rounds, close one.",
    no_args_is_help=True,
)


@round_app.command("open")
def open_command(
    ctx: typer.Context,
    build: BuildArgument,
    budget: Annotated[int, typer.Option("--budget", min=1, help="Pairs to plan (`plan`).")],
    per_pair: Annotated[
        int, typer.Option("--per-pair", min=1, help="Different annotators to judge each pair.")
    ] = 1,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the planner.")] = 0,
) -> None:
    """Open a round: the planner's pairs of BUILD become assignments for `orlbuild serve`."""
    from orlbuild.services.rounds import open_round

    with opened_store(ctx, writes=True) as engine:
        record = open_round(engine, build, budget=budget, per_pair=per_pair, seed=seed)
    typer.echo(
        f"opened round {record.id} on build {record.build_id}: {record.assignments} pairs, "
        f"{record.slots} judgments to make"
    )


@round_app.command("list")
def list_command(ctx: typer.Context, fmt: FormatOption = OutputFormat.table) -> None:
    """List the rounds: build, status, pairs, judgments asked and made."""
    from orlbuild.services.rounds import all_rounds

    with opened_store(ctx) as engine:
        rounds = all_rounds(engine)
    emit(
        fmt,
        frame=Columns(
            {
                "round": [r.id for r in rounds],
                "build": [r.build_id for r in rounds],
                "status": [r.status for r in rounds],
                "pairs": [r.assignments for r in rounds],
                "per_pair": [r.per_pair for r in rounds],
                "asked": [r.slots for r in rounds],
                "judged": [r.judged for r in rounds],
                "created_by": [r.created_by for r in rounds],
                "closed_by": [r.closed_by or "" for r in rounds],
            },
            numeric=frozenset({"round", "build", "pairs", "per_pair", "asked", "judged"}),
        ),
        title="Rounds",
    )


@round_app.command("close")
def close_command(
    ctx: typer.Context,
    round_id: Annotated[int, typer.Argument(metavar="ROUND", help="Round id (`round list`).")],
) -> None:
    """Close a round and seal its judgments: one pairwise ingest batch per annotator."""
    from orlbuild.services.rounds import close_round

    with opened_store(ctx, writes=True) as engine:
        closed = close_round(engine, round_id)
    for annotator, (batch, rows) in sorted(closed.batches.items()):
        typer.echo(f"batch {batch}: {rows} judgments of {annotator}")
    typer.echo(
        f"closed round {closed.round.id}: {closed.round.judged} judgments in "
        f"{len(closed.batches)} new batches; rebuild with `orlbuild build`"
    )


def register(app: typer.Typer) -> None:
    """Add the ``round`` sub-commands to the root application."""
    app.add_typer(round_app, name="round")
