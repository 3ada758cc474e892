"""Judging in the browser: web users, login links, rounds, assignments and judgments.

``orlbuild serve`` (docs/judging-in-the-browser.md) keeps its users (a role,
the hash of an API token, a disabled flag), their one-time login links (the
hash of the token, an expiry, when used), the rounds opened on a build, the
planned pairs of each round as assignments, and each annotator's lease and
judgment of an assignment (``web_judgments``, one row per assignment and
annotator, keyed by a random idempotency key). Closing a round seals its
judgments into ordinary pairwise ingest batches, which ``build_id``-free
tables never touch, so nothing else changes.

Revision ID: 0018_web_rounds
Revises: 0017_batch_ids_never_reused
Create Date: 2026-12-04 21:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018_web_rounds"
down_revision: str | None = "0017_batch_ids_never_reused"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: ``NAME_LENGTH`` of orlbuild.store.models when this migration was written.
NAME_LENGTH = 512


def _name() -> sa.String:
    return sa.String(NAME_LENGTH).with_variant(sa.String(NAME_LENGTH, collation="C"), "postgresql")


def _when(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "web_users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=NAME_LENGTH), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.Column("api_token_hash", sa.String(length=64), nullable=True),
        _when("created_at"),
        sa.Column("created_by", sa.String(length=NAME_LENGTH), nullable=False),
        sa.CheckConstraint(
            "role IN ('annotator', 'auditor', 'lead')", name=op.f("ck_web_users_role")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_web_users")),
        sa.UniqueConstraint("name", name=op.f("uq_web_users_name")),
        sa.UniqueConstraint("api_token_hash", name=op.f("uq_web_users_api_token_hash")),
    )
    op.create_table(
        "web_login_links",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        _when("created_at"),
        _when("expires_at"),
        _when("used_at", nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["web_users.id"],
            name=op.f("fk_web_login_links_user_id_web_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_web_login_links")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_web_login_links_token_hash")),
    )
    op.create_index(op.f("ix_web_login_links_user_id"), "web_login_links", ["user_id"])
    op.create_table(
        "web_rounds",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("build_id", sa.Integer(), nullable=False),
        sa.Column("collection", sa.String(length=NAME_LENGTH), nullable=False),
        sa.Column("budget", sa.Integer(), nullable=False),
        sa.Column("per_pair", sa.Integer(), nullable=False),
        sa.Column("gold_rate", sa.Float(precision=53), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        _when("created_at"),
        sa.Column("created_by", sa.String(length=NAME_LENGTH), nullable=False),
        _when("closed_at", nullable=True),
        sa.Column("closed_by", sa.String(length=NAME_LENGTH), nullable=True),
        sa.CheckConstraint("status IN ('open', 'closed')", name=op.f("ck_web_rounds_status")),
        sa.CheckConstraint("per_pair >= 1", name=op.f("ck_web_rounds_per_pair")),
        sa.CheckConstraint("budget >= 1", name=op.f("ck_web_rounds_budget")),
        sa.ForeignKeyConstraint(
            ["build_id"],
            ["builds.id"],
            name=op.f("fk_web_rounds_build_id_builds"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_web_rounds")),
    )
    op.create_index(op.f("ix_web_rounds_build_id"), "web_rounds", ["build_id"])
    op.create_table(
        "web_assignments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("round_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("query", _name(), nullable=False),
        sa.Column("item_a", _name(), nullable=False),
        sa.Column("item_b", _name(), nullable=False),
        sa.Column("serves", sa.Text(), nullable=False),
        sa.Column("slots", sa.Integer(), nullable=False),
        sa.CheckConstraint("slots >= 1", name=op.f("ck_web_assignments_slots")),
        sa.ForeignKeyConstraint(
            ["round_id"],
            ["web_rounds.id"],
            name=op.f("fk_web_assignments_round_id_web_rounds"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_web_assignments")),
        sa.UniqueConstraint(
            "round_id", "position", name=op.f("uq_web_assignments_round_id_position")
        ),
    )
    op.create_table(
        "web_judgments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("assignment_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("a_left", sa.Boolean(), nullable=False),
        _when("leased_at"),
        _when("expires_at"),
        sa.Column("outcome", sa.String(length=8), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        _when("judged_at", nullable=True),
        sa.Column("batch_id", sa.Integer(), nullable=True),
        sa.CheckConstraint(
            "outcome IS NULL OR outcome IN ('left', 'right', 'tie', 'skip')",
            name=op.f("ck_web_judgments_outcome"),
        ),
        sa.ForeignKeyConstraint(
            ["assignment_id"],
            ["web_assignments.id"],
            name=op.f("fk_web_judgments_assignment_id_web_assignments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["web_users.id"],
            name=op.f("fk_web_judgments_user_id_web_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_web_judgments")),
        sa.UniqueConstraint("key", name=op.f("uq_web_judgments_key")),
        sa.UniqueConstraint(
            "assignment_id", "user_id", name=op.f("uq_web_judgments_assignment_id_user_id")
        ),
    )
    op.create_index("ix_web_judgments_user_id_judged_at", "web_judgments", ["user_id", "judged_at"])


def downgrade() -> None:
    op.drop_index("ix_web_judgments_user_id_judged_at", table_name="web_judgments")
    op.drop_table("web_judgments")
    op.drop_table("web_assignments")
    op.drop_index(op.f("ix_web_rounds_build_id"), table_name="web_rounds")
    op.drop_table("web_rounds")
    op.drop_index(op.f("ix_web_login_links_user_id"), table_name="web_login_links")
    op.drop_table("web_login_links")
    op.drop_table("web_users")
