"""Keys that a bulk load can defer: name uniqueness as a named unique index, no batch FK on facts.

Ingesting a large vocabulary spent most of its time checking keys row by row
(docs/performance.md, "Ingesting large vocabularies"):

* The uniqueness of a name within its collection (``queries``, ``items``,
  ``annotators``, ``systems``) was a table ``UNIQUE`` constraint; SQLite backs
  one with an automatic index that cannot be dropped. It is now the unique
  index ``uq_<table>_collection_id_name`` (same name, same columns, same
  rule), which the first ingest into an empty name table drops and builds
  again, once, before its transaction commits (``orlbuild.store.bulk``).
* The name tables' foreign key to ``collections`` and the fact tables'
  (``pairwise_judgments``, ``listwise_judgments``, ``graded_judgments``,
  ``run_entries``) foreign key ``batch_id`` to ``ingest_batches`` are dropped:
  PostgreSQL checked each with a trigger per inserted row (about half the
  time of a fact insert). The ids are written only by the ingest, which
  obtains them in the same transaction; deleting a batch deletes its facts
  explicitly (``orlbuild.store.batches.delete_batch``) instead of by
  ``ON DELETE CASCADE``, and collections are never deleted. The ``batch_id``
  indexes stay.

No row changes. The downgrade restores the constraints (it fails if rows no
longer satisfy them, which the code never produces).

Revision ID: 0010_bulk_load_keys
Revises: 0009_presentation_order
Create Date: 2026-12-02 01:10:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0010_bulk_load_keys"
down_revision: str | None = "0009_presentation_order"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME_TABLES = ("queries", "items", "annotators", "systems")
FACT_TABLES = ("listwise_judgments", "pairwise_judgments", "graded_judgments", "run_entries")


def upgrade() -> None:
    for table in NAME_TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_constraint(f"fk_{table}_collection_id_collections", type_="foreignkey")
            batch.drop_constraint(f"uq_{table}_collection_id_name", type_="unique")
        op.create_index(
            f"uq_{table}_collection_id_name", table, ["collection_id", "name"], unique=True
        )
    for table in FACT_TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_constraint(f"fk_{table}_batch_id_ingest_batches", type_="foreignkey")


def downgrade() -> None:
    for table in FACT_TABLES:
        with op.batch_alter_table(table) as batch:
            batch.create_foreign_key(
                f"fk_{table}_batch_id_ingest_batches",
                "ingest_batches",
                ["batch_id"],
                ["id"],
                ondelete="CASCADE",
            )
    for table in NAME_TABLES:
        op.drop_index(f"uq_{table}_collection_id_name", table_name=table)
        with op.batch_alter_table(table) as batch:
            batch.create_unique_constraint(
                f"uq_{table}_collection_id_name", ["collection_id", "name"]
            )
            batch.create_foreign_key(
                f"fk_{table}_collection_id_collections",
                "collections",
                ["collection_id"],
                ["id"],
                ondelete="CASCADE",
            )
