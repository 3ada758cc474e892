"""A store migrated by a newer orlbuild is named as such by `db current` and `db upgrade`.

Issue 39: `db current` advised `db upgrade`, which then failed with Alembic's "Can't locate
revision". Both backends.
"""

from __future__ import annotations

from sqlalchemy import text

from orlbuild.store import create_store_engine
from tests.store_cli import cli, one_error_line
from tests.stores import disposed


def _from_the_future(url: str) -> None:
    with disposed(create_store_engine(url)) as engine, engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '0099_future'"))


def test_db_current_and_upgrade_say_a_newer_orlbuild_wrote_the_store(
    migrated_db_url: str,
) -> None:
    _from_the_future(migrated_db_url)
    code, out, err = cli(migrated_db_url, "db", "current")
    assert code == 0 and "0099_future" in out, err
    assert "written by a newer orlbuild" in out and "needs `orlbuild db upgrade`" not in out
    for args in (("db", "upgrade"), ("db", "downgrade", "0011_c_collation_names"), ("status",)):
        code, out, err = cli(migrated_db_url, *args)
        line = one_error_line(code, out, err, "'0099_future'", "newer version of orlbuild")
        assert "Can't locate" not in line and "upgrade orlbuild" in line
    with disposed(create_store_engine(migrated_db_url)) as engine, engine.connect() as c:
        assert c.scalar(text("SELECT version_num FROM alembic_version")) == "0099_future"
