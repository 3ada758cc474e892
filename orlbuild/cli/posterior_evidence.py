"""The posterior evidence in ``orlbuild audit`` (docs/tiers-and-audit.md, "The posterior
computation"): the prior, per query ``E``, ``N`` and ``E / N``, per boundary its
probability, per item its probability of the top tier."""

from __future__ import annotations

from typing import Any

import pandas as pd

from orlbuild.cli.render import emit
from orlbuild.services.posterior_audit import PosteriorAudit
from orlbuild.vocabulary import OutputFormat

__all__ = ["posterior_payload", "show_posterior_audit"]


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [
        {k: (None if not isinstance(v, str) and pd.isna(v) else v) for k, v in row.items()}
        for row in frame.astype(object).to_dict("records")
    ]


def posterior_payload(audit: PosteriorAudit) -> dict[str, list[dict[str, Any]]]:
    """The evidence as JSON records: ``prior``, ``queries``, ``boundaries``, ``top``."""
    return {
        "prior": _records(audit.prior),
        "queries": _records(audit.queries),
        "boundaries": _records(audit.boundaries),
        "top": _records(audit.top),
    }


def show_posterior_audit(fmt: OutputFormat, audit: PosteriorAudit, *, one_build: bool) -> None:
    """The evidence's tables (table format only; csv and json carry the decisions' document)."""
    if fmt is not OutputFormat.table or audit.prior.empty:
        return
    drop = ["build"] if one_build else []
    emit(
        fmt,
        frame=audit.prior.drop(columns=drop),
        title="posterior: empirical-Bayes prior and expected share of wrong stated orders",
    )
    emit(fmt, frame=audit.queries.drop(columns=drop), title="posterior: E, N and E/N per query")
    if len(audit.boundaries):
        emit(
            fmt,
            frame=audit.boundaries.drop(columns=drop),
            title="posterior: probability of a boundary at each gap of the score order",
        )
    if len(audit.top):
        emit(
            fmt,
            frame=audit.top.drop(columns=drop),
            title="posterior: probability that the item belongs in the top tier",
        )
