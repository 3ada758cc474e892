"""Tables of judging in the browser: web users, login links, rounds, assignments, judgments.

``orlbuild serve`` (docs/judging-in-the-browser.md) keeps its state here
(migration 0018_web_rounds). A *round* holds the planned pairs of one build as
*assignments*, each to be judged by ``slots`` different annotators; a
*judgment* row is one annotator's lease of one assignment, keyed by a random
``key`` (the idempotency key of its submit), and later its outcome. Closing
a round seals its judged rows into ordinary pairwise ingest batches.

Tokens are never stored: only their SHA-256 (``token_hash``).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from orlbuild.store.models import NAME_LENGTH, NAME_TYPE, Base

__all__ = [
    "OUTCOMES",
    "ROLES",
    "WebAssignment",
    "WebJudgment",
    "WebLoginLink",
    "WebRound",
    "WebUser",
]

#: The roles of a web user, from least to most allowed.
ROLES = ("annotator", "auditor", "lead")

#: The outcomes of a judgment as pressed: the item shown left or right won, a tie, a skip.
OUTCOMES = ("left", "right", "tie", "skip")


class WebUser(Base):
    """A person who logs in to ``orlbuild serve`` (no password: login links and API tokens)."""

    __tablename__ = "web_users"
    __table_args__ = (CheckConstraint("role IN ('annotator', 'auditor', 'lead')", name="role"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False, unique=True)
    role: Mapped[str] = mapped_column(String(16), nullable=False)
    disabled: Mapped[bool] = mapped_column(Boolean, nullable=False)
    # SHA-256 of the user's API token (``Authorization: Bearer``), if one was issued
    api_token_hash: Mapped[str | None] = mapped_column(String(64), nullable=True, unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    created_by: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)


class WebLoginLink(Base):
    """A one-time login link: the hash of its token, when it expires, when it was used."""

    __tablename__ = "web_login_links"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(
        ForeignKey("web_users.id", ondelete="CASCADE"), nullable=False, index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), nullable=False, unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class WebRound(Base):
    """A round of judging the planned pairs of one build."""

    __tablename__ = "web_rounds"
    __table_args__ = (
        CheckConstraint("status IN ('open', 'closed')", name="status"),
        CheckConstraint("per_pair >= 1", name="per_pair"),
        CheckConstraint("budget >= 1", name="budget"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    build_id: Mapped[int] = mapped_column(
        ForeignKey("builds.id", ondelete="CASCADE"), nullable=False, index=True
    )
    collection: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    budget: Mapped[int] = mapped_column(Integer, nullable=False)
    per_pair: Mapped[int] = mapped_column(Integer, nullable=False)
    gold_rate: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    created_by: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    closed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    closed_by: Mapped[str | None] = mapped_column(String(NAME_LENGTH), nullable=True)


class WebAssignment(Base):
    """One planned pair of a round, to be judged by ``slots`` different annotators."""

    __tablename__ = "web_assignments"
    __table_args__ = (
        CheckConstraint("slots >= 1", name="slots"),
        UniqueConstraint("round_id", "position"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    round_id: Mapped[int] = mapped_column(
        ForeignKey("web_rounds.id", ondelete="CASCADE"), nullable=False
    )
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    query: Mapped[str] = mapped_column(NAME_TYPE, nullable=False)
    item_a: Mapped[str] = mapped_column(NAME_TYPE, nullable=False)
    item_b: Mapped[str] = mapped_column(NAME_TYPE, nullable=False)
    serves: Mapped[str] = mapped_column(Text, nullable=False)
    slots: Mapped[int] = mapped_column(Integer, nullable=False)


class WebJudgment(Base):
    """One annotator's lease of one assignment and, once submitted, its outcome.

    ``a_left`` is the presentation order drawn when the lease was made (true:
    ``item_a`` was shown on the left). A lease whose ``outcome`` is NULL holds
    its slot until ``expires_at``; one annotator holds at most one row per
    assignment, so no pair is handed to the same annotator twice.
    """

    __tablename__ = "web_judgments"
    __table_args__ = (
        UniqueConstraint("assignment_id", "user_id"),
        CheckConstraint(
            "outcome IS NULL OR outcome IN ('left', 'right', 'tie', 'skip')", name="outcome"
        ),
        Index("ix_web_judgments_user_id_judged_at", "user_id", "judged_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(64), nullable=False, unique=True)
    assignment_id: Mapped[int] = mapped_column(
        ForeignKey("web_assignments.id", ondelete="CASCADE"), nullable=False
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("web_users.id", ondelete="CASCADE"), nullable=False
    )
    a_left: Mapped[bool] = mapped_column(Boolean, nullable=False)
    leased_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    outcome: Mapped[str | None] = mapped_column(String(8), nullable=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    judged_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # the pairwise batch the round's close sealed this judgment into
    batch_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
