"""What a batch's reading kept: a digest of the stored rows and the options that chose them.

Adds to ``ingest_batches`` ``reading_sha256`` (the SHA-256 of the rows and
names the reading produced, after ``--duplicates keep-first`` and
``--score-precision`` chose the rows kept) and ``reading`` (those options in
words). Re-ingesting identical content is a no-op only when it would store the
same rows; read another way, it is refused (docs/input-formats.md, "Input
formats"). Both columns are nullable: batches stored before this revision
keep NULL and re-ingesting their content stays a no-op.

Revision ID: 0005_batch_reading
Revises: 0004_tiering
Create Date: 2026-12-01 05:45:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0005_batch_reading'
down_revision: str | None = '0004_tiering'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (
    ('reading_sha256', sa.String(length=64)),
    ('reading', sa.String(length=200)),
)


# Plain ALTER TABLE ADD/DROP COLUMN (SQLite >= 3.35 drops columns natively): a batch
# "move and copy" would drop ingest_batches, which every fact table references.


def upgrade() -> None:
    for name, kind in COLUMNS:
        op.add_column('ingest_batches', sa.Column(name, kind, nullable=True))


def downgrade() -> None:
    for name, _ in reversed(COLUMNS):
        op.drop_column('ingest_batches', name)
