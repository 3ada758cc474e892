"""Saved evaluations: a system's per-query scores against one build (orlbuild score --save).

``evaluations`` holds one row per saved evaluation (build, system, measures, means,
conventions, package version); ``evaluation_values`` one row per (query, measure), NULL
where a value is undefined. Deleting a build deletes its evaluations.

Revision ID: 0003_evaluations
Revises: 0002_builds
Create Date: 2026-11-29 16:53:34.984537
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0003_evaluations'
down_revision: str | None = '0002_builds'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('evaluations',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('build_id', sa.Integer(), nullable=False),
    sa.Column('system', sa.String(length=512), nullable=False),
    sa.Column('run_file', sa.String(length=1024), nullable=True),
    sa.Column('measures', sa.JSON(), nullable=False),
    sa.Column('means', sa.JSON(), nullable=False),
    sa.Column('missing', sa.String(length=8), nullable=False),
    sa.Column('conventions', sa.JSON(), nullable=False),
    sa.Column('n_queries', sa.Integer(), nullable=False),
    sa.Column('package_version', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('created_by', sa.String(length=512), nullable=False),
    sa.CheckConstraint("missing IN ('zero', 'skip')", name=op.f('ck_evaluations_missing')),
    sa.ForeignKeyConstraint(['build_id'], ['builds.id'], name=op.f('fk_evaluations_build_id_builds'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_evaluations'))
    )
    with op.batch_alter_table('evaluations', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_evaluations_build_id'), ['build_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_evaluations_system'), ['system'], unique=False)

    op.create_table('evaluation_values',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('evaluation_id', sa.Integer(), nullable=False),
    sa.Column('query', sa.String(length=512), nullable=False),
    sa.Column('measure', sa.String(length=512), nullable=False),
    sa.Column('value', sa.Float(precision=53), nullable=True),
    sa.ForeignKeyConstraint(['evaluation_id'], ['evaluations.id'], name=op.f('fk_evaluation_values_evaluation_id_evaluations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_evaluation_values')),
    sa.UniqueConstraint('evaluation_id', 'query', 'measure', name=op.f('uq_evaluation_values_evaluation_id_query_measure'))
    )
    with op.batch_alter_table('evaluation_values', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_evaluation_values_evaluation_id'), ['evaluation_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('evaluation_values', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_evaluation_values_evaluation_id'))

    op.drop_table('evaluation_values')
    with op.batch_alter_table('evaluations', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_evaluations_system'))
        batch_op.drop_index(batch_op.f('ix_evaluations_build_id'))

    op.drop_table('evaluations')
