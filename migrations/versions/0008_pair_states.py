"""Three-state pair decisions (docs/planning.md, "Open decisions and how pairs are chosen").

Adds to ``tie_decisions`` the column ``state``: what the evidence says about
the decision's pair (leader, item) - ``separated`` by the max-t test,
``equivalent`` (its simultaneous interval lies within the build's
``--margin``) or ``undecided``. The ``decision`` column keeps ``tied`` /
``separated`` ("tied" still means "not shown to differ"). Nullable: decisions
taken by a rule and builds stored before this revision keep NULL.

Revision ID: 0008_pair_states
Revises: 0007_backed_orders
Create Date: 2026-12-01 19:20:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0008_pair_states"
down_revision: str | None = "0007_backed_orders"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("tie_decisions", sa.Column("state", sa.String(length=16), nullable=True))


def downgrade() -> None:
    op.drop_column("tie_decisions", "state")
