"""ORL builds: builds, the batches they read, ORL entries, tie decisions, overrides, messages.

A build is immutable; ``build_batches.batch_id`` references ``ingest_batches`` so that
deleting a batch a build read is refused (see orlbuild.store.batches.delete_batch).

Revision ID: 0002_builds
Revises: 0001
Create Date: 2026-11-29 16:51:26.835314
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0002_builds'
down_revision: str | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('builds',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('collection_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=512), nullable=True),
    sa.Column('source', sa.String(length=16), nullable=False),
    sa.Column('method', sa.String(length=32), nullable=False),
    sa.Column('parameters', sa.JSON(), nullable=False),
    sa.Column('package_version', sa.String(length=64), nullable=False),
    sa.Column('seed', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('created_by', sa.String(length=512), nullable=False),
    sa.Column('parent_id', sa.Integer(), nullable=True),
    sa.Column('n_queries', sa.Integer(), nullable=False),
    sa.Column('n_failed', sa.Integer(), nullable=False),
    sa.CheckConstraint("source IN ('graded', 'listwise', 'pairwise')", name=op.f('ck_builds_source')),
    sa.ForeignKeyConstraint(['collection_id'], ['collections.id'], name=op.f('fk_builds_collection_id_collections'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['parent_id'], ['builds.id'], name=op.f('fk_builds_parent_id_builds'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_builds'))
    )
    with op.batch_alter_table('builds', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_builds_collection_id'), ['collection_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_builds_name'), ['name'], unique=False)
        batch_op.create_index(batch_op.f('ix_builds_parent_id'), ['parent_id'], unique=False)

    op.create_table('build_messages',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('build_id', sa.Integer(), nullable=False),
    sa.Column('query', sa.String(length=512), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('message', sa.Text(), nullable=False),
    sa.CheckConstraint("kind IN ('failure', 'warning')", name=op.f('ck_build_messages_kind')),
    sa.ForeignKeyConstraint(['build_id'], ['builds.id'], name=op.f('fk_build_messages_build_id_builds'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_build_messages'))
    )
    with op.batch_alter_table('build_messages', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_build_messages_build_id'), ['build_id'], unique=False)

    op.create_table('build_overrides',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('build_id', sa.Integer(), nullable=False),
    sa.Column('parent_id', sa.Integer(), nullable=True),
    sa.Column('query', sa.String(length=512), nullable=False),
    sa.Column('action', sa.String(length=16), nullable=False),
    sa.Column('argument', sa.String(length=512), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('created_by', sa.String(length=512), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("action IN ('merge-tiers', 'split-at')", name=op.f('ck_build_overrides_action')),
    sa.ForeignKeyConstraint(['build_id'], ['builds.id'], name=op.f('fk_build_overrides_build_id_builds'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['parent_id'], ['builds.id'], name=op.f('fk_build_overrides_parent_id_builds'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_build_overrides'))
    )
    with op.batch_alter_table('build_overrides', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_build_overrides_build_id'), ['build_id'], unique=False)

    op.create_table('orl_entries',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('build_id', sa.Integer(), nullable=False),
    sa.Column('query', sa.String(length=512), nullable=False),
    sa.Column('item', sa.String(length=512), nullable=False),
    sa.Column('rank', sa.Integer(), nullable=False),
    sa.Column('score', sa.Float(precision=53), nullable=True),
    sa.Column('low', sa.Float(precision=53), nullable=True),
    sa.Column('high', sa.Float(precision=53), nullable=True),
    sa.Column('native_grade', sa.Float(precision=53), nullable=True),
    sa.CheckConstraint('rank >= 1', name=op.f('ck_orl_entries_rank')),
    sa.ForeignKeyConstraint(['build_id'], ['builds.id'], name=op.f('fk_orl_entries_build_id_builds'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_orl_entries')),
    sa.UniqueConstraint('build_id', 'query', 'item', name=op.f('uq_orl_entries_build_id_query_item'))
    )
    with op.batch_alter_table('orl_entries', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_orl_entries_build_id'), ['build_id'], unique=False)

    op.create_table('tie_decisions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('build_id', sa.Integer(), nullable=False),
    sa.Column('query', sa.String(length=512), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('leader', sa.String(length=512), nullable=False),
    sa.Column('item', sa.String(length=512), nullable=False),
    sa.Column('score_leader', sa.Float(precision=53), nullable=True),
    sa.Column('score_item', sa.Float(precision=53), nullable=True),
    sa.Column('diff', sa.Float(precision=53), nullable=True),
    sa.Column('se', sa.Float(precision=53), nullable=True),
    sa.Column('p_value', sa.Float(precision=53), nullable=True),
    sa.Column('decision', sa.String(length=16), nullable=False),
    sa.Column('rule', sa.String(length=256), nullable=False),
    sa.Column('variance', sa.String(length=64), nullable=False),
    sa.CheckConstraint("decision IN ('tied', 'separated')", name=op.f('ck_tie_decisions_decision')),
    sa.ForeignKeyConstraint(['build_id'], ['builds.id'], name=op.f('fk_tie_decisions_build_id_builds'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tie_decisions'))
    )
    with op.batch_alter_table('tie_decisions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_tie_decisions_build_id'), ['build_id'], unique=False)

    op.create_table('build_batches',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('build_id', sa.Integer(), nullable=False),
    sa.Column('batch_id', sa.Integer(), nullable=True),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('file_name', sa.String(length=1024), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('row_count', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['batch_id'], ['ingest_batches.id'], name=op.f('fk_build_batches_batch_id_ingest_batches')),
    sa.ForeignKeyConstraint(['build_id'], ['builds.id'], name=op.f('fk_build_batches_build_id_builds'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_build_batches')),
    sa.UniqueConstraint('build_id', 'sha256', 'kind', name=op.f('uq_build_batches_build_id_sha256_kind'))
    )
    with op.batch_alter_table('build_batches', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_build_batches_batch_id'), ['batch_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_build_batches_build_id'), ['build_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('build_batches', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_build_batches_build_id'))
        batch_op.drop_index(batch_op.f('ix_build_batches_batch_id'))

    op.drop_table('build_batches')
    with op.batch_alter_table('tie_decisions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_tie_decisions_build_id'))

    op.drop_table('tie_decisions')
    with op.batch_alter_table('orl_entries', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_orl_entries_build_id'))

    op.drop_table('orl_entries')
    with op.batch_alter_table('build_overrides', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_build_overrides_build_id'))

    op.drop_table('build_overrides')
    with op.batch_alter_table('build_messages', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_build_messages_build_id'))

    op.drop_table('build_messages')
    with op.batch_alter_table('builds', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_builds_parent_id'))
        batch_op.drop_index(batch_op.f('ix_builds_name'))
        batch_op.drop_index(batch_op.f('ix_builds_collection_id'))

    op.drop_table('builds')
