"""Which item of a pairwise judgment was shown first: ``pairwise_judgments.winner_first``.

The shapes that name the two items by position (arena's ``item_a``/``model_a``
before ``item_b``/``model_b``, evalica's and crowd-kit's ``left`` before
``right``) say which item was shown first; the stored row keeps it as
``winner_first``: true when the item stored as ``winner_id`` was shown first
(for a tie, ``winner_id`` is the item given first, so it is true), false when
``loser_id`` was. The column is nullable: NULL for the shapes that do not say
(native ``winner``/``loser``, ``prefs-release``, ``trec-prefs``) and for every
row stored before this revision (docs/tiers-and-audit.md, "Quality checks").

Revision ID: 0009_presentation_order
Revises: 0008_pair_states
Create Date: 2026-12-01 19:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0009_presentation_order"
down_revision: str | None = "0008_pair_states"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("pairwise_judgments") as batch:
        batch.add_column(sa.Column("winner_first", sa.Boolean(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("pairwise_judgments") as batch:
        batch.drop_column("winner_first")
