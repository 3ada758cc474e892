"""Backed orders and annotator reliabilities (docs/tiers-and-audit.md, "How tiers are decided and audited").

Adds to ``tie_decisions`` the evidence of a boundary: its weakest crossing pair
(``weakest_above``, ``weakest_below``, ``weakest_z``, ``weakest_critical``),
the number of pairs across it (``crossing_pairs``) and of those no test backs
(``unbacked_pairs``); to ``orl_entries`` the flag ``under_judged`` (an item
placed by its estimate whose orders are not backed); and the table
``annotator_reliabilities`` (``--annotators reliability``: each annotator's
reliability, its interval, outcomes and the pairs that flip without them).
All new columns are nullable: builds stored before this revision keep NULL.

Revision ID: 0007_backed_orders
Revises: 0006_pairwise_count
Create Date: 2026-12-01 13:05:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0007_backed_orders"
down_revision: str | None = "0006_pairwise_count"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DECISION_COLUMNS = (
    ("weakest_above", sa.String(length=512)),
    ("weakest_below", sa.String(length=512)),
    ("weakest_z", sa.Float(precision=53)),
    ("weakest_critical", sa.Float(precision=53)),
    ("crossing_pairs", sa.Integer()),
    ("unbacked_pairs", sa.Integer()),
)


def upgrade() -> None:
    for name, kind in DECISION_COLUMNS:
        op.add_column("tie_decisions", sa.Column(name, kind, nullable=True))
    op.add_column("orl_entries", sa.Column("under_judged", sa.Boolean(), nullable=True))
    op.create_table(
        "annotator_reliabilities",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("build_id", sa.Integer(), nullable=False),
        sa.Column("annotator", sa.String(length=512), nullable=False),
        sa.Column("reliability", sa.Float(precision=53), nullable=False),
        sa.Column("low", sa.Float(precision=53), nullable=True),
        sa.Column("high", sa.Float(precision=53), nullable=True),
        sa.Column("comparisons", sa.Float(precision=53), nullable=False),
        sa.Column("flips", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["build_id"],
            ["builds.id"],
            name=op.f("fk_annotator_reliabilities_build_id_builds"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_annotator_reliabilities")),
    )
    op.create_index(
        op.f("ix_annotator_reliabilities_build_id"),
        "annotator_reliabilities",
        ["build_id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_annotator_reliabilities_build_id"), table_name="annotator_reliabilities")
    op.drop_table("annotator_reliabilities")
    op.drop_column("orl_entries", "under_judged")
    for name, _ in reversed(DECISION_COLUMNS):
        op.drop_column("tie_decisions", name)
