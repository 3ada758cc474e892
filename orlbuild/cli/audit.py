"""``orlbuild audit [BUILD]`` (tie decisions) and ``orlbuild audit override BUILD ...``."""

from __future__ import annotations

from typing import Annotated, Any

import pandas as pd
import typer
from typer.core import TyperGroup

from orlbuild.cli.options import FormatOption, QueryFilterOption, RawCellsOption
from orlbuild.cli.posterior_evidence import posterior_payload, show_posterior_audit
from orlbuild.cli.render import emit, say
from orlbuild.cli.state import opened_store
from orlbuild.records import OverrideRequest
from orlbuild.services.audits import audit_builds, derive_override
from orlbuild.services.deleted_batches import deleted_batches_notice
from orlbuild.services.posterior_audit import posterior_audit
from orlbuild.vocabulary import OutputFormat

__all__ = ["register"]


class _DecisionsByDefault(TyperGroup):
    """``audit BUILD`` means ``audit decisions BUILD``; ``audit override ...`` is the override."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # click's Context
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h")):
            args = ["decisions", *args]
        return super().parse_args(ctx, args)


audit_app = typer.Typer(
    cls=_DecisionsByDefault,
    help="Tie decisions of builds, and auditor overrides (which derive new builds).",
)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON records with missing values as null (not NaN or pandas.NA)."""
    return [
        {k: (None if not isinstance(v, str) and pd.isna(v) else v) for k, v in row.items()}
        for row in frame.astype(object).to_dict("records")
    ]


@audit_app.command("decisions")
def decisions_command(
    ctx: typer.Context,
    build: Annotated[
        str | None, typer.Argument(help="Build id, name or NAME@N version (default: every build).")
    ] = None,
    query: QueryFilterOption = None,
    fmt: FormatOption = OutputFormat.table,
    text: Annotated[
        bool,
        typer.Option(
            "--text/--no-text",
            help="Print the leader's and the item's stored title or text (shortened) beside "
            "them, when `ingest text` stored any.",
        ),
    ] = True,
    raw_cells: RawCellsOption = False,
) -> None:
    """List tie/separate decisions, newest build first, with the items' intervals.

    Per query: the procedure (simultaneous, model, leader), its family size and
    critical value or BIC penalty, the stated orders no test backs and the
    under-judged items; per decision: z and the critical value, or the
    log-likelihood gain and BIC change; per boundary: its weakest crossing pair;
    per annotator (--annotators reliability): the reliability with its interval
    and the separations that flip without them. JSON also lists the overrides
    behind derived builds (who, why).
    """
    with opened_store(ctx) as engine:
        if build is not None:
            say(deleted_batches_notice(engine, build, "the audit", needs_judgments=False))
        audit = audit_builds(engine, build, query, texts=text)
        ids = list(dict.fromkeys(int(b) for b in audit.summary["build"]))
        posterior = posterior_audit(engine, ids, query)
    summary, decisions, overrides = audit.summary, audit.decisions, audit.overrides
    payload = {
        "decisions": _records(decisions),
        "queries": _records(summary),
        "boundaries": _records(audit.boundaries),
        "reliabilities": _records(audit.reliabilities),
        "overrides": overrides.to_dict("records"),
        "posterior": posterior_payload(posterior),
    }
    shown = decisions
    if fmt is OutputFormat.table:  # the full record is in csv/json; keep the table readable
        columns = ["build", "query", "leader", "item", "diff", "se", "z", "critical"]
        for named in ("item", "leader"):  # the texts beside their items, when there are any
            if f"{named}_text" in decisions.columns:
                columns.insert(columns.index(named) + 1, f"{named}_text")
        columns += ["bic_change", "decision", "state", "rule"]
        shown = decisions[columns if build is None else columns[1:]]
        procedure = ["query", "procedure", "family_size", "critical", "bic_penalty", "variance"]
        procedure += ["unbacked_orders", "under_judged"]
        emit(fmt, frame=summary[procedure if build else ["build", *procedure]], title="tiering")
    emit(fmt, frame=shown, payload=payload, title="tie decisions", raw_cells=raw_cells)
    if fmt is OutputFormat.table and len(audit.boundaries):
        emit(
            fmt,
            frame=audit.boundaries,
            title="boundaries: weakest crossing pair (z vs critical), unbacked crossing pairs",
        )
    if fmt is OutputFormat.table and len(audit.reliabilities):
        emit(
            fmt,
            frame=audit.reliabilities,
            title="annotator reliabilities (95% interval; flips: pairs whose separation "
            "changes without the annotator)",
        )
    show_posterior_audit(fmt, posterior, one_build=build is not None)
    if fmt is OutputFormat.table and len(overrides):
        emit(fmt, frame=overrides, title="overrides (who, why)")


@audit_app.command("override")
def override_command(
    ctx: typer.Context,
    build: Annotated[str, typer.Argument(help="Build id, name or NAME@N version to derive from.")],
    query: Annotated[str, typer.Option(help="The query whose ORL is overridden.")],
    reason: Annotated[str, typer.Option(help="Why (mandatory, stored with the override).")],
    merge_tiers: Annotated[
        int | None, typer.Option("--merge-tiers", help="Merge tier T with tier T+1.")
    ] = None,
    split_at: Annotated[
        str | None, typer.Option("--split-at", help="Split the item's tier before this item.")
    ] = None,
    by: Annotated[str | None, typer.Option(help="Who overrides (default: the OS user).")] = None,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Create a new build derived from BUILD with one override; BUILD stays untouched."""
    with opened_store(ctx, writes=True) as engine:
        request = OverrideRequest(query, reason, merge_tiers, split_at, by)
        _, payload = derive_override(engine, build, request)
    emit(fmt, frame=pd.DataFrame([payload]), payload=payload, title="override")


def register(app: typer.Typer) -> None:
    """Add the ``audit`` sub-commands to the root application."""
    app.add_typer(audit_app, name="audit")
