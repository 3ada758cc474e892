"""Batch ids are never reused: ``ingest_batches.id`` is ``AUTOINCREMENT`` on SQLite.

Without ``AUTOINCREMENT`` SQLite gives a new row the largest id in the table
plus one, so after ``batches delete 5`` of the newest batch the next ingest
became batch 5 again, and a report or audit citing "batch 5" was ambiguous
(docs/reliability.md, "Batch ids and concurrent deletes"). With it, SQLite
keeps the largest id ever given in ``sqlite_sequence`` and never hands it out
again. PostgreSQL's
``SERIAL`` sequence never reuses a value already: nothing to do there.

SQLite cannot add ``AUTOINCREMENT`` to an existing table, so ``ingest_batches``
is rebuilt (Alembic's batch mode: a copy with the same rows, ids, constraints
and indexes). The migration runs in one transaction with foreign keys on, in
which dropping the old table would fail on ``build_batches``'s foreign key
to it (its implicit ``DELETE``); that key is therefore dropped first and
restored after the rebuild, in the same transaction. No row changes. The
downgrade rebuilds the table without ``AUTOINCREMENT``.

Revision ID: 0017_batch_ids_never_reused
Revises: 0016_ndcg_full_names
Create Date: 2026-12-03 13:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0017_batch_ids_never_reused"
down_revision: str | None = "0016_ndcg_full_names"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_KEY = "fk_build_batches_batch_id_ingest_batches"


def _rebuild(autoincrement: bool) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    with op.batch_alter_table("build_batches") as batch:
        batch.drop_constraint(_KEY, type_="foreignkey")
    with op.batch_alter_table(
        "ingest_batches", recreate="always", table_kwargs={"sqlite_autoincrement": autoincrement}
    ):
        pass
    with op.batch_alter_table("build_batches") as batch:
        batch.create_foreign_key(_KEY, "ingest_batches", ["batch_id"], ["id"])


def upgrade() -> None:
    _rebuild(True)


def downgrade() -> None:
    _rebuild(False)
