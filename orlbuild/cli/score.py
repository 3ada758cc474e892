"""``orlbuild score``: a system's run scored against a stored build's ORLs.

Its shared options (``--build``, ``--system``, ``--missing``) live in
:mod:`orlbuild.cli.options`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from orlbuild.cli.input_options import DuplicatesOption, ScorePrecisionOption
from orlbuild.cli.measures import RelLevelOption, measures_at_level
from orlbuild.cli.options import (
    BuildOption,
    FormatOption,
    MeasureOption,
    MissingOption,
    PerQueryOption,
)
from orlbuild.cli.render import emit
from orlbuild.cli.score_tables import score_report
from orlbuild.cli.state import opened_store
from orlbuild.errors import ConfigError, InputError
from orlbuild.orl_io.eval_files import read_run_file
from orlbuild.services.evaluations import (
    SystemScores,
    build_summary,
    score_and_save,
    score_run,
    score_systems,
)
from orlbuild.services.posterior_audit import stored_one_tier_note
from orlbuild.vocabulary import InputFormat, OutputFormat
from scoring.errors import ScoringError
from scoring.vocabulary import DuplicatePolicy, MissingPolicy, ScorePrecisionName

if TYPE_CHECKING:
    from orlbuild.services.databases import Engine

__all__ = [
    "register",
    "warn",
]


def score_command(
    ctx: typer.Context,
    build: BuildOption,
    measure: MeasureOption,
    rel_level: RelLevelOption = None,
    system: Annotated[
        str | None, typer.Option("--system", "-s", help="A system with a stored run.")
    ] = None,
    run: Annotated[Path | None, typer.Option("--run", help="A TREC run file instead.")] = None,
    run_format: Annotated[
        InputFormat | None, typer.Option("--run-format", help="Force the run file's format.")
    ] = None,
    per_query: PerQueryOption = False,
    missing: MissingOption = MissingPolicy.zero,
    duplicates: DuplicatesOption = DuplicatePolicy.error,
    save: Annotated[
        bool, typer.Option("--save", help="Store the evaluation for `orlbuild results`.")
    ] = False,
    score_precision: ScorePrecisionOption = ScorePrecisionName.float32,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Score a system (stored run, or a run file) against the ORLs of a build."""
    if (system is None) == (run is None):
        raise ConfigError("give exactly one of --system NAME (a stored run) or --run FILE")
    with opened_store(ctx, writes=save) as engine:
        scores = _score(
            engine,
            build,
            system,
            run,
            measures_at_level(measure, rel_level),
            missing,
            duplicates,
            score_precision,
            run_format,
        )
        saved = score_and_save(engine, scores) if save else None
        note = stored_one_tier_note(engine, scores.build.id)  # a reference that states little
    extra = {"build": build_summary(scores.build), "system": scores.system, "reference_note": note}
    table, payload = score_report(
        scores.evaluation, per_query=per_query, extra=extra, reasons=scores.undefined_reasons
    )
    if saved is not None:
        payload["evaluation"] = {"id": saved}
        typer.echo(f"saved as evaluation {saved} (see `orlbuild results show {saved}`)", err=True)
    warn(payload["warnings"], fmt)
    title = f"{scores.system} vs build {scores.build.id}"
    emit(fmt, frame=table, payload=payload, title=title, note=payload["conventions"].get("ndcg"))
    if note is not None and fmt is not OutputFormat.json:
        typer.echo(note, err=fmt is not OutputFormat.table)


def _score(
    engine: Engine,
    build: str,
    system: str | None,
    run: Path | None,
    measures: list[str],
    missing: MissingPolicy,
    duplicates: DuplicatePolicy,
    precision: ScorePrecisionName = ScorePrecisionName.float32,
    run_format: InputFormat | None = None,
) -> SystemScores:
    """Score the stored run of ``system``, or the run file ``run`` (named by its stem)."""
    if run is None:
        assert system is not None
        return score_systems(
            engine,
            build,
            [system],
            measures=measures,
            missing=missing,
            score_precision=precision,
        )[system]
    notes: list[str] = []
    frame = read_run_file(
        run,
        fmt=run_format,
        duplicates=duplicates,
        notes=notes,
        score_precision=precision,
    )
    for note in notes:  # e.g. columns a run does not use: reported, never dropped silently
        typer.echo(f"Warning: {note}", err=True)
    try:
        return score_run(
            engine,
            build,
            frame,
            system=run.stem,
            measures=measures,
            missing=missing,
            run_file=str(run),
            score_precision=precision,
        )
    except ScoringError as exc:  # e.g. no query shared with the build: name the file
        raise InputError(str(exc), file=str(run)) from None


def warn(notes: list[str], fmt: OutputFormat) -> None:
    """Print warnings on standard error (JSON carries them in the document instead)."""
    if fmt is not OutputFormat.json:
        for note in notes:
            typer.echo(f"Warning: {note}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``score`` to the application."""
    app.command("score")(score_command)
