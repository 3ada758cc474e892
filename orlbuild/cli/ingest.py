"""``orlbuild ingest listwise|pairwise|graded FILE``, ``ingest run FILE...``: load judgments and
runs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer

from orlbuild.cli.ingest_text import text_command
from orlbuild.cli.input_options import (
    IngestCollectionOption,
    InputFileArgument,
    InputFormatOption,
    PairwiseQueryOption,
    RunDuplicatesOption,
    RunFilesArgument,
    RunSystemOption,
    ScorePrecisionOption,
    SystemFromOption,
)
from orlbuild.cli.state import get_state, opened_store
from orlbuild.ingest import DuplicatePolicy
from orlbuild.progress import ingest_progress, progress_bar
from orlbuild.services.ingests import IngestResult, create_missing_store
from orlbuild.services.interrupted_ingests import IngestInterrupted, ingest_file_interruptibly
from orlbuild.services.run_ingests import ingest_runs
from orlbuild.vocabulary import DEFAULT_COLLECTION, InputKind
from scoring.vocabulary import ScorePrecisionName

if TYPE_CHECKING:
    from orlbuild.services.databases import Engine

ingest_app = typer.Typer(
    help="Load judgments and runs into the store (one batch per file).", no_args_is_help=True
)

#: ``ingest pairwise --require-answers``: an empty winner is an error, not a pair skipped.
RequireAnswersOption = Annotated[
    bool,
    typer.Option(
        "--require-answers",
        help="Refuse a row whose winner is empty (by default such rows, the pairs of a plan "
        "file not judged yet, are skipped and counted).",
    ),
]

#: ``ingest --columns``: the file's column names mapped onto ours.
ColumnsOption = Annotated[
    str | None,
    typer.Option(
        "--columns",
        help="Read columns named otherwise, e.g. --columns preferred=winner,other=loser "
        "(the file's name on the left, ours on the right).",
    ),
]

#: Exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it.
INTERRUPTED_EXIT = 130


@contextmanager
def _exit_when_interrupted() -> Iterator[None]:
    """Say what an ingest stopped by Ctrl-C left in the store, and exit 130."""
    try:
        yield
    except IngestInterrupted as stop:
        typer.echo(str(stop), err=True)
        raise typer.Exit(INTERRUPTED_EXIT) from None


@contextmanager
def _ingest_store(ctx: typer.Context) -> Iterator[Engine]:
    """The store to ingest into; a missing SQLite file is created first, saying so."""
    created = create_missing_store(get_state(ctx).db_url)
    if created is not None:
        typer.echo(created, err=True)
    with opened_store(ctx, writes=True) as engine:
        yield engine


def _emit(results: list[IngestResult]) -> None:
    """Each outcome on standard output, its warnings on standard error."""
    for result in results:
        for warning in result.warnings:
            typer.echo(f"Warning: {warning}", err=True)
        typer.echo(result.message)


def _ingest(ctx: typer.Context, kind: InputKind, file: str, **options: Any) -> None:
    """Ingest one file with a progress display (standard error), print the outcome.

    ``options`` are the command's, passed on to
    :func:`~orlbuild.services.interrupted_ingests.ingest_file_interruptibly`.
    """
    quiet = get_state(ctx).quiet
    with _ingest_store(ctx) as engine, _exit_when_interrupted():
        result = ingest_file_interruptibly(
            engine,
            kind,
            file,
            progress=lambda size: ingest_progress(size, f"ingest {kind}", quiet=quiet),
            **options,
        )
    _emit([result])


#: Judgment kinds and their help text (the command bodies are identical).
JUDGMENT_COMMANDS = {
    InputKind.listwise: (
        "Ingest listwise judgments: query, annotator (optional), item, rank (or tiers)."
    ),
    InputKind.pairwise: (
        "Ingest pairwise preferences: query, annotator (optional), winner, loser, tie, "
        "count (optional); or the arena, evalica, crowd-kit, prefs-release and trec-prefs "
        "shapes."
    ),
    InputKind.graded: (
        "Ingest graded labels: TREC qrels, or query, annotator (optional), item, grade."
    ),
}


def _judgment_command(kind: InputKind) -> Callable[..., None]:
    """The ``ingest KIND FILE`` command for one judgment kind."""

    def command(
        ctx: typer.Context,
        file: InputFileArgument,
        collection: IngestCollectionOption = DEFAULT_COLLECTION,
        fmt: InputFormatOption = None,
        columns: ColumnsOption = None,
    ) -> None:
        _ingest(ctx, kind, file, collection=collection, fmt=fmt, columns=columns)

    command.__doc__ = JUDGMENT_COMMANDS[kind]
    return command


for _kind in (InputKind.listwise, InputKind.graded):
    ingest_app.command(_kind.value)(_judgment_command(_kind))


@ingest_app.command("pairwise", help=JUDGMENT_COMMANDS[InputKind.pairwise])
def pairwise_command(
    ctx: typer.Context,
    file: InputFileArgument,
    collection: IngestCollectionOption = DEFAULT_COLLECTION,
    fmt: InputFormatOption = None,
    query: PairwiseQueryOption = None,
    require_answers: RequireAnswersOption = False,
    columns: ColumnsOption = None,
) -> None:
    """Ingest pairwise preferences (see JUDGMENT_COMMANDS)."""
    _ingest(
        ctx,
        InputKind.pairwise,
        file,
        collection=collection,
        fmt=fmt,
        query=query,
        require_answers=require_answers,
        columns=columns,
    )


@ingest_app.command("run")
def run_command(
    ctx: typer.Context,
    files: RunFilesArgument,
    system: RunSystemOption = None,
    system_from: SystemFromOption = None,
    collection: IngestCollectionOption = DEFAULT_COLLECTION,
    fmt: InputFormatOption = None,
    duplicates: RunDuplicatesOption = DuplicatePolicy.error,
    score_precision: ScorePrecisionOption = ScorePrecisionName.float32,
    columns: ColumnsOption = None,
) -> None:
    """Ingest systems' runs (TREC run, or query, item, rank, score), one batch and one
    transaction per file, the system named by --system (one file) or --system-from; with
    several files, every one is named and checked before any is stored."""
    if system is not None and (system_from is not None or len(files) > 1):
        raise typer.BadParameter(
            "--system names the one run of one file: use --system-from tag|stem for several",
            param_hint="'--system'",
        )
    if system is None and system_from is None:
        raise typer.BadParameter(
            "name the system: --system NAME (one file) or --system-from tag|stem",
            param_hint="'--system' / '--system-from'",
        )
    if system is not None:
        _ingest(
            ctx,
            InputKind.run,
            files[0],
            collection=collection,
            fmt=fmt,
            system=system,
            duplicates=duplicates,
            score_precision=score_precision,
            columns=columns,
        )
        return
    quiet = get_state(ctx).quiet
    with _ingest_store(ctx) as engine, _exit_when_interrupted():
        results = ingest_runs(
            engine,
            files,
            collection=collection,
            system_from=system_from,
            fmt=fmt,
            duplicates=duplicates,
            score_precision=score_precision,
            progress=lambda total, label: progress_bar(total, label, quiet=quiet),
            columns=columns,
        )
    _emit(results)


ingest_app.command("text")(text_command)


def register(app: typer.Typer) -> None:
    """Add the ``ingest`` sub-commands to the root application."""
    app.add_typer(ingest_app, name="ingest")
