"""Initial schema: collections, names, ingest batches, judgments, systems and runs.

Revision ID: 0001
Revises:
Create Date: 2026-11-29 16:42:29.374288
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0001'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('collections',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=512), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_collections')),
    sa.UniqueConstraint('name', name=op.f('uq_collections_name'))
    )
    op.create_table('annotators',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('collection_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=512), nullable=False),
    sa.ForeignKeyConstraint(['collection_id'], ['collections.id'], name=op.f('fk_annotators_collection_id_collections'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_annotators')),
    sa.UniqueConstraint('collection_id', 'name', name=op.f('uq_annotators_collection_id_name'))
    )
    op.create_table('items',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('collection_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=512), nullable=False),
    sa.ForeignKeyConstraint(['collection_id'], ['collections.id'], name=op.f('fk_items_collection_id_collections'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_items')),
    sa.UniqueConstraint('collection_id', 'name', name=op.f('uq_items_collection_id_name'))
    )
    op.create_table('queries',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('collection_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=512), nullable=False),
    sa.ForeignKeyConstraint(['collection_id'], ['collections.id'], name=op.f('fk_queries_collection_id_collections'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_queries')),
    sa.UniqueConstraint('collection_id', 'name', name=op.f('uq_queries_collection_id_name'))
    )
    op.create_table('systems',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('collection_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=512), nullable=False),
    sa.ForeignKeyConstraint(['collection_id'], ['collections.id'], name=op.f('fk_systems_collection_id_collections'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_systems')),
    sa.UniqueConstraint('collection_id', 'name', name=op.f('uq_systems_collection_id_name'))
    )
    op.create_table('ingest_batches',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('collection_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('file_name', sa.String(length=1024), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('row_count', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('created_by', sa.String(length=512), nullable=False),
    sa.Column('system_id', sa.Integer(), nullable=True),
    sa.CheckConstraint("kind IN ('listwise', 'pairwise', 'graded', 'run')", name=op.f('ck_ingest_batches_kind')),
    sa.CheckConstraint('row_count >= 0', name=op.f('ck_ingest_batches_row_count')),
    sa.ForeignKeyConstraint(['collection_id'], ['collections.id'], name=op.f('fk_ingest_batches_collection_id_collections'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['system_id'], ['systems.id'], name=op.f('fk_ingest_batches_system_id_systems'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_ingest_batches')),
    sa.UniqueConstraint('collection_id', 'kind', 'sha256', name=op.f('uq_ingest_batches_collection_id_kind_sha256'))
    )
    op.create_index(op.f('ix_ingest_batches_collection_id'), 'ingest_batches', ['collection_id'], unique=False)
    op.create_index(op.f('ix_ingest_batches_system_id'), 'ingest_batches', ['system_id'], unique=False)
    op.create_table('graded_judgments',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('batch_id', sa.Integer(), nullable=False),
    sa.Column('query_id', sa.Integer(), nullable=False),
    sa.Column('annotator_id', sa.Integer(), nullable=False),
    sa.Column('item_id', sa.Integer(), nullable=False),
    sa.Column('grade', sa.Integer(), nullable=False),
    sa.CheckConstraint('grade >= 0', name=op.f('ck_graded_judgments_grade')),
    sa.ForeignKeyConstraint(['batch_id'], ['ingest_batches.id'], name=op.f('fk_graded_judgments_batch_id_ingest_batches'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_graded_judgments'))
    )
    op.create_index(op.f('ix_graded_judgments_batch_id'), 'graded_judgments', ['batch_id'], unique=False)
    op.create_index(op.f('ix_graded_judgments_query_id'), 'graded_judgments', ['query_id'], unique=False)
    op.create_table('listwise_judgments',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('batch_id', sa.Integer(), nullable=False),
    sa.Column('query_id', sa.Integer(), nullable=False),
    sa.Column('annotator_id', sa.Integer(), nullable=False),
    sa.Column('item_id', sa.Integer(), nullable=False),
    sa.Column('rank', sa.Integer(), nullable=False),
    sa.CheckConstraint('rank >= 1', name=op.f('ck_listwise_judgments_rank')),
    sa.ForeignKeyConstraint(['batch_id'], ['ingest_batches.id'], name=op.f('fk_listwise_judgments_batch_id_ingest_batches'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_listwise_judgments'))
    )
    op.create_index(op.f('ix_listwise_judgments_batch_id'), 'listwise_judgments', ['batch_id'], unique=False)
    op.create_index(op.f('ix_listwise_judgments_query_id'), 'listwise_judgments', ['query_id'], unique=False)
    op.create_table('pairwise_judgments',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('batch_id', sa.Integer(), nullable=False),
    sa.Column('query_id', sa.Integer(), nullable=False),
    sa.Column('annotator_id', sa.Integer(), nullable=False),
    sa.Column('winner_id', sa.Integer(), nullable=False),
    sa.Column('loser_id', sa.Integer(), nullable=False),
    sa.Column('tie', sa.Boolean(), nullable=False),
    sa.CheckConstraint('winner_id <> loser_id', name=op.f('ck_pairwise_judgments_distinct_items')),
    sa.ForeignKeyConstraint(['batch_id'], ['ingest_batches.id'], name=op.f('fk_pairwise_judgments_batch_id_ingest_batches'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_pairwise_judgments'))
    )
    op.create_index(op.f('ix_pairwise_judgments_batch_id'), 'pairwise_judgments', ['batch_id'], unique=False)
    op.create_index(op.f('ix_pairwise_judgments_query_id'), 'pairwise_judgments', ['query_id'], unique=False)
    op.create_table('run_entries',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('batch_id', sa.Integer(), nullable=False),
    sa.Column('system_id', sa.Integer(), nullable=False),
    sa.Column('query_id', sa.Integer(), nullable=False),
    sa.Column('item_id', sa.Integer(), nullable=False),
    sa.Column('rank', sa.Integer(), nullable=False),
    sa.Column('score', sa.Float(precision=53), nullable=True),
    sa.CheckConstraint('rank >= 0', name=op.f('ck_run_entries_rank')),
    sa.ForeignKeyConstraint(['batch_id'], ['ingest_batches.id'], name=op.f('fk_run_entries_batch_id_ingest_batches'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['system_id'], ['systems.id'], name=op.f('fk_run_entries_system_id_systems'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_run_entries')),
    sa.UniqueConstraint('system_id', 'query_id', 'item_id', name=op.f('uq_run_entries_system_id_query_id_item_id'))
    )
    op.create_index(op.f('ix_run_entries_batch_id'), 'run_entries', ['batch_id'], unique=False)
    op.create_index(op.f('ix_run_entries_query_id'), 'run_entries', ['query_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_run_entries_query_id'), table_name='run_entries')
    op.drop_index(op.f('ix_run_entries_batch_id'), table_name='run_entries')
    op.drop_table('run_entries')
    op.drop_index(op.f('ix_pairwise_judgments_query_id'), table_name='pairwise_judgments')
    op.drop_index(op.f('ix_pairwise_judgments_batch_id'), table_name='pairwise_judgments')
    op.drop_table('pairwise_judgments')
    op.drop_index(op.f('ix_listwise_judgments_query_id'), table_name='listwise_judgments')
    op.drop_index(op.f('ix_listwise_judgments_batch_id'), table_name='listwise_judgments')
    op.drop_table('listwise_judgments')
    op.drop_index(op.f('ix_graded_judgments_query_id'), table_name='graded_judgments')
    op.drop_index(op.f('ix_graded_judgments_batch_id'), table_name='graded_judgments')
    op.drop_table('graded_judgments')
    op.drop_index(op.f('ix_ingest_batches_system_id'), table_name='ingest_batches')
    op.drop_index(op.f('ix_ingest_batches_collection_id'), table_name='ingest_batches')
    op.drop_table('ingest_batches')
    op.drop_table('systems')
    op.drop_table('queries')
    op.drop_table('items')
    op.drop_table('annotators')
    op.drop_table('collections')
