"""Query and item text: text batches, query texts and item texts.

``orlbuild ingest text`` stores what the judges read (docs/input-formats.md,
"Query and item text"): for a query its text, description and narrative; for
an item its title, text and URL. Each ingested file is a ``text_batches`` row;
its texts point at it and are deleted with it. A query's or an item's text is
the one of its newest batch, so a replacement (``--replace``) is a new batch
and the replaced text stays stored.

The texts refer to ``queries`` and ``items`` by id without a declared foreign
key, as the judgment facts do (migration 0010_bulk_load_keys).

Revision ID: 0012_item_texts
Revises: 0011_c_collation_names
Create Date: 2026-12-03 13:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_item_texts"
down_revision: str | None = "0011_c_collation_names"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: ``NAME_LENGTH`` of orlbuild.store.models when this migration was written.
NAME_LENGTH = 512


def _batch_column() -> sa.Column:
    return sa.Column("batch_id", sa.Integer(), nullable=False)


def upgrade() -> None:
    op.create_table(
        "text_batches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("of", sa.String(length=16), nullable=False),
        sa.Column("format", sa.String(length=16), nullable=False),
        sa.Column("file_name", sa.String(length=1024), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("row_count", sa.Integer(), nullable=False),
        sa.Column("replaced", sa.Integer(), nullable=False),
        sa.Column("lines_read", sa.Integer(), nullable=False),
        sa.Column("reading", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(length=NAME_LENGTH), nullable=False),
        sa.CheckConstraint("of IN ('queries', 'items')", name=op.f("ck_text_batches_of")),
        sa.CheckConstraint("row_count >= 0", name=op.f("ck_text_batches_row_count")),
        sa.ForeignKeyConstraint(
            ["collection_id"],
            ["collections.id"],
            name=op.f("fk_text_batches_collection_id_collections"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_text_batches")),
    )
    op.create_index(
        op.f("ix_text_batches_collection_id"), "text_batches", ["collection_id"], unique=False
    )
    for table, ref, columns in (
        (
            "query_texts",
            "query_id",
            [
                sa.Column("text", sa.Text(), nullable=False),
                sa.Column("description", sa.Text(), nullable=True),
                sa.Column("narrative", sa.Text(), nullable=True),
            ],
        ),
        (
            "item_texts",
            "item_id",
            [
                sa.Column("title", sa.Text(), nullable=True),
                sa.Column("text", sa.Text(), nullable=False),
                sa.Column("url", sa.Text(), nullable=True),
            ],
        ),
    ):
        op.create_table(
            table,
            sa.Column("id", sa.Integer(), nullable=False),
            _batch_column(),
            sa.Column(ref, sa.Integer(), nullable=False),
            *columns,
            sa.ForeignKeyConstraint(
                ["batch_id"],
                ["text_batches.id"],
                name=op.f(f"fk_{table}_batch_id_text_batches"),
                ondelete="CASCADE",
            ),
            sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{table}")),
            sa.UniqueConstraint("batch_id", ref, name=op.f(f"uq_{table}_batch_id_{ref}")),
        )
        op.create_index(op.f(f"ix_{table}_batch_id"), table, ["batch_id"], unique=False)
        op.create_index(op.f(f"ix_{table}_{ref}"), table, [ref], unique=False)


def downgrade() -> None:
    for table, ref in (("item_texts", "item_id"), ("query_texts", "query_id")):
        op.drop_index(op.f(f"ix_{table}_{ref}"), table_name=table)
        op.drop_index(op.f(f"ix_{table}_batch_id"), table_name=table)
        op.drop_table(table)
    op.drop_index(op.f("ix_text_batches_collection_id"), table_name="text_batches")
    op.drop_table("text_batches")
