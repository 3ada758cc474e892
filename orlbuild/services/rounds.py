"""Rounds of judging in the browser: opened from the planner, leased, judged, sealed.

``orlbuild round open|list|close`` and ``orlbuild serve`` call these
(docs/judging-in-the-browser.md, "The round loop"). A round stores the
planner's pairs of one build (:func:`orlbuild.services.plans.plan_build`) as
assignments, each to be judged by ``per_pair`` different annotators (a pair
the plan proposes twice gets twice the slots). Each pair is shown in an order
drawn at random when it is leased; the verdict is kept as pressed (left,
right, tie) with that order, so the sealed batch's ``winner_first`` says
which item was shown first. Closing a round seals its verdicts into one
ordinary pairwise ingest batch per annotator (the arena shape: ``item_a`` is
the item shown left), after which ``build``, ``quality``, ``audit`` and
``plan`` read them as any other batch. Skips are kept in the round only.
"""

from __future__ import annotations

import csv
import io
import secrets
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from orlbuild.builders.parameters import PlanSettings
from orlbuild.errors import ConfigError
from orlbuild.services.ingests import ingest_file
from orlbuild.services.plans import plan_build
from orlbuild.services.texts import display_texts
from orlbuild.services.web_users import WebUserRecord
from orlbuild.store.engine import connect
from orlbuild.store.rounds import (  # LeaseRefused: for the front ends to catch
    JudgmentRecord,
    LeaseRecord,
    LeaseRefused,  # noqa: F401
    NewAssignment,
    RoundRecord,
    SealedRow,
    close_round_row,
    create_round,
    get_round,
    lease_next,
    list_rounds,
    mark_sealed,
    round_collection,
    round_progress,
    submit_judgment,
    undo_last_judgment,
    unsealed_judgments,
    user_judgments,
)
from orlbuild.store.users import acting_as, current_user
from orlbuild.vocabulary import InputFormat, InputKind

if TYPE_CHECKING:
    from sqlalchemy import Engine

__all__ = [
    "CHOICES",
    "LEASE_MINUTES",
    "ClosedRound",
    "ShownPair",
    "all_rounds",
    "close_round",
    "my_judgments",
    "next_pair",
    "open_round",
    "submit",
    "undo",
]

#: How long a leased pair is held for its annotator before another may take its slot.
LEASE_MINUTES = 15.0

#: What an annotator may answer: the left or right item wins, a tie, or a skip (with a reason).
CHOICES = ("left", "right", "tie", "skip")


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _lease() -> timedelta:
    return timedelta(minutes=LEASE_MINUTES)


@contextmanager
def _as(user: str | None) -> Iterator[None]:
    """Record ``user`` (a web identity) behind the writes, else the CLI's user."""
    with acting_as(user) if user is not None else nullcontext():
        yield


def open_round(
    engine: Engine,
    build: str | int,
    *,
    budget: int,
    per_pair: int,
    gold_rate: float | None = None,
    seed: int = 0,
    by: str | None = None,
) -> RoundRecord:
    """Open a round on a pairwise build: the planner's ``budget`` pairs as assignments.

    Raises
    ------
    ConfigError
        A budget or per-pair count below 1, a gold rate outside [0, 1), a build
        that is not pairwise, or a plan without pairs (every query settled).
    StoreError
        Unknown build.
    """
    if budget < 1 or per_pair < 1:
        raise ConfigError(f"--budget and --per-pair must be at least 1, got {budget}, {per_pair}")
    if gold_rate is not None:
        raise ConfigError("--gold-rate is not available yet: gold pairs come with a later change")
    planned = plan_build(engine, build, PlanSettings(budget=budget, seed=seed))
    merged: dict[tuple[str, frozenset[str]], list[object]] = {}
    for pair in planned.plan.pairs:
        key = (pair.query, frozenset((pair.item_a, pair.item_b)))
        if key in merged:
            merged[key][4] = int(merged[key][4]) + per_pair  # type: ignore[call-overload]
        else:
            merged[key] = [pair.query, pair.item_a, pair.item_b, pair.serves, per_pair]
    if not merged:
        raise ConfigError(
            f"build {planned.record.id}: the plan proposes no pairs (every query is settled); "
            "nothing to judge"
        )
    with _as(by):
        round_id = create_round(
            engine,
            build_id=planned.record.id,
            collection=planned.record.collection,
            budget=budget,
            per_pair=per_pair,
            gold_rate=gold_rate,
            created_by=current_user(),
            now=_now(),
            assignments=[NewAssignment(*values) for values in merged.values()],  # type: ignore[arg-type]
        )
    return get_round(engine, round_id)


@dataclass(frozen=True)
class ShownPair:
    """A pair as the judge page shows it: the query and the left and right items, with
    their texts (``None``: no stored text), the submit key and the annotator's progress."""

    key: str
    round_id: int
    query: str
    query_text: str | None
    left: str
    left_text: str | None
    right: str
    right_text: str | None
    mine: int
    judged: int
    slots: int


def _shown(engine: Engine, lease: LeaseRecord, user: WebUserRecord) -> ShownPair:
    left, right = (lease.item_a, lease.item_b) if lease.a_left else (lease.item_b, lease.item_a)
    # one connection for the four reads: each checkout from the pool costs a pre-ping
    with connect(engine) as connection:
        collection = round_collection(connection, lease.round_id)
        queries = display_texts(connection, collection, "queries", [lease.query])
        items = display_texts(connection, collection, "items", [left, right])
        mine, judged, slots = round_progress(connection, lease.round_id, user.id)
    return ShownPair(
        lease.key,
        lease.round_id,
        lease.query,
        queries.get(lease.query),
        left,
        items.get(left),
        right,
        items.get(right),
        mine,
        judged,
        slots,
    )


def next_pair(
    engine: Engine, user: WebUserRecord, *, round_id: int | None = None
) -> ShownPair | None:
    """The user's next pair to judge (the same one again until it is answered), or
    ``None`` when no open round has a pair left for them."""
    lease = lease_next(
        engine,
        user.id,
        now=_now(),
        lease=_lease(),
        key=uuid.uuid4().hex,
        a_left=secrets.randbelow(2) == 1,
        round_id=round_id,
    )
    return None if lease is None else _shown(engine, lease, user)


def submit(
    engine: Engine, user: WebUserRecord, key: str, choice: str, reason: str | None = None
) -> bool:
    """Record the user's answer to the pair of ``key``: ``left``, ``right``, ``tie`` or
    ``skip`` (with a reason). Idempotent: the same answer again changes nothing and
    returns ``False``; another answer while the round is open corrects it.

    Raises
    ------
    ConfigError
        An unknown choice, or a skip without a reason.
    StoreError
        Not the user's pair, a closed round, or an expired lease whose slot is taken.
    """
    if choice not in CHOICES:
        raise ConfigError(f"the answer must be one of {', '.join(CHOICES)}, got {choice!r}")
    reason = (reason or "").strip() or None
    if choice == "skip" and reason is None:
        raise ConfigError("a skip needs a reason")
    if choice != "skip":
        reason = None
    return submit_judgment(engine, user.id, key, choice, reason, now=_now())


def undo(engine: Engine, user: WebUserRecord) -> ShownPair | None:
    """Take back the user's newest judgment of an open round and show its pair again."""
    lease = undo_last_judgment(engine, user.id, now=_now(), lease=_lease())
    return None if lease is None else _shown(engine, lease, user)


def my_judgments(engine: Engine, user: WebUserRecord) -> list[JudgmentRecord]:
    """The user's own judgments, newest first (``/me``)."""
    return user_judgments(engine, user.id)


@dataclass(frozen=True)
class ClosedRound:
    """A closed round and the batches its close sealed: annotator -> (batch id, rows)."""

    round: RoundRecord
    batches: dict[str, tuple[int, int]]


_WINNER = {"left": "a", "right": "b", "tie": "tie"}


def _batch_file(round_id: int, rows: list[SealedRow]) -> bytes:
    """The arena shape of one annotator's verdicts; ``item_a`` is the item shown left.

    The ``round`` column (ignored by the reader) makes the content of two rounds'
    batches differ even when their verdicts are the same.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(("query", "annotator", "item_a", "item_b", "winner", "round"))
    for row in rows:
        writer.writerow(
            (row.query, row.annotator, row.left, row.right, _WINNER[row.outcome], round_id)
        )
    return buffer.getvalue().encode()


def close_round(engine: Engine, round_id: int, *, by: str | None = None) -> ClosedRound:
    """Close a round and seal its verdicts: one pairwise batch per annotator.

    Closing again seals what a failed close left unsealed (a batch already stored
    is found by its content and not stored twice).

    Raises
    ------
    StoreError
        Unknown round.
    """
    record = get_round(engine, round_id)
    with _as(by):
        close_round_row(engine, round_id, closed_by=current_user(), now=_now())
        rows = unsealed_judgments(engine, round_id)
        by_annotator: dict[str, list[SealedRow]] = {}
        for row in rows:
            by_annotator.setdefault(row.annotator, []).append(row)
        batches: dict[str, tuple[int, int]] = {}
        for annotator, own in by_annotator.items():
            content = _batch_file(round_id, own)
            result = ingest_file(
                engine,
                InputKind.pairwise,
                f"round-{round_id}-{annotator}.tsv",
                collection=record.collection,
                stream=io.BytesIO(content),
                fmt=InputFormat.tsv,
            )
            mark_sealed(engine, [r.judgment_id for r in own], result.batch_id)
            batches[annotator] = (result.batch_id, result.rows)
    return ClosedRound(get_round(engine, round_id), batches)


def all_rounds(engine: Engine) -> list[RoundRecord]:
    """Every round, oldest first, with its counts of assignments, slots and verdicts."""
    return list_rounds(engine)
