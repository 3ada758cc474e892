"""Alembic environment of orlbuild.

orlbuild passes an open connection in ``config.attributes["connection"]``
(see :mod:`orlbuild.store.schema`); the ``alembic`` command line (with
``migrations/alembic.ini``) uses ``$ORLBUILD_DB`` or the ini's URL instead.
SQLite gets batch mode so that later migrations can alter tables.
"""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import Connection

from orlbuild.store.engine import create_store_engine
from orlbuild.store.models import Base

config = context.config
target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    """Emit SQL to standard output (``alembic upgrade head --sql``)."""
    context.configure(
        url=os.environ.get("ORLBUILD_DB") or config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Migrate through the connection orlbuild passed, or one made from the URL."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = os.environ.get("ORLBUILD_DB") or config.get_main_option("sqlalchemy.url")
    engine = create_store_engine(url or "sqlite:///orlbuild.db")
    try:
        with engine.begin() as own_connection:
            _run(own_connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
