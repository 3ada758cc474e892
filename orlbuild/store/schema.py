"""Schema versions: Alembic upgrade/downgrade/current and the "at head" check.

The migrations are the only source of the schema. They live in the
top-level ``migrations/`` directory of the source tree; a wheel ships them
as data files (see ``pyproject.toml``), so the installed console script finds
them without the source tree.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import (
    Connection,
    Engine,
    MetaData,
    String,
    Table,
    column,
    func,
    inspect,
    select,
    table,
)
from sqlalchemy.exc import DBAPIError

from orlbuild import __version__
from orlbuild.errors import SchemaOutOfDateError, StoreError
from orlbuild.store.driver_errors import database_errors, is_driver_fault
from orlbuild.store.engine import create_store_engine, normalize_url

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = [
    "HEAD_REVISION",
    "alembic_config",
    "current_revision",
    "downgrade",
    "head_revision",
    "is_known_revision",
    "migrations_dir",
    "newer_store_message",
    "require_head",
    "upgrade",
]

UPGRADE_HINT = "run `orlbuild db upgrade`"

#: The newest migration's revision. Every command that opens a store checks the
#: database against it, so it is written here rather than read from the scripts
#: (which needs Alembic, about 0.1 s to import); ``tests/store/test_schema.py``
#: fails when a new migration is added without updating it.
HEAD_REVISION = "0019_query_facts"

#: Alembic's version table (its default name, used by ``migrations/env.py``).
VERSION_TABLE = "alembic_version"
MIGRATIONS_ENV = "migrations/env.py"


def is_known_revision(revision: str) -> bool:
    """Whether ``revision`` is one of the migrations this orlbuild ships."""
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory.from_config(alembic_config())
    return revision in {rev.revision for rev in scripts.walk_revisions()}


def newer_store_message(revision: str) -> str:
    """What to say about a store at ``revision``, a migration this orlbuild does not know."""
    return (
        f"the database is at revision {revision!r}, which this orlbuild ({__version__}) does "
        "not know: a newer version of orlbuild wrote the store; upgrade orlbuild (`pip install -U "
        "orlbuild`) - `orlbuild db upgrade` cannot help"
    )


def migrations_dir() -> Path:
    """Locate the Alembic script directory.

    In a source checkout (``pyproject.toml`` next to the package) that is the
    top-level ``migrations/``; an installed wheel carries the same files as
    data files under ``<prefix>/share/orlbuild/migrations``, found through the
    distribution's file list so that every install scheme works.
    """
    source_root = Path(__file__).resolve().parents[2]
    if (source_root / "pyproject.toml").is_file() and (source_root / MIGRATIONS_ENV).is_file():
        return source_root / "migrations"
    try:
        files = metadata.files("orlbuild") or []
    except metadata.PackageNotFoundError:
        files = []
    for entry in files:
        if entry.as_posix().endswith("share/orlbuild/" + MIGRATIONS_ENV):
            return Path(str(entry.locate())).resolve().parent
    raise StoreError(
        f"cannot find the orlbuild migrations (looked in {source_root} and the installed "
        "package files); reinstall orlbuild"
    )


def alembic_config(url: str | None = None) -> Config:
    """Build the Alembic configuration programmatically (no ``alembic.ini`` needed).

    Parameters
    ----------
    url
        Database URL the migrations run against when no connection is passed
        through ``config.attributes["connection"]``.
    """
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    if url is not None:
        # ConfigParser interpolation: a literal '%' (URL-encoded passwords) must be doubled.
        config.set_main_option("sqlalchemy.url", normalize_url(url).replace("%", "%%"))
    return config


def head_revision() -> str:
    """The newest revision of the migration scripts (read from them, with Alembic)."""
    from alembic.script import ScriptDirectory

    heads = ScriptDirectory.from_config(alembic_config()).get_heads()
    if len(heads) != 1:
        raise StoreError(f"the migrations have {len(heads)} heads {heads}; merge them")
    return heads[0]


def _run(url: str, action: str, revision: str, *, allow_data_loss: bool = True) -> None:
    """Run one Alembic command on ``url`` inside one transaction.

    Unless ``allow_data_loss``, the transaction is rolled back when the command
    dropped a table that held rows (both backends run DDL transactionally).
    """
    from alembic import command
    from alembic.util.exc import CommandError

    engine = create_store_engine(url)
    try:
        with database_errors(engine), engine.begin() as connection:
            current = current_revision(connection)
            if current is not None and not is_known_revision(current):
                raise SchemaOutOfDateError(newer_store_message(current))
            before = {} if allow_data_loss else _row_counts(connection)
            config = alembic_config(url)
            config.attributes["connection"] = connection
            try:
                getattr(command, action)(config, revision)
            except CommandError as exc:
                raise StoreError(f"cannot {action} to {revision!r}: {exc}") from exc
            except DBAPIError as exc:  # a statement of a migration failed: all rolled back
                if is_driver_fault(exc):
                    raise  # read-only, locked, full, disconnected: said by database_errors
                reason = str(exc.orig or exc).strip().splitlines()[0]
                raise StoreError(
                    f"cannot {action} to {revision!r}: the database refused a migration "
                    f"statement ({reason}); nothing was changed"
                ) from exc
            kept = set(inspect(connection).get_table_names())
            lost = {t: n for t, n in sorted(before.items()) if n and t not in kept}
            if lost:
                counts = ", ".join(f"{t} ({n} rows)" for t, n in lost.items())
                raise StoreError(
                    f"{action} to {revision!r} would drop tables holding data: {counts}; "
                    "nothing was changed. Export what you need first, then pass --yes"
                )
    finally:
        engine.dispose()


def _row_counts(connection: Connection) -> dict[str, int]:
    """Rows of every table of the database (the Alembic version table aside)."""
    counts: dict[str, int] = {}
    for name in inspect(connection).get_table_names():
        if name != VERSION_TABLE:
            table = Table(name, MetaData())
            counts[name] = int(connection.scalar(select(func.count()).select_from(table)) or 0)
    return counts


def upgrade(url: str, revision: str = "head") -> None:
    """Migrate the database at ``url`` up to ``revision`` (default: the newest)."""
    _run(url, "upgrade", revision)


def downgrade(url: str, revision: str, *, allow_data_loss: bool = False) -> None:
    """Migrate the database at ``url`` down to ``revision`` (``base`` empties it).

    Raises
    ------
    StoreError
        The downgrade would drop tables that hold rows and ``allow_data_loss``
        is false (``orlbuild db downgrade`` without ``--yes``); the message
        names the tables and their row counts, and nothing is changed.
    """
    _run(url, "downgrade", revision, allow_data_loss=allow_data_loss)


def current_revision(bind: Engine | Connection) -> str | None:
    """The revision the database is at, or ``None`` when it was never migrated."""
    if isinstance(bind, Engine):
        with database_errors(bind), bind.connect() as connection:
            return current_revision(connection)
    if not inspect(bind).has_table(VERSION_TABLE):
        return None
    version_num = column("version_num", String)
    heads = bind.execute(select(version_num).select_from(table(VERSION_TABLE))).scalars().all()
    return heads[0] if heads else None


def require_head(bind: Engine | Connection) -> None:
    """Raise :class:`SchemaOutOfDateError` unless the database is at the newest revision."""
    current = current_revision(bind)
    head = HEAD_REVISION
    if current == head:
        return
    if current is None:
        engine = bind if isinstance(bind, Engine) else bind.engine
        tables = set(inspect(bind).get_table_names())
        what = "is empty" if not tables else "has no orlbuild schema version"
        raise SchemaOutOfDateError(
            f"the database {engine.url.render_as_string(hide_password=True)} {what}; {UPGRADE_HINT}"
        )
    if not is_known_revision(current):
        raise SchemaOutOfDateError(newer_store_message(current))
    raise SchemaOutOfDateError(
        f"the database is at revision {current!r} but orlbuild needs {head!r}; {UPGRADE_HINT}"
    )
