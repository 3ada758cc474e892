"""The rows of a build made as its queries finish (BuildRows) store the build the outcome holds."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from sqlalchemy import Engine, select

from orlbuild.builders.build import build_orls
from orlbuild.builders.parameters import BuildParameters
from orlbuild.records import BuildOutcome, QueryORL
from orlbuild.store.builds import BuildRows, load_query_orls, store_build
from orlbuild.store.bulk import ensure_collection
from orlbuild.store.models import OrlEntry, TieDecisionRow
from tests.services.test_parallel_build import pairwise_judgments
from tests.stores import store_engine


def _outcome() -> tuple[BuildParameters, BuildOutcome]:
    frame = pairwise_judgments(7, n_queries=3, n_items=5, per_query=120)
    params = BuildParameters(source="pairwise", method="bt", tiering="simultaneous", seed=3)
    resolved, outcome = build_orls(frame, params)
    first = next(iter(outcome.orls))
    orl = outcome.orls[first]
    items = [item for tier in orl.tiers for item in tier]
    # what the fast path must carry as the slow one did: NaN and infinite floats (NULL),
    # native grades, under-judged flags, a decision with missing evidence
    outcome.orls[first] = replace(
        orl,
        scores={**orl.scores, items[0]: math.nan},
        intervals={**orl.intervals, items[1]: (-math.inf, 1.0)},
        native_grades={items[0]: 2.0, items[1]: math.inf},
        under_judged=[items[2]],
        decisions=[replace(orl.decisions[0], se=math.nan, critical=None), *orl.decisions[1:]],
    )
    return resolved, outcome


def _stored(url: str, build_id: int) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    with store_engine(url) as engine, engine.connect() as connection:
        entries = connection.execute(
            select(*[c for c in OrlEntry.__table__.columns if c.key not in ("id", "build_id")])
            .where(OrlEntry.build_id == build_id)
            .order_by(OrlEntry.id)
        ).all()
        decisions = connection.execute(
            select(
                *[c for c in TieDecisionRow.__table__.columns if c.key not in ("id", "build_id")]
            )
            .where(TieDecisionRow.build_id == build_id)
            .order_by(TieDecisionRow.id)
        ).all()
    return [tuple(r) for r in entries], [tuple(r) for r in decisions]


def _store(
    engine: Engine, resolved: BuildParameters, outcome: BuildOutcome, rows: BuildRows | None = None
) -> int:
    """Store ``outcome`` as a build of the default collection, from ``rows`` if given."""
    return store_build(
        engine,
        collection="default",
        parameters=resolved.to_json(),
        outcome=outcome,
        batches=[],
        rows=rows,
    )


def test_rows_made_as_results_arrive_store_what_the_outcome_holds(migrated_db_url: str) -> None:
    resolved, outcome = _outcome()
    rows = BuildRows()
    for orl in outcome.orls.values():
        rows.add(orl)
    with store_engine(migrated_db_url) as engine:
        with engine.begin() as connection:
            ensure_collection(connection, "default")
        given = _store(engine, resolved, outcome, rows)
        made_here = _store(engine, resolved, outcome)
        back = load_query_orls(engine, given)
    entries, decisions = _stored(migrated_db_url, given)
    assert (entries, decisions) == _stored(migrated_db_url, made_here)
    assert len(entries) == sum(len(t) for o in outcome.orls.values() for t in o.tiers)
    assert len(decisions) == sum(len(o.decisions) for o in outcome.orls.values())
    first: QueryORL = next(iter(outcome.orls.values()))
    stored = back[first.query]
    assert [sorted(t) for t in stored.tiers] == [sorted(t) for t in first.tiers]
    items = [item for tier in first.tiers for item in tier]
    assert math.isnan(stored.scores[items[0]])  # NaN stored as NULL
    assert stored.under_judged == [items[2]]
    grade = {row[1]: row[6] for row in entries if row[0] == first.query}  # native_grade
    assert grade[items[0]] == 2.0 and grade[items[1]] is None  # infinite: NULL
    assert [d.item for d in stored.decisions] == [d.item for d in first.decisions]
    for entry in entries:
        assert all(not (isinstance(v, float) and not math.isfinite(v)) for v in entry)


def test_rows_of_other_orls_are_refused(migrated_db_url: str) -> None:
    resolved, outcome = _outcome()
    rows = BuildRows.of(list(outcome.orls.values())[1:])
    with store_engine(migrated_db_url) as engine, pytest.raises(ValueError, match="not those"):
        _store(engine, resolved, outcome, rows)
