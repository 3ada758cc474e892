"""Planning use cases: the next comparisons of a stored build, the plan file, the design study.

``orlbuild plan`` and the pipeline's ``[plan]`` table call :func:`plan_build`
and :func:`write_plan`; ``orlbuild calibrate --design`` calls :func:`simulate_designs`
(docs/planning.md, "Planning the next judgments").
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import pandas as pd
from sqlalchemy import Engine

from orlbuild.builders.parameters import BuildParameters, PlanSettings
from orlbuild.builders.planning.evidence import pairwise_evidence
from orlbuild.builders.planning.plan_records import Plan
from orlbuild.builders.planning.planner import plan_comparisons
from orlbuild.builders.planning.posterior_plan import evidence_prior
from orlbuild.builders.tiering.equivalence import check_margin
from orlbuild.errors import ConfigError
from orlbuild.output_files import ProtectedPaths, write_output
from orlbuild.services.builds import load_query_orls
from orlbuild.services.texts import display_texts
from orlbuild.store.builds import BuildRecord, get_build, load_build_judgments
from orlbuild.vocabulary import PlanFormat, PlanObjective, Source

__all__ = [
    "PLAN_COLUMNS",
    "TEXT_PLAN_COLUMNS",
    "BuildPlan",
    "PlanTexts",
    "attach_texts",
    "plan_build",
    "plan_payload",
    "simulate_designs",
    "status_frame",
    "write_plan",
    "write_plan_file",
    "write_status",
]

#: Columns of a plan file: the arena shape, ``winner`` left empty for the annotators.
PLAN_COLUMNS = ("query", "item_a", "item_b", "winner")

#: Columns of a plan file with the texts (``plan --with-text``): each name followed by its
#: text, ``winner`` last; ``orlbuild ingest pairwise`` reads it, ignoring the text columns.
TEXT_PLAN_COLUMNS = (
    "query",
    "query_text",
    "item_a",
    "item_a_text",
    "item_b",
    "item_b_text",
    "winner",
)


@dataclass(frozen=True)
class PlanTexts:
    """The texts a plan file carries: query -> its text, item -> its title and text."""

    queries: dict[str, str]
    items: dict[str, str]

    def row(self, query: str, item_a: str, item_b: str) -> tuple[str, ...]:
        """One plan row with its texts (whitespace runs as one space; empty when none)."""

        def flat(text: str | None) -> str:
            return " ".join((text or "").split())

        return (
            query,
            flat(self.queries.get(query)),
            item_a,
            flat(self.items.get(item_a)),
            item_b,
            flat(self.items.get(item_b)),
            "",
        )


@dataclass
class BuildPlan:
    """A plan for a stored build.

    Attributes
    ----------
    record
        The build planned for.
    plan
        The proposed pairs and every query's status.
    skipped
        Query -> why it was not planned (not built, or its fit failed now).
    settings
        The planner's options (stored in the JSON output).
    """

    record: BuildRecord
    plan: Plan
    skipped: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    texts: PlanTexts | None = None
    """The stored texts of the planned queries and items (:func:`attach_texts`), if wanted."""


def attach_texts(engine: Engine, result: BuildPlan) -> int:
    """Look up the texts of the plan's queries and items (``plan --with-text``).

    Returns how many of the plan's queries and items have no stored text
    (``orlbuild ingest text``, docs/input-formats.md, "Query and item text").
    """
    pairs = result.plan.pairs
    queries = {p.query for p in pairs}
    items = {i for p in pairs for i in (p.item_a, p.item_b)}
    collection = result.record.collection
    result.texts = PlanTexts(
        display_texts(engine, collection, "queries", queries),
        display_texts(engine, collection, "items", items),
    )
    return len(queries - result.texts.queries.keys()) + len(items - result.texts.items.keys())


def plan_build(engine: Engine, build: str | int, settings: PlanSettings) -> BuildPlan:
    """Propose the next ``settings.budget`` comparisons of a pairwise build.

    The settings are passed to :func:`~orlbuild.builders.planning.planner.plan_comparisons`;
    without a ``margin`` the build's own ``--margin`` (if any) is used. A build
    tiered by ``model`` is planned for its cuts (read from its stored
    decisions), any other for the default's max-t decisions; ``settings``
    records which (``tiering``).

    Raises
    ------
    StoreError
        Unknown build.
    ConfigError
        A build that is not pairwise, or invalid options.
    """
    try:
        goal = PlanObjective(settings.objective)
    except ValueError:
        raise ConfigError(f"--objective must be tiers or top, got {settings.objective!r}") from None
    margin = check_margin(settings.margin)
    record = get_build(engine, build)
    if record.source != Source.pairwise.value:
        raise ConfigError(
            f"build {record.id} is {record.source}: orlbuild plan proposes pairwise comparisons "
            "and needs a build from pairwise judgments"
        )
    orls = load_query_orls(engine, record.id)
    params = BuildParameters.from_json(dict(record.parameters))
    if margin is None:  # the build's own --margin, if it has one
        margin = params.margin
    judgments = load_build_judgments(engine, record)
    evidence, skipped = pairwise_evidence(
        judgments,
        params,
        {q: o.tiers for q, o in orls.items()},
        {q: o.decisions for q, o in orls.items()},
    )
    for query in sorted(set(judgments["query"].astype(str)) - set(orls)):
        skipped.setdefault(query, "not in the build (its build failed)")
    chosen = replace(settings, objective=goal, margin=margin)
    prior = evidence_prior(evidence) if _planned_for(params) == "posterior" else None
    plan = plan_comparisons(
        evidence,
        chosen.budget,
        max_per_query=chosen.max_per_query,
        repeat_limit=chosen.repeat_limit,
        seed=chosen.seed,
        objective=goal,
        margin=margin,
        prior=prior,
    )
    recorded = {**asdict(chosen), "objective": goal.value, "tiering": _planned_for(params)}
    return BuildPlan(record=record, plan=plan, skipped=skipped, settings=recorded)


def _planned_for(params: BuildParameters) -> str:
    """The tiering whose open decisions the plan targets: ``model`` for a build tiered by
    ``model`` (its cuts), else the default's max-t decisions (docs/planning.md)."""
    tiering = getattr(params.tiering, "value", params.tiering)
    if tiering == "posterior":  # pairs from its posterior (docs/planning.md)
        return "posterior"
    return "model" if tiering == "model" and params.sig > 0 else "simultaneous"


def status_frame(plan: Plan) -> pd.DataFrame:
    """One row per query: status, open decisions by kind, split risk, judgments to settle,
    planned comparisons and the decisions they are expected to settle."""
    rows = [
        {
            "query": q.query,
            "status": q.status,
            **{f"open_{k}": v for k, v in q.open_counts.items()},
            "split_risk": q.split_risk,
            "expected_judgments": q.expected_judgments,
            "planned": q.planned,
            "expected_decided": round(q.expected_decided, 2),
        }
        for q in sorted(plan.queries.values(), key=lambda q: q.query)
    ]
    frame = pd.DataFrame(rows)
    if len(frame):
        frame["expected_judgments"] = frame["expected_judgments"].astype("Int64")
        frame["split_risk"] = frame["split_risk"].round(4)
    return frame


def plan_payload(result: BuildPlan, *, with_pairs: bool = True) -> dict[str, Any]:
    """The JSON document of a plan: ``build``, ``settings``, ``pairs``, ``queries``, ``skipped``."""
    payload: dict[str, Any] = {"build": result.record.id, "settings": result.settings}
    if with_pairs:
        payload["pairs"] = [p.to_json() for p in result.plan.pairs]
    payload["queries"] = {q: result.plan.queries[q].to_json() for q in sorted(result.plan.queries)}
    payload["skipped"] = result.skipped
    return payload


def write_plan(result: BuildPlan, fmt: PlanFormat | str, out: TextIO) -> None:
    """Write the plan: the arena shape (``winner`` empty) as TSV, CSV or JSONL, or the JSON
    document.

    The TSV, CSV and JSONL files are read back by ``orlbuild ingest pairwise``
    once ``winner`` holds ``a``, ``b`` or ``tie``. With texts attached
    (:func:`attach_texts`) they have the columns :data:`TEXT_PLAN_COLUMNS`,
    and the JSON document's pairs a ``text`` object.
    """
    shape = PlanFormat(fmt)
    if shape is PlanFormat.json:
        payload = plan_payload(result)
        if result.texts is not None:
            for pair, shown in zip(payload["pairs"], result.plan.pairs, strict=True):
                texts = result.texts.row(shown.query, shown.item_a, shown.item_b)
                pair["text"] = {"query": texts[1], "item_a": texts[3], "item_b": texts[5]}
        out.write(json.dumps(payload, indent=2, ensure_ascii=False, default=_plain) + "\n")
        return
    columns = PLAN_COLUMNS if result.texts is None else TEXT_PLAN_COLUMNS
    rows: list[tuple[str, ...]]
    if result.texts is None:
        rows = [(p.query, p.item_a, p.item_b, "") for p in result.plan.pairs]
    else:
        rows = [result.texts.row(p.query, p.item_a, p.item_b) for p in result.plan.pairs]
    if shape is PlanFormat.jsonl:
        for row in rows:
            out.write(json.dumps(dict(zip(columns, row, strict=True)), ensure_ascii=False))
            out.write("\n")
        return
    buffer = io.StringIO()
    writer = csv.writer(
        buffer, delimiter="\t" if shape is PlanFormat.tsv else ",", lineterminator="\n"
    )
    writer.writerow(columns)
    writer.writerows(rows)
    out.write(buffer.getvalue())


def write_status(result: BuildPlan, fmt: PlanFormat | str, out: TextIO) -> None:
    """Write only every query's status (``--budget 0``): the JSON document without ``pairs``,
    or one row per query (:func:`status_frame`) as TSV, CSV or JSONL."""
    shape = PlanFormat(fmt)
    if shape is PlanFormat.json:
        payload = plan_payload(result, with_pairs=False)
        out.write(json.dumps(payload, indent=2, ensure_ascii=False, default=_plain) + "\n")
        return
    frame = status_frame(result.plan)
    if shape is PlanFormat.jsonl:
        for row in frame.to_dict("records"):
            out.write(json.dumps({k: _plain(v) for k, v in row.items()}) + "\n")
        return
    frame.to_csv(out, sep="\t" if shape is PlanFormat.tsv else ",", index=False)


def _plain(value: Any) -> Any:
    """A JSON value for numpy and pandas scalars (``pd.NA`` and NaN become ``null``)."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return None
    if hasattr(value, "item"):
        return value.item()
    return value


def write_plan_file(
    result: BuildPlan,
    fmt: PlanFormat | str,
    path: Path,
    *,
    status_only: bool = False,
    protected: ProtectedPaths = (),
) -> None:
    """:func:`write_plan` (or :func:`write_status`) into ``path``, through a temporary file
    renamed into place, never over a ``protected`` file (docs/reliability.md, "Output files")."""
    buffer = io.StringIO()
    (write_status if status_only else write_plan)(result, fmt, buffer)
    write_output(path, buffer.getvalue(), protected=protected)


def simulate_designs(
    *,
    scenario: str = "mixed",
    designs: Sequence[str] = ("complete", "uniform", "planned"),
    tierings: Sequence[str] = ("simultaneous", "model"),
    **study: Any,
) -> pd.DataFrame:
    """Compare designs at equal budgets
    (:func:`orlbuild.builders.calibration.designs.compare_designs`).

    ``study`` holds the :class:`~orlbuild.builders.calibration.designs.DesignStudy` fields.
    """
    from orlbuild.builders.calibration.designs import DesignStudy, compare_designs

    return compare_designs(DesignStudy(scenario=scenario, **study), designs, tierings)
