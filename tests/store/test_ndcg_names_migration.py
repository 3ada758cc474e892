"""Migration 0016_ndcg_full_names: saved nDCG scores keep the meaning they were saved with.

Before issue 36 a bare ``nDCG@k`` meant ``nDCG(grade=bi,gain=exp)@k``; scores are now saved
under their full spelled-out names, and the migration rewrites the old short ones.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from evaluation_store import evaluation_store
from sqlalchemy import create_engine, select

from orlbuild.store import downgrade, upgrade
from orlbuild.store.models import Evaluation, EvaluationValue

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location(
    "ndcg_full_names", ROOT / "migrations" / "versions" / "0016_ndcg_full_names.py"
)
assert SPEC is not None and SPEC.loader is not None
MIGRATION = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(MIGRATION)


@pytest.mark.parametrize(
    ("old", "full"),
    [
        ("nDCG@10", "nDCG(grade=bi,gain=exp)@10"),
        ("nDCG", "nDCG(grade=bi,gain=exp)"),
        ("nDCG(grade=lc)@5", "nDCG(grade=lc,gain=exp)@5"),
        ("nDCG(gain=linear)@5", "nDCG(grade=bi,gain=linear)@5"),
        ("nDCG(grade=native,gain=linear)@5", "nDCG(grade=native,gain=linear)@5"),
        ("RDQm2-a1@10", "RDQm2-a1@10"),
        ("AP@10", "AP@10"),
    ],
)
def test_old_names_get_their_old_full_meaning(old: str, full: str) -> None:
    assert MIGRATION.full_name(old) == full
    assert MIGRATION.full_name(full) == full  # idempotent
    assert MIGRATION.full_name(MIGRATION.old_name(full)) == full


def _names(url: str) -> tuple[list[list[str]], list[list[str]], set[str]]:
    engine = create_engine(url)  # at any revision: no schema check
    try:
        with engine.connect() as connection:
            rows = connection.execute(select(Evaluation.measures, Evaluation.means)).all()
            values = connection.execute(select(EvaluationValue.measure).distinct()).scalars()
            values = list(values)
    finally:
        engine.dispose()
    return [list(r[0]) for r in rows], [sorted(r[1]) for r in rows], set(values)


def test_saved_scores_are_stored_under_full_names_and_migrate(
    migrated_db_url: str, tmp_path: Path
) -> None:
    from store_cli import cli

    store = evaluation_store(migrated_db_url, tmp_path)
    code, _, err = cli(
        store, "score", "-b", "graded", "-s", "ideal", "-m", "nDCG@5",
        "-m", "nDCG(grade=bi,gain=exp)@5", "-m", "AP@5", "--save",
    )  # fmt: skip
    assert code == 0, err
    saved = ["nDCG(grade=native,gain=linear)@5", "nDCG(grade=bi,gain=exp)@5", "AP@5"]
    assert _names(store) == ([saved], [sorted(saved)], set(saved))
    # Before 0016 the bi/exp score was saved as "nDCG@5": the downgrade writes that back ...
    downgrade(store, "0015_posterior_evidence")
    before = ["nDCG(grade=native,gain=linear)@5", "nDCG@5", "AP@5"]
    assert _names(store) == ([before], [sorted(before)], set(before))
    # ... and the upgrade gives it its old meaning in full.
    upgrade(store)
    assert _names(store) == ([saved], [sorted(saved)], set(saved))
