"""How a database is named and changed: plain paths, missing drivers, guarded downgrades."""

from __future__ import annotations

from pathlib import Path

import pytest

from orlbuild.store import current_revision, downgrade
from orlbuild.store.engine import create_store_engine, normalize_url
from tests.ingest.conftest import run_cli, store_counts
from tests.stores import disposed

PAIRS = "query,winner,loser\nq1,d1,d2\n"


def test_plain_path_is_an_sqlite_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: ``--db sample_data/orlbuild.db`` was rejected as an invalid URL."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    assert normalize_url("data/x.db") == "sqlite:///data/x.db"
    assert run_cli("data/x.db", "db", "upgrade").exit_code == 0
    (tmp_path / "p.csv").write_text(PAIRS)
    assert run_cli("data/x.db", "ingest", "pairwise", "p.csv").exit_code == 0
    assert (tmp_path / "data" / "x.db").is_file()
    assert not (tmp_path / "orlbuild.db").exists()
    assert (
        store_counts(f"sqlite:///{tmp_path / 'data' / 'x.db'}")["collections"]["default"][
            "pairwise"
        ]
        == 1
    )


def test_downgrade_of_empty_tables_needs_no_confirmation(migrated_db_url: str) -> None:
    downgrade(migrated_db_url, "base")
    with disposed(create_store_engine(migrated_db_url)) as engine:
        assert current_revision(engine) is None
