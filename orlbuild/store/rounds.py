"""Rounds, assignments and leased judgments of ``orlbuild serve``: persisted only.

The rules (who may judge what, how a round is opened from the planner and
sealed into ingest batches) are :mod:`orlbuild.services.rounds`'. This module
keeps the one guarantee that needs the database: a slot of an assignment is
never held by two annotators. Every lease and every submit that takes a slot
locks the assignment's row (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite's
``BEGIN IMMEDIATE`` serialises writers) and counts its holders again before
writing (docs/judging-in-the-browser.md, "Rounds, leases and undo").

A slot is held by a judgment with a verdict (``left``, ``right``, ``tie``)
and by a lease whose ``outcome`` is NULL until it expires; a skip holds none,
so another annotator can take the pair, but never the one who skipped it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, Engine, and_, exists, func, insert, or_, select, update
from sqlalchemy.sql.elements import ColumnElement

from orlbuild.errors import StoreError
from orlbuild.store.engine import Bind, as_utc, connect, is_sqlite, write_transaction
from orlbuild.store.web_models import WebAssignment, WebJudgment, WebRound, WebUser

__all__ = [
    "VERDICTS",
    "JudgmentRecord",
    "LeaseRecord",
    "LeaseRefused",
    "NewAssignment",
    "RoundRecord",
    "SealedRow",
    "close_round_row",
    "create_round",
    "get_round",
    "lease_next",
    "list_rounds",
    "mark_sealed",
    "round_collection",
    "round_progress",
    "submit_judgment",
    "undo_last_judgment",
    "unsealed_judgments",
    "user_judgments",
]

#: The outcomes that hold a slot (a skip does not).
VERDICTS = ("left", "right", "tie")


class LeaseRefused(StoreError):
    """A submit that can no longer count: the lease expired and its slot went to another."""


@dataclass(frozen=True)
class NewAssignment:
    """A planned pair to store: the query, the two items, what it serves, how many judge it."""

    query: str
    item_a: str
    item_b: str
    serves: str
    slots: int


@dataclass(frozen=True)
class RoundRecord:
    """A stored round with its counts (judged: verdicts, not skips)."""

    id: int
    build_id: int
    collection: str
    budget: int
    per_pair: int
    gold_rate: float | None
    status: str
    created_at: datetime
    created_by: str
    closed_at: datetime | None
    closed_by: str | None
    assignments: int
    slots: int
    judged: int


@dataclass(frozen=True)
class LeaseRecord:
    """One annotator's lease of an assignment, as the page shows it."""

    key: str
    round_id: int
    query: str
    item_a: str
    item_b: str
    a_left: bool
    expires_at: datetime


@dataclass(frozen=True)
class JudgmentRecord:
    """A judgment as its annotator lists it on ``/me``."""

    key: str
    round_id: int
    round_status: str
    query: str
    item_a: str
    item_b: str
    a_left: bool
    outcome: str
    reason: str | None
    judged_at: datetime


@dataclass(frozen=True)
class SealedRow:
    """A verdict of a closed round, to be sealed into its annotator's batch."""

    judgment_id: int
    annotator: str
    query: str
    left: str
    right: str
    outcome: str


def create_round(
    engine: Engine,
    *,
    build_id: int,
    collection: str,
    budget: int,
    per_pair: int,
    gold_rate: float | None,
    created_by: str,
    now: datetime,
    assignments: Sequence[NewAssignment],
) -> int:
    """Store an open round and its assignments in one transaction; its id."""
    with write_transaction(engine) as connection:
        inserted = connection.execute(
            insert(WebRound).values(
                build_id=build_id,
                collection=collection,
                budget=budget,
                per_pair=per_pair,
                gold_rate=gold_rate,
                status="open",
                created_at=now,
                created_by=created_by,
            )
        ).inserted_primary_key
        assert inserted is not None
        round_id = int(inserted[0])
        connection.execute(
            insert(WebAssignment),
            [
                {
                    "round_id": round_id,
                    "position": position,
                    "query": a.query,
                    "item_a": a.item_a,
                    "item_b": a.item_b,
                    "serves": a.serves,
                    "slots": a.slots,
                }
                for position, a in enumerate(assignments)
            ],
        )
    return round_id


def _held(now: datetime) -> ColumnElement[bool]:
    """A judgment row that holds its slot at ``now``."""
    return or_(
        WebJudgment.outcome.in_(VERDICTS),
        and_(WebJudgment.outcome.is_(None), WebJudgment.expires_at > now),
    )


def _round_rows(bind: Bind, where: ColumnElement[bool] | None) -> list[RoundRecord]:
    assignments = (
        select(
            WebAssignment.round_id,
            func.count().label("n"),
            func.sum(WebAssignment.slots).label("slots"),
        )
        .group_by(WebAssignment.round_id)
        .subquery()
    )
    judged = (
        select(WebAssignment.round_id, func.count().label("n"))
        .join(WebJudgment, WebJudgment.assignment_id == WebAssignment.id)
        .where(WebJudgment.outcome.in_(VERDICTS))
        .group_by(WebAssignment.round_id)
        .subquery()
    )
    stmt = (
        select(
            WebRound.id,
            WebRound.build_id,
            WebRound.collection,
            WebRound.budget,
            WebRound.per_pair,
            WebRound.gold_rate,
            WebRound.status,
            WebRound.created_at,
            WebRound.created_by,
            WebRound.closed_at,
            WebRound.closed_by,
            func.coalesce(assignments.c.n, 0),
            func.coalesce(assignments.c.slots, 0),
            func.coalesce(judged.c.n, 0),
        )
        .outerjoin(assignments, assignments.c.round_id == WebRound.id)
        .outerjoin(judged, judged.c.round_id == WebRound.id)
        .order_by(WebRound.id)
    )
    if where is not None:
        stmt = stmt.where(where)
    with connect(bind) as connection:
        rows = connection.execute(stmt).all()
    return [
        RoundRecord(
            *row[:7],
            as_utc(row[7]),
            row[8],
            None if row[9] is None else as_utc(row[9]),
            row[10],
            int(row[11]),
            int(row[12]),
            int(row[13]),
        )
        for row in rows
    ]


def list_rounds(bind: Bind) -> list[RoundRecord]:
    """Every round, oldest first."""
    return _round_rows(bind, None)


def get_round(bind: Bind, round_id: int) -> RoundRecord:
    """One round; an unknown id is a :class:`StoreError`."""
    rows = _round_rows(bind, WebRound.id == round_id)
    if not rows:
        raise StoreError(f"no round {round_id} (see `orlbuild round list`)")
    return rows[0]


def round_collection(bind: Bind, round_id: int) -> str:
    """The collection of a round's build (one indexed row, for every pair shown)."""
    with connect(bind) as connection:
        name = connection.execute(
            select(WebRound.collection).where(WebRound.id == round_id)
        ).scalar()
    if name is None:
        raise StoreError(f"no round {round_id} (see `orlbuild round list`)")
    return str(name)


def _lease_row(connection: Connection, where: ColumnElement[bool]) -> LeaseRecord | None:
    row = connection.execute(
        select(
            WebJudgment.key,
            WebAssignment.round_id,
            WebAssignment.query,
            WebAssignment.item_a,
            WebAssignment.item_b,
            WebJudgment.a_left,
            WebJudgment.expires_at,
        )
        .join(WebAssignment, WebAssignment.id == WebJudgment.assignment_id)
        .where(where)
    ).first()
    if row is None:
        return None
    return LeaseRecord(row[0], row[1], row[2], row[3], row[4], bool(row[5]), as_utc(row[6]))


def _holders(connection: Connection, assignment_id: int, now: datetime, but: int | None) -> int:
    """How many judgment rows hold a slot of the assignment (other than row ``but``)."""
    stmt = (
        select(func.count())
        .select_from(WebJudgment)
        .where(WebJudgment.assignment_id == assignment_id, _held(now))
    )
    if but is not None:
        stmt = stmt.where(WebJudgment.id != but)
    return int(connection.execute(stmt).scalar_one())


def _lock_assignment(connection: Connection, assignment_id: int) -> int:
    """Lock the assignment's row for this transaction; its number of slots."""
    stmt = select(WebAssignment.slots).where(WebAssignment.id == assignment_id)
    if not is_sqlite(connection):
        stmt = stmt.with_for_update()
    return int(connection.execute(stmt).scalar_one())


def lease_next(
    engine: Engine,
    user_id: int,
    *,
    now: datetime,
    lease: timedelta,
    key: str,
    a_left: bool,
    round_id: int | None = None,
) -> LeaseRecord | None:
    """The user's next pair: their newest unexpired lease, else a new lease of the first
    assignment of an open round with a free slot that they never held.

    ``key`` and ``a_left`` are used for a new lease only (an expired lease of their own is
    renewed with its first key and order). ``None`` when nothing is left for them.
    """
    in_round = [WebAssignment.round_id == round_id] if round_id is not None else []
    with write_transaction(engine) as connection:
        own = (
            select(WebJudgment.id)
            .join(WebAssignment, WebAssignment.id == WebJudgment.assignment_id)
            .join(WebRound, WebRound.id == WebAssignment.round_id)
            .where(
                WebJudgment.user_id == user_id,
                WebJudgment.outcome.is_(None),
                WebJudgment.expires_at > now,
                WebRound.status == "open",
                *in_round,
            )
            .order_by(WebJudgment.leased_at.desc(), WebJudgment.id.desc())
            .limit(1)
        )
        held = connection.execute(own).scalar()
        if held is not None:
            connection.execute(
                update(WebJudgment).where(WebJudgment.id == held).values(expires_at=now + lease)
            )
            return _lease_row(connection, WebJudgment.id == held)
        taken = select(WebJudgment.id).where(
            WebJudgment.assignment_id == WebAssignment.id,
            WebJudgment.user_id == user_id,
            WebJudgment.outcome.is_not(None),
        )
        holders = (
            select(func.count())
            .select_from(WebJudgment)
            .where(WebJudgment.assignment_id == WebAssignment.id, _held(now))
            .scalar_subquery()
        )
        tried: list[int] = []
        while True:
            candidate = (
                select(WebAssignment.id, WebAssignment.slots)
                .join(WebRound, WebRound.id == WebAssignment.round_id)
                .where(WebRound.status == "open", *in_round, ~exists(taken))
                .where(holders < WebAssignment.slots)
                .order_by(WebAssignment.round_id, WebAssignment.position)
                .limit(1)
            )
            if tried:
                candidate = candidate.where(WebAssignment.id.not_in(tried))
            if not is_sqlite(connection):
                candidate = candidate.with_for_update(of=WebAssignment, skip_locked=True)
            found = connection.execute(candidate).first()
            if found is None:
                return None
            # The row is locked now (FOR UPDATE on PostgreSQL; SQLite's BEGIN IMMEDIATE
            # holds the write lock): count again, as another transaction may have taken
            # the last slot after this statement's snapshot.
            assignment_id, slots = int(found[0]), int(found[1])
            if _holders(connection, assignment_id, now, None) < slots:
                break
            tried.append(assignment_id)
        mine = connection.execute(
            select(WebJudgment.id).where(
                WebJudgment.assignment_id == assignment_id, WebJudgment.user_id == user_id
            )
        ).scalar()
        if mine is None:
            connection.execute(
                insert(WebJudgment).values(
                    key=key,
                    assignment_id=assignment_id,
                    user_id=user_id,
                    a_left=a_left,
                    leased_at=now,
                    expires_at=now + lease,
                )
            )
            return _lease_row(connection, WebJudgment.key == key)
        connection.execute(
            update(WebJudgment)
            .where(WebJudgment.id == mine)
            .values(leased_at=now, expires_at=now + lease)
        )
        return _lease_row(connection, WebJudgment.id == mine)


def submit_judgment(
    engine: Engine,
    user_id: int,
    key: str,
    outcome: str,
    reason: str | None,
    *,
    now: datetime,
) -> bool:
    """Record the outcome of the user's judgment ``key``; ``False`` when it was already
    recorded so (a retried submit changes nothing).

    Raises
    ------
    StoreError
        An unknown key or another user's, a closed round, or (:class:`LeaseRefused`) a
        verdict on an expired lease whose slot another annotator holds now.
    """
    with write_transaction(engine) as connection:
        row = connection.execute(
            select(
                WebJudgment.id,
                WebJudgment.user_id,
                WebJudgment.outcome,
                WebJudgment.reason,
                WebJudgment.assignment_id,
                WebRound.status,
            )
            .join(WebAssignment, WebAssignment.id == WebJudgment.assignment_id)
            .join(WebRound, WebRound.id == WebAssignment.round_id)
            .where(WebJudgment.key == key)
        ).first()
        if row is None or row[1] != user_id:
            raise StoreError("no such assignment of yours (it may have been handed out again)")
        if row[5] != "open":
            raise StoreError("the round is closed: its judgments can no longer change")
        if row[2] == outcome and row[3] == reason:
            return False
        if outcome in VERDICTS and row[2] not in VERDICTS:
            slots = _lock_assignment(connection, row[4])
            if _holders(connection, row[4], now, row[0]) >= slots:
                raise LeaseRefused(
                    "this pair's lease expired and another annotator took its slot; "
                    "go on with the next pair"
                )
        connection.execute(
            update(WebJudgment)
            .where(WebJudgment.id == row[0])
            .values(outcome=outcome, reason=reason, judged_at=now)
        )
    return True


def undo_last_judgment(
    engine: Engine, user_id: int, *, now: datetime, lease: timedelta
) -> LeaseRecord | None:
    """Take back the user's newest judgment of an open round: it becomes their current
    lease again (shown next). ``None`` when there is none."""
    with write_transaction(engine) as connection:
        last = connection.execute(
            select(WebJudgment.id)
            .join(WebAssignment, WebAssignment.id == WebJudgment.assignment_id)
            .join(WebRound, WebRound.id == WebAssignment.round_id)
            .where(
                WebJudgment.user_id == user_id,
                WebJudgment.outcome.is_not(None),
                WebRound.status == "open",
            )
            .order_by(WebJudgment.judged_at.desc(), WebJudgment.id.desc())
            .limit(1)
        ).scalar()
        if last is None:
            return None
        connection.execute(
            update(WebJudgment)
            .where(WebJudgment.id == last)
            .values(
                outcome=None, reason=None, judged_at=None, leased_at=now, expires_at=now + lease
            )
        )
        return _lease_row(connection, WebJudgment.id == last)


def user_judgments(bind: Bind, user_id: int) -> list[JudgmentRecord]:
    """The user's judgments (skips included), newest first."""
    with connect(bind) as connection:
        rows = connection.execute(
            select(
                WebJudgment.key,
                WebAssignment.round_id,
                WebRound.status,
                WebAssignment.query,
                WebAssignment.item_a,
                WebAssignment.item_b,
                WebJudgment.a_left,
                WebJudgment.outcome,
                WebJudgment.reason,
                WebJudgment.judged_at,
            )
            .join(WebAssignment, WebAssignment.id == WebJudgment.assignment_id)
            .join(WebRound, WebRound.id == WebAssignment.round_id)
            .where(WebJudgment.user_id == user_id, WebJudgment.outcome.is_not(None))
            .order_by(WebJudgment.judged_at.desc(), WebJudgment.id.desc())
        ).all()
    # every row has an outcome, and so a judged_at (the query keeps only those)
    return [
        JudgmentRecord(*row[:6], bool(row[6]), str(row[7]), row[8], as_utc(row[9]))  # type: ignore[arg-type]
        for row in rows
    ]


def round_progress(bind: Bind, round_id: int, user_id: int) -> tuple[int, int, int]:
    """``(the user's verdicts, all verdicts, all slots)`` of the round."""
    with connect(bind) as connection:
        verdict = and_(
            WebJudgment.assignment_id == WebAssignment.id, WebJudgment.outcome.in_(VERDICTS)
        )
        mine = connection.execute(
            select(func.count())
            .select_from(WebJudgment)
            .join(WebAssignment, verdict)
            .where(WebAssignment.round_id == round_id, WebJudgment.user_id == user_id)
        ).scalar_one()
        everyone = connection.execute(
            select(func.count())
            .select_from(WebJudgment)
            .join(WebAssignment, verdict)
            .where(WebAssignment.round_id == round_id)
        ).scalar_one()
        slots = connection.execute(
            select(func.coalesce(func.sum(WebAssignment.slots), 0)).where(
                WebAssignment.round_id == round_id
            )
        ).scalar_one()
    return int(mine), int(everyone), int(slots)


def close_round_row(engine: Engine, round_id: int, *, closed_by: str, now: datetime) -> bool:
    """Mark an open round closed (no submit counts after); ``False`` if it was closed."""
    with write_transaction(engine) as connection:
        changed = connection.execute(
            update(WebRound)
            .where(WebRound.id == round_id, WebRound.status == "open")
            .values(status="closed", closed_at=now, closed_by=closed_by)
        )
    return changed.rowcount == 1


def unsealed_judgments(bind: Bind, round_id: int) -> list[SealedRow]:
    """The round's verdicts not yet in a batch, by annotator then judgment."""
    with connect(bind) as connection:
        rows = connection.execute(
            select(
                WebJudgment.id,
                WebUser.name,
                WebAssignment.query,
                WebAssignment.item_a,
                WebAssignment.item_b,
                WebJudgment.a_left,
                WebJudgment.outcome,
            )
            .join(WebAssignment, WebAssignment.id == WebJudgment.assignment_id)
            .join(WebUser, WebUser.id == WebJudgment.user_id)
            .where(
                WebAssignment.round_id == round_id,
                WebJudgment.outcome.in_(VERDICTS),
                WebJudgment.batch_id.is_(None),
            )
            .order_by(WebUser.name, WebJudgment.id)
        ).all()
    return [
        SealedRow(
            int(row[0]),
            row[1],
            row[2],
            row[3] if row[5] else row[4],
            row[4] if row[5] else row[3],
            str(row[6]),
        )
        for row in rows
    ]


def mark_sealed(engine: Engine, judgment_ids: Sequence[int], batch_id: int) -> None:
    """Record the batch that sealed these judgments."""
    with write_transaction(engine) as connection:
        connection.execute(
            update(WebJudgment).where(WebJudgment.id.in_(judgment_ids)).values(batch_id=batch_id)
        )
