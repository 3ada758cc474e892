"""``orlbuild eval --compare``: every system gets its simultaneous rank interval."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from orlbuild.cli.main import app

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def test_eval_compare_reports_rank_intervals() -> None:
    runs = [str(SAMPLE / "runs" / f"{name}.trec") for name in ("bm25", "dense", "hybrid", "tfidf")]
    args = ["eval", str(SAMPLE / "orl.qrels"), *runs, "-m", "RDQm2-a1@10", "-m", "R@10"]
    result = CliRunner().invoke(app, [*args, "--compare", "--format", "json"])
    assert result.exit_code == 0, result.output
    systems = json.loads(result.stdout)["systems"]
    for name, entry in systems.items():
        for measure in ("RDQm2-a1@10", "R@10"):
            lo, hi = entry["rank_lo"][measure], entry["rank_hi"][measure]
            assert 1 <= lo <= hi <= 4, (name, measure)
    # tfidf is built to be worst: last for sure on RDQ
    assert (
        systems["tfidf"]["rank_lo"]["RDQm2-a1@10"],
        systems["tfidf"]["rank_hi"]["RDQm2-a1@10"],
    ) == (4, 4)
    table = CliRunner().invoke(app, [*args, "--compare"])
    assert "Rank intervals" in table.stdout and "4-4" in table.stdout
