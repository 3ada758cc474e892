"""How many times a pairwise outcome happened: ``pairwise_judgments.count``.

Published count tables (docs/input-formats.md, "Input formats": every pairwise shape may
carry ``count``) store one row per distinct outcome with its multiplicity
instead of one row per comparison. The column is NOT NULL with a server
default of 1, so every row stored before this revision counts once, and is
checked to be at least 1 (rows with count 0 are skipped at ingest).

Revision ID: 0006_pairwise_count
Revises: 0005_batch_reading
Create Date: 2026-12-01 13:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0006_pairwise_count"
down_revision: str | None = "0005_batch_reading"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# A batch operation: SQLite cannot add a CHECK constraint to an existing table, so the
# table is copied once. Nothing refers to pairwise_judgments, so the copy is safe.


def upgrade() -> None:
    with op.batch_alter_table("pairwise_judgments") as batch:
        batch.add_column(
            sa.Column("count", sa.Integer(), nullable=False, server_default=sa.text("1"))
        )
        batch.create_check_constraint("count", "count >= 1")


def downgrade() -> None:
    with op.batch_alter_table("pairwise_judgments") as batch:
        batch.drop_constraint("count", type_="check")
        batch.drop_column("count")
