"""The posterior evidence of a build (docs/tiers-and-audit.md, "The posterior computation").

* ``builds.posterior_lambda``, ``builds.posterior_tau``: the empirical-Bayes
  prior fitted over the build's queries (NULL for graded and ``direct``
  builds, and for builds stored before this revision);
* ``orl_entries.top_probability``: the posterior probability that the item
  belongs to its (component's) top segment;
* ``query_posteriors``: per query, ``E`` (the posterior expected number of
  wrong stated orders), ``N`` (the orders stated), and for ``posterior``
  builds ``K_feas`` and ``K_post``;
* ``posterior_boundaries``: per gap of each component's score order, the
  posterior probability that a tier boundary lies there and whether the build
  states one.

Builds stored before keep NULL and no rows: nothing is recomputed for them.

Revision ID: 0015_posterior_evidence
Revises: 0012_item_texts
Create Date: 2026-12-03 13:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_posterior_evidence"
down_revision: str | None = "0012_item_texts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: ``NAME_LENGTH`` of orlbuild.store.models when this migration was written.
NAME_LENGTH = 512


def _build_id() -> sa.Column[int]:
    return sa.Column(
        "build_id",
        sa.Integer(),
        sa.ForeignKey("builds.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    )


def upgrade() -> None:
    with op.batch_alter_table("builds") as batch:
        batch.add_column(sa.Column("posterior_lambda", sa.Float(precision=53), nullable=True))
        batch.add_column(sa.Column("posterior_tau", sa.Float(precision=53), nullable=True))
    op.add_column(
        "orl_entries", sa.Column("top_probability", sa.Float(precision=53), nullable=True)
    )
    op.create_table(
        "query_posteriors",
        sa.Column("id", sa.Integer(), primary_key=True),
        _build_id(),
        sa.Column("query", sa.String(NAME_LENGTH), nullable=False),
        sa.Column("expected_wrong", sa.Float(precision=53), nullable=False),
        sa.Column("stated_orders", sa.Integer(), nullable=False),
        sa.Column("k_feasible", sa.Integer(), nullable=True),
        sa.Column("k_posterior", sa.Integer(), nullable=True),
        sa.UniqueConstraint("build_id", "query"),
    )
    op.create_table(
        "posterior_boundaries",
        sa.Column("id", sa.Integer(), primary_key=True),
        _build_id(),
        sa.Column("query", sa.String(NAME_LENGTH), nullable=False),
        sa.Column("component", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("above", sa.String(NAME_LENGTH), nullable=False),
        sa.Column("below", sa.String(NAME_LENGTH), nullable=False),
        sa.Column("probability", sa.Float(precision=53), nullable=False),
        sa.Column("stated", sa.Boolean(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("posterior_boundaries")
    op.drop_table("query_posteriors")
    with op.batch_alter_table("orl_entries") as batch:
        batch.drop_column("top_probability")
    with op.batch_alter_table("builds") as batch:
        batch.drop_column("posterior_tau")
        batch.drop_column("posterior_lambda")
