"""A migrated PostgreSQL test database made once per test process and emptied between tests.

Creating a database and running every migration cost about a second per
PostgreSQL test, the largest fixed cost of the suite. :class:`MigratedPostgres`
makes one migrated database, hands it to a test, and afterwards:

* ends every session still connected to it (a test may leave a pooled engine);
* compares a fingerprint of everything but the rows (migration revision,
  columns, indexes, constraints, triggers, functions, privileges, database
  settings) with the one taken right after the migration;
* if they match, empties every table with ``TRUNCATE ... RESTART IDENTITY`` and
  restarts every sequence, so the next test sees exactly a fresh migrated store;
* otherwise (a downgrade, an ``ALTER DATABASE ... SET``, a trigger ...) drops
  the database; the next test gets a new one.
"""

from __future__ import annotations

import uuid

from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from orlbuild.store.schema import upgrade

_FINGERPRINT = text(
    """
    SELECT md5(concat_ws('|',
      (SELECT string_agg(version_num, ',' ORDER BY version_num) FROM alembic_version),
      (SELECT string_agg(concat_ws(':', table_schema, table_name, column_name, data_type,
                                   is_nullable, column_default), ',' ORDER BY 1)
         FROM information_schema.columns
        WHERE table_schema NOT IN ('pg_catalog', 'information_schema')),
      (SELECT string_agg(indexdef, ',' ORDER BY indexdef) FROM pg_indexes
        WHERE schemaname NOT IN ('pg_catalog', 'information_schema')),
      (SELECT string_agg(pg_get_constraintdef(c.oid) || c.conname, ',' ORDER BY 1)
         FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')),
      (SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal),
      (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')),
      (SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace),
      (SELECT string_agg(concat_ws(':', grantee, table_name, privilege_type), ','
                         ORDER BY 1)
         FROM information_schema.table_privileges
        WHERE table_schema NOT IN ('pg_catalog', 'information_schema')),
      (SELECT string_agg(array_to_string(s.setconfig, ';'), ',' ORDER BY 1)
         FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
        WHERE d.datname = current_database())
    ))
    """
)


class MigratedPostgres:
    """One reusable migrated database on the server named by ``server_url``."""

    def __init__(self, server_url: str) -> None:
        url = make_url(server_url)
        if url.drivername in ("postgresql", "postgres"):
            url = url.set(drivername="postgresql+psycopg")
        self._server = url
        self._admin: Engine | None = None
        self._name: str | None = None
        self._fingerprint: str | None = None

    def _admin_engine(self) -> Engine:
        if self._admin is None:
            self._admin = create_engine(self._server, isolation_level="AUTOCOMMIT")
        return self._admin

    def _url(self) -> str:
        assert self._name is not None
        return self._server.set(database=self._name).render_as_string(hide_password=False)

    def acquire(self) -> str:
        """The URL of an empty database at ``head``, made now if the last one was dropped."""
        if self._name is None:
            name = f"orlbuild_test_{uuid.uuid4().hex[:16]}"
            with self._admin_engine().connect() as connection:
                connection.execute(text(f'CREATE DATABASE "{name}"'))
            self._name = name
            upgrade(self._url())
            self._fingerprint = self._read_fingerprint()
        return self._url()

    def _read_fingerprint(self) -> str | None:
        engine = create_engine(self._url(), poolclass=NullPool)
        try:
            with engine.connect() as connection:
                return str(connection.execute(_FINGERPRINT).scalar_one())
        except DBAPIError:
            return None  # e.g. alembic_version dropped by a downgrade to base
        finally:
            engine.dispose()

    def _end_other_sessions(self) -> None:
        with self._admin_engine().connect() as connection:
            connection.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = :name AND pid <> pg_backend_pid()"
                ),
                {"name": self._name},
            )

    def release(self) -> None:
        """Empty the database for the next test, or drop it if the test changed its schema."""
        if self._name is None:
            return
        self._end_other_sessions()
        fingerprint = self._read_fingerprint()
        if fingerprint is not None and fingerprint == self._fingerprint:
            engine = create_engine(self._url(), poolclass=NullPool)
            try:
                with engine.begin() as connection:
                    tables = connection.execute(
                        text(
                            "SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) "
                            "FROM pg_tables WHERE schemaname = 'public' "
                            "AND tablename <> 'alembic_version'"
                        )
                    ).scalars()
                    listed = ", ".join(tables)
                    if listed:
                        connection.execute(text(f"TRUNCATE {listed} RESTART IDENTITY CASCADE"))
                    sequences = connection.execute(
                        text(
                            "SELECT quote_ident(sequence_schema) || '.' || "
                            "quote_ident(sequence_name) FROM information_schema.sequences"
                        )
                    ).scalars()
                    for sequence in list(sequences):
                        connection.execute(text(f"ALTER SEQUENCE {sequence} RESTART"))
                return
            except DBAPIError:
                pass  # anything odd: fall through and start from a new database
            finally:
                engine.dispose()
        self._drop()

    def _drop(self) -> None:
        with self._admin_engine().connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{self._name}" WITH (FORCE)'))
        self._name = None
        self._fingerprint = None

    def close(self) -> None:
        """Drop the database and release the server connection (end of the test process)."""
        if self._name is not None:
            self._drop()
        if self._admin is not None:
            self._admin.dispose()
