"""Migrations are the source of the schema: up, down, up again; models agree with them."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

from orlbuild.errors import SchemaOutOfDateError
from orlbuild.store import (
    create_store_engine,
    current_revision,
    downgrade,
    head_revision,
    open_store,
    upgrade,
)
from orlbuild.store.models import Base
from tests.stores import disposed


def _tables(url: str) -> set[str]:
    with disposed(create_store_engine(url)) as engine, engine.connect() as connection:
        return set(inspect(connection).get_table_names()) - {"alembic_version"}


def test_upgrade_downgrade_upgrade(db_url: str) -> None:
    upgrade(db_url)
    assert _tables(db_url) >= {"queries", "items", "pairwise_judgments", "ingest_batches"}
    downgrade(db_url, "base")
    assert _tables(db_url) == set()
    upgrade(db_url)
    with disposed(create_store_engine(db_url)) as engine:
        assert current_revision(engine) == head_revision()


def test_models_match_migrations(migrated_db_url: str) -> None:
    engine = create_store_engine(migrated_db_url)
    with disposed(engine), engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        diff = compare_metadata(context, Base.metadata)
    assert diff == []


def test_empty_database_is_refused_with_upgrade_hint(db_url: str) -> None:
    with pytest.raises(SchemaOutOfDateError, match="orlbuild db upgrade"):
        open_store(db_url)


def test_database_behind_head_is_refused(db_url: str) -> None:
    upgrade(db_url)
    downgrade(db_url, "base")
    with pytest.raises(SchemaOutOfDateError, match="orlbuild db upgrade"):
        open_store(db_url)


def test_unknown_revision_is_refused(migrated_db_url: str) -> None:
    with disposed(create_store_engine(migrated_db_url)) as engine, engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = 'ffffffff'"))
    with pytest.raises(SchemaOutOfDateError, match="newer version"):
        open_store(migrated_db_url)


def test_open_store_can_create_a_new_database(db_url: str) -> None:
    with disposed(open_store(db_url, upgrade_if_empty=True)) as engine:
        assert current_revision(engine) == head_revision()


def test_sqlite_connections_use_wal_foreign_keys_and_busy_timeout(tmp_path) -> None:
    engine = create_store_engine(f"sqlite:///{tmp_path / 'x.db'}")
    with disposed(engine), engine.connect() as connection:
        pragma = lambda name: connection.exec_driver_sql(f"PRAGMA {name}").scalar()  # noqa: E731
        assert pragma("journal_mode") == "wal"
        assert pragma("foreign_keys") == 1
        assert pragma("busy_timeout") >= 10_000


def test_db_commands_and_refusal_of_out_of_date_databases(db_url: str, tmp_path) -> None:
    from tests.ingest.conftest import run_cli

    data = tmp_path / "p.tsv"
    data.write_text("query\twinner\tloser\nq1\td1\td2\n")
    # A missing SQLite file is created by an ingest (issue 40: tests/cli/test_first_hour.py);
    # every other command still refuses a store without the schema.
    refused = run_cli(db_url, "status")
    assert refused.exit_code == 1
    assert "run `orlbuild db upgrade`" in refused.output

    assert run_cli(db_url, "db", "upgrade").exit_code == 0
    current = run_cli(db_url, "db", "current")
    assert current.exit_code == 0 and current.stdout.startswith(f"{head_revision()} (head")
    assert run_cli(db_url, "ingest", "pairwise", str(data)).exit_code == 0

    assert run_cli(db_url, "db", "downgrade", "0001").exit_code == 0
    behind = run_cli(db_url, "status")
    assert behind.exit_code == 1
    assert "at revision '0001' but orlbuild needs" in behind.output
    assert "needs `orlbuild db upgrade`" in run_cli(db_url, "db", "current").stdout
    bad = run_cli(db_url, "db", "upgrade", "nonsense")
    assert bad.exit_code == 1 and "Traceback" not in bad.output


def test_every_migration_file_is_shipped_in_the_wheel() -> None:
    """pyproject's data-files must cover migrations/, or an installed orlbuild cannot migrate."""
    import fnmatch
    import sys
    from pathlib import Path

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    root = Path(__file__).resolve().parents[2]
    config = tomllib.loads((root / "pyproject.toml").read_text())
    patterns = [p for globs in config["tool"]["setuptools"]["data-files"].values() for p in globs]
    shipped = [
        path.relative_to(root).as_posix()
        for path in (root / "migrations").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    ]
    assert shipped
    missing = [f for f in shipped if not any(fnmatch.fnmatch(f, p) for p in patterns)]
    assert missing == []


def test_unreachable_database_is_a_one_line_error(tmp_path) -> None:
    from tests.ingest.conftest import run_cli

    url = f"sqlite:///{tmp_path / 'missing-dir' / 'x.db'}"
    for args in (("db", "upgrade"), ("db", "current")):
        result = run_cli(url, *args)
        assert result.exit_code == 1
        assert "cannot use the database" in result.output and "Traceback" not in result.output
    server = "postgresql+psycopg://nobody@127.0.0.1:1/none"  # nothing listens on port 1
    result = run_cli(server, "status")
    assert result.exit_code == 1
    assert "cannot use the database" in result.output and "Traceback" not in result.output


def test_missing_sqlite_file_is_not_created_by_other_commands(tmp_path) -> None:
    from tests.ingest.conftest import run_cli

    path = tmp_path / "absent.db"
    result = run_cli(f"sqlite:///{path}", "status")
    assert result.exit_code == 1
    assert "there is no database file" in result.output and "orlbuild db upgrade" in result.output
    assert not path.exists()


def test_presentation_order_migration_keeps_rows_and_leaves_older_ones_unknown(
    db_url: str, tmp_path
) -> None:
    # 0009 adds pairwise_judgments.winner_first: rows stored before it (here: stored, then
    # the column dropped by the downgrade and added back) read as not recorded (NA).
    from orlbuild.store import load_pairwise
    from tests.ingest.conftest import run_cli

    upgrade(db_url)
    data = tmp_path / "arena.csv"
    data.write_text("qid,model_a,model_b,winner\nq,m1,m2,model_b\nq,m2,m3,model_a\n")
    assert run_cli(db_url, "ingest", "pairwise", str(data)).exit_code == 0
    with disposed(create_store_engine(db_url)) as engine:
        assert load_pairwise(engine)["winner_first"].tolist() == [False, True]
        downgrade(db_url, "0008_pair_states")
        columns = {c["name"] for c in inspect(engine).get_columns("pairwise_judgments")}
        assert "winner_first" not in columns and "count" in columns
        upgrade(db_url)
        kept = load_pairwise(engine)
        assert kept[["winner", "loser"]].values.tolist() == [["m2", "m1"], ["m2", "m3"]]
        assert kept["winner_first"].isna().all()


def test_head_revision_constant_is_the_newest_migration() -> None:
    """``HEAD_REVISION`` (what opening a store checks against) follows the scripts."""
    from orlbuild.store.schema import HEAD_REVISION

    assert head_revision() == HEAD_REVISION
