"""`eval` and `score --run` report the columns of a file that they do not use (issue 12)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from orlbuild.cli.main import app

ORL_TABLE = "query\titem\trank\tcomment\nq1\td1\t1\tbest\nq1\td2\t2\tok\n"
RUN_TABLE = "query,item,rank,score,latency_ms\nq1,d2,1,2.0,13\nq1,d1,2,1.0,13\n"


def test_eval_reports_unused_columns_of_the_orl_and_the_run(tmp_path: Path) -> None:
    orl = tmp_path / "orl.tsv"
    orl.write_text(ORL_TABLE)
    run = tmp_path / "run.csv"
    run.write_text(RUN_TABLE)
    result = CliRunner().invoke(app, ["eval", str(orl), str(run), "-m", "P@2", "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    warnings = " ".join(document["warnings"])
    assert "'comment'" in warnings and "orl.tsv" in warnings
    assert "'latency_ms'" in warnings and "run.csv" in warnings
    assert document["mean"]["P@2"] == 1.0
