"""A query's stated and unbacked cross-tier orders as columns, not a sentence.

Builds stored a query's count of the cross-tier orders no test backs only as a
warning (``"5 of 12 stated cross-tier orders are not backed by a test"`` in
``build_messages``), which the audit parsed back. This revision adds
``query_orders`` (per build and query: ``stated_orders``, ``unbacked_orders``),
which the builders write for every query whose tiering tested its boundaries.

Old stores: each such warning becomes its row and the warning is removed, so the
audit reads the same counts as before. A query of an old build without the warning
(no unbacked order, or no test) has no row: its counts are unknown (``None``), as
they were (the sentence was written only when some order was unbacked). The
downgrade writes the warnings back from the rows with an unbacked order.
The posterior expected wrong orders are columns already (``query_posteriors``,
0015_posterior_evidence).

Revision ID: 0019_query_facts
Revises: 0018_web_rounds
Create Date: 2026-12-04 22:30:00.000000
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019_query_facts"
down_revision: str | None = "0018_web_rounds"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: ``NAME_LENGTH`` of orlbuild.store.models when this migration was written.
NAME_LENGTH = 512
#: The warning the builders wrote before this revision (builders/tiering/backed_orders.py).
_NOTE = "{unbacked} of {stated} stated cross-tier orders are not backed by a test"
_NOTE_PATTERN = re.compile(r"^(\d+) of (\d+) stated cross-tier orders are not backed by a test$")

_messages = sa.table(
    "build_messages",
    sa.column("id", sa.Integer),
    sa.column("build_id", sa.Integer),
    sa.column("query", sa.String),
    sa.column("kind", sa.String),
    sa.column("message", sa.Text),
)
_orders = sa.table(
    "query_orders",
    sa.column("build_id", sa.Integer),
    sa.column("query", sa.String),
    sa.column("stated_orders", sa.Integer),
    sa.column("unbacked_orders", sa.Integer),
)


def upgrade() -> None:
    op.create_table(
        "query_orders",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "build_id",
            sa.Integer(),
            sa.ForeignKey("builds.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("query", sa.String(NAME_LENGTH), nullable=False),
        sa.Column("stated_orders", sa.Integer(), nullable=False),
        sa.Column("unbacked_orders", sa.Integer(), nullable=False),
        sa.UniqueConstraint("build_id", "query"),
    )
    connection = op.get_bind()
    notes = connection.execute(
        sa.select(_messages.c.id, _messages.c.build_id, _messages.c.query, _messages.c.message)
        .where(_messages.c.kind == "warning")
        .where(_messages.c.message.like("% stated cross-tier orders are not backed by a test"))
    ).all()
    rows, done = [], []
    for note in notes:
        match = _NOTE_PATTERN.match(str(note.message))
        if match is None:
            continue
        rows.append(
            {
                "build_id": note.build_id,
                "query": note.query,
                "stated_orders": int(match.group(2)),
                "unbacked_orders": int(match.group(1)),
            }
        )
        done.append(note.id)
    if rows:
        connection.execute(sa.insert(_orders), rows)
    for start in range(0, len(done), 500):
        connection.execute(
            sa.delete(_messages).where(_messages.c.id.in_(done[start : start + 500]))
        )


def downgrade() -> None:
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(_orders.c.build_id, _orders.c.query, _orders.c.stated_orders,
                  _orders.c.unbacked_orders).where(_orders.c.unbacked_orders > 0)
    ).all()  # fmt: skip
    if rows:
        connection.execute(
            sa.insert(_messages),
            [
                {
                    "build_id": r.build_id,
                    "query": r.query,
                    "kind": "warning",
                    "message": _NOTE.format(stated=r.stated_orders, unbacked=r.unbacked_orders),
                }
                for r in rows
            ],
        )
    op.drop_table("query_orders")
