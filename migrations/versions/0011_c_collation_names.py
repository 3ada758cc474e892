"""Name columns compared byte by byte: ``COLLATE "C"`` on PostgreSQL.

The first ingest into an empty store builds the unique name indexes
``uq_<table>_collection_id_name`` of ``queries``, ``items``, ``annotators`` and
``systems`` once, after its inserts (migration 0010_bulk_load_keys). On
PostgreSQL those indexes were built under the database's collation (often
``C.UTF-8`` or a locale), which PostgreSQL 15 compares through the C library
without its abbreviated-key shortcut: for 1.2 million item ids, most of the
rebuild's time (docs/performance.md, "Ingesting large vocabularies"). Under
``COLLATE "C"`` names compare as bytes, which is the order SQLite's
``BINARY`` collation already uses, so an ``ORDER BY name`` now gives the same
order on both backends whatever the database's locale (on a ``C.UTF-8``
database, code point order, it is unchanged).

SQLite compares text as bytes already: nothing to do there. The downgrade
gives the columns the database's default collation back (PostgreSQL rebuilds
their indexes either way).

Revision ID: 0011_c_collation_names
Revises: 0010_bulk_load_keys
Create Date: 2026-12-02 04:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_c_collation_names"
down_revision: str | None = "0010_bulk_load_keys"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME_TABLES = ("queries", "items", "annotators", "systems")

#: ``NAME_LENGTH`` of orlbuild.store.models when this migration was written.
NAME_LENGTH = 512


def _set_collation(collation: str | None) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in NAME_TABLES:
        op.alter_column(
            table,
            "name",
            type_=sa.String(NAME_LENGTH, collation=collation),
            existing_type=sa.String(NAME_LENGTH),
            existing_nullable=False,
        )


def upgrade() -> None:
    _set_collation("C")


def downgrade() -> None:
    _set_collation(None)
