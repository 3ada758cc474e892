"""One person is stored under one name: ``$ORLBUILD_USER`` for ingest, builds, overrides, scores."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select
from store_cli import cli, cli_json

from orlbuild.store.models import Build, BuildOverride, Evaluation, IngestBatch
from orlbuild.store.users import USER_ENV_VAR, current_user
from tests.stores import store_engine

SAMPLE = Path(__file__).parents[2] / "sample_data"


def test_orlbuild_user_names_every_write(
    migrated_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = migrated_db_url
    monkeypatch.setenv(USER_ENV_VAR, "alice.reviewer")
    for args in (
        ("ingest", "pairwise", str(SAMPLE / "pairwise.tsv")),
        ("ingest", "run", str(SAMPLE / "runs" / "bm25.trec"), "--system", "bm25"),
    ):
        code, _, err = cli(url, *args)
        assert code == 0, err
    build = cli_json(
        url, "build", "--source", "pairwise", "--tiering", "model", "--name", "b", "--seed", "1"
    )["build"]  # model: q01 has two tiers to merge (no sample boundary is backed)
    code, _, err = cli(
        url, "audit", "override", "b", "--query", "q01", "--merge-tiers", "1", "--reason", "why"
    )
    assert code == 0, err
    code, _, err = cli(
        url, "score", "--build", str(build), "--system", "bm25", "-m", "AP@10", "--save"
    )
    assert code == 0, err
    with store_engine(url) as engine, engine.connect() as connection:
        names = {
            table.__tablename__: set(connection.scalars(select(table.created_by)))
            for table in (IngestBatch, Build, BuildOverride, Evaluation)
        }
    assert names == {
        "ingest_batches": {"alice.reviewer"},
        "builds": {"alice.reviewer"},
        "build_overrides": {"alice.reviewer"},
        "evaluations": {"alice.reviewer"},
    }


def test_current_user_falls_back_to_the_login_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(USER_ENV_VAR, "   ")
    monkeypatch.setenv("LOGNAME", "bob")
    assert current_user() == "bob"
    monkeypatch.setenv(USER_ENV_VAR, "x" * 600)
    assert current_user() == "x" * 512
