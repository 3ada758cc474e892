"""Issue 23, point 8: a run's content under another system, and exports that must read back.

- The same run content ingested under another ``--system`` creates that system
  (its own batch); ingesting it again for either system is a no-op.
- qrels and trec-prefs exports (whitespace-separated) of ids containing spaces
  are refused with one line naming the id, instead of writing a file that
  cannot be read back; json always works.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.store_cli import cli, cli_json

RUN = "".join(f"q1 Q0 d{i} {i} {10 - i} tag\n" for i in range(1, 5))


def test_same_run_content_under_another_system_creates_it(
    migrated_db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "r.trec"
    path.write_text(RUN)
    code, out, err = cli(migrated_db_url, "ingest", "run", str(path), "--system", "a")
    assert code == 0 and "as batch 1" in out, err
    code, out, err = cli(migrated_db_url, "ingest", "run", str(path), "--system", "b")
    assert code == 0, err
    assert "stored 4 run rows" in out and "as batch 2" in out and "'b'" in out
    for system, batch in (("a", 1), ("b", 2)):
        code, out, _ = cli(migrated_db_url, "ingest", "run", str(path), "--system", system)
        assert code == 0 and f"already stored as batch {batch}" in out and "nothing to do" in out
    status = cli_json(migrated_db_url, "status")["collections"]["default"]
    assert status["runs"] == {"a": 4, "b": 4}
    # deleting one system's batch leaves the other's run alone
    assert cli(migrated_db_url, "batches", "delete", "2")[0] == 0
    status = cli_json(migrated_db_url, "status")["collections"]["default"]
    assert status["runs"] == {"a": 4}


@pytest.mark.parametrize("fmt", ["qrels", "trec-prefs"])
def test_exports_refuse_ids_their_format_cannot_hold(
    migrated_db_url: str, tmp_path: Path, fmt: str
) -> None:
    judgments = tmp_path / "l.tsv"
    judgments.write_text("query\titem\trank\nq 1\tdoc one\t1\nq 1\tdoc2\t2\n")
    assert cli(migrated_db_url, "ingest", "listwise", str(judgments))[0] == 0
    assert cli(migrated_db_url, "build", "--source", "listwise", "--name", "b")[0] == 0
    output = tmp_path / f"out.{fmt}"
    code, out, err = cli(migrated_db_url, "orl", "export", "b", "--format", fmt, "-o", str(output))
    assert code == 1 and out == "" and "Traceback" not in err
    assert err.count("\n") == 1 and "'q 1'" in err and "whitespace" in err and "json" in err
    assert not output.exists()
    code, out, _ = cli(migrated_db_url, "orl", "export", "b", "--format", "json")
    assert code == 0 and '"doc one": 1' in out
