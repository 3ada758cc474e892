"""Evidence of the --tiering procedures on every tie decision (issue 10).

Adds to ``tie_decisions`` the procedure that decided (``simultaneous``,
``model``, ``leader``), the family size it controls, the critical value the
studentized difference ``z`` was compared with, and for ``model`` the BIC
penalty, the log-likelihood gain and the BIC change of the boundary. Every
column is nullable: decisions stored before this revision keep NULL (their
build's parameters have no ``tiering`` and read as ``leader``).

Revision ID: 0004_tiering
Revises: 0003_evaluations
Create Date: 2026-12-01 02:10:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0004_tiering'
down_revision: str | None = '0003_evaluations'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (
    ('procedure', sa.String(length=16)),
    ('family_size', sa.Integer()),
    ('critical', sa.Float(precision=53)),
    ('z', sa.Float(precision=53)),
    ('bic_penalty', sa.Float(precision=53)),
    ('loglik_gain', sa.Float(precision=53)),
    ('bic_change', sa.Float(precision=53)),
)


def upgrade() -> None:
    with op.batch_alter_table('tie_decisions') as batch:
        for name, kind in COLUMNS:
            batch.add_column(sa.Column(name, kind, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('tie_decisions') as batch:
        for name, _ in reversed(COLUMNS):
            batch.drop_column(name)
