"""Shared pytest fixtures: fresh databases on SQLite and (optionally) PostgreSQL.

Every store test takes ``db_url`` or ``migrated_db_url`` and so runs once per
backend. The PostgreSQL variant runs only when ``ORLBUILD_TEST_PG_URL`` names a
server (``.ci/run`` sets it when ``pg_isready -h 127.0.0.1`` succeeds), e.g.
``postgresql+psycopg://postgres@127.0.0.1:5432/test``; otherwise it is
reported as skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from migrated_postgres import MigratedPostgres
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from orlbuild.store.schema import upgrade
from tests.files import Write

PG_ENV_VAR = "ORLBUILD_TEST_PG_URL"

# Every test database is thrown away after its test, so no commit needs to wait for
# its WAL flush: libpq reads PGOPTIONS in this process and in every command the tests
# start. Commits stay atomic and visible to other sessions at once; only a crash of
# the server itself could lose one, which no test does. Creating and dropping a test
# database takes about 0.8 s instead of 2 s.
os.environ.setdefault("PGOPTIONS", "-c synchronous_commit=off")


def _fresh_postgres_database(server_url: str) -> Iterator[str]:
    """Create a uniquely named database on the server, yield its URL, drop it afterwards."""
    url = make_url(server_url)
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    name = f"orlbuild_test_{uuid.uuid4().hex[:16]}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def write_file(tmp_path: Path) -> Write:
    """Write text (UTF-8) or raw bytes to ``tmp_path/name`` and return the path."""

    def write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        return path

    return write


@pytest.fixture(scope="session", autouse=True)
def _temporary_files_stay_in_the_test_folder(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[None]:
    """Point ``tempfile`` and ``$TMPDIR`` (for the commands the tests start) at pytest's folder.

    A command whose store refuses a write keeps its result in a temporary file
    (``orlbuild/output_files.py``, ``keep_unstored``); under test those files land
    here, and pytest removes them with its old folders instead of leaving them in /tmp.
    """
    folder = tmp_path_factory.mktemp("tmp")
    saved = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = tempfile.tempdir = str(folder)
    yield
    tempfile.tempdir = saved[1]
    if saved[0] is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = saved[0]


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param("postgresql", marks=pytest.mark.postgres),
    ]
)
def backend(request: pytest.FixtureRequest) -> str:
    """The store backend a test runs on: ``sqlite``, or ``postgresql`` when a server is named."""
    if request.param == "postgresql" and not os.environ.get(PG_ENV_VAR):
        pytest.skip(f"PostgreSQL tests need {PG_ENV_VAR} (e.g. postgresql+psycopg://...)")
    return str(request.param)


@pytest.fixture
def db_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """URL of a fresh, EMPTY database (no tables), once per backend.

    * ``sqlite``: a new file ``tmp_path/orlbuild.db`` (``sqlite:///...``).
    * ``postgresql``: a new database ``orlbuild_test_<random>`` created on the
      server named by ``$ORLBUILD_TEST_PG_URL`` and dropped (``WITH (FORCE)``)
      after the test; skipped with a reason when the variable is unset.

    Use it for migration tests and anything that must see an unmigrated
    database; most tests want :func:`migrated_db_url`. Dispose of engines you
    create before the test ends.
    """
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'orlbuild.db'}"
        return
    yield from _fresh_postgres_database(os.environ[PG_ENV_VAR])


@pytest.fixture(scope="session")
def _migrated_sqlite_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One SQLite store upgraded to ``head`` per test process, copied for each test."""
    path = tmp_path_factory.mktemp("migrated") / "orlbuild.db"
    upgrade(f"sqlite:///{path}")
    assert not path.with_name(path.name + "-wal").exists()  # the whole store is in one file
    return path


@pytest.fixture(scope="session")
def _migrated_postgres() -> Iterator[MigratedPostgres]:
    """A reusable migrated PostgreSQL database per test process (see :class:`MigratedPostgres`)."""
    pool = MigratedPostgres(os.environ.get(PG_ENV_VAR, ""))
    yield pool
    pool.close()


@pytest.fixture
def migrated_db_url(
    backend: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> Iterator[str]:
    """URL of a fresh database already upgraded to the newest migration (``head``).

    Parametrized like :func:`db_url` (SQLite always; PostgreSQL when
    ``$ORLBUILD_TEST_PG_URL`` is set), so a test using it runs on both
    backends. Pass it to ``orlbuild --db URL ...`` or
    :func:`orlbuild.store.open_store`.

    Running the migrations for every test was the largest fixed cost of the
    suite, so the migrated state is made once per test process and handed out
    again: on SQLite as a copy of a migrated file; on PostgreSQL as one database
    that is emptied after each test (``TRUNCATE ... RESTART IDENTITY``), and
    dropped and made anew whenever a test changed more than its rows (a
    downgrade, a database setting, a trigger). Each test therefore still sees an
    empty store at ``head`` with its identities starting at 1.
    """
    if backend == "sqlite":
        path = tmp_path / "orlbuild.db"
        shutil.copyfile(request.getfixturevalue("_migrated_sqlite_file"), path)
        yield f"sqlite:///{path}"
        return
    pool: MigratedPostgres = request.getfixturevalue("_migrated_postgres")
    yield pool.acquire()
    pool.release()


@pytest.fixture(scope="session")
def dask_scheduler() -> Iterator[str]:
    """Address of a LocalCluster of two single-threaded worker processes (the executor tests)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},  # its HTTP server: any free port
    ) as cluster:
        yield cluster.scheduler_address
        from orlbuild.executor import close_dask_connections

        close_dask_connections()  # the executor keeps its client; close it before the cluster
