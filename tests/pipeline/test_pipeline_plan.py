"""The pipeline's optional ``[plan]`` table: validation, the plan file and the report section."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from orlbuild.errors import ConfigError
from orlbuild.pipeline.config import load_config
from tests.pipeline.test_pipeline_config import MINIMAL, problems, workdir, write
from tests.pipeline.test_pipeline_end_to_end import copy_sample, invoke

__all__ = ["workdir"]  # the fixture, re-used


def test_plan_table_defaults(workdir: Path) -> None:
    config = load_config(write(workdir, MINIMAL + "\n[plan]\nbudget = 50\n"))
    assert config.plan is not None
    assert config.plan.settings.budget == 50 and config.plan.build == "main"
    assert config.plan.output == workdir / "plan.tsv" and config.plan.format == "tsv"
    assert config.plan.settings.objective == "tiers" and config.plan.settings.margin is None
    assert load_config(write(workdir, MINIMAL)).plan is None


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ("budget = -1", "plan.budget: --budget must be >= 0"),
        ("budget = 5\nmax_per_query = 0", "plan.max_per_query: --max-per-query must be >= 1"),
        ("budget = 5\nrepeat_limit = 0", "plan.repeat_limit: --repeat-limit must be >= 1"),
        ("budget = 5\nmargin = -0.5", "plan.margin: --margin must be a finite number > 0"),
        ("budget = 5\nobjective = 'best'", "plan.objective: must be one of tiers, top"),
        ("budget = 5\noutput = 'next.txt'", "plan.output: must end in .tsv, .csv, .jsonl, .json"),
        ("budget = 5\nbuild = 'other'", "plan.build: must be one of main"),
        ("output = 'p.tsv'", "plan.budget"),
        ("budget = 5\nbudgets = 3", "plan.budgets"),
    ],
)
def test_plan_problems_name_the_key(workdir: Path, table: str, expected: str) -> None:
    assert expected in problems(workdir, MINIMAL + "\n[plan]\n" + table + "\n")


def test_a_scored_build_that_is_not_pairwise_needs_a_named_build(workdir: Path) -> None:
    text = MINIMAL.replace(
        'kind = "pairwise"\npath = "pairs.tsv"', 'kind = "graded"\npath = "pairs.tsv"'
    )
    text = text.replace('source = "pairwise"', 'source = "graded"')
    with pytest.raises(ConfigError, match="is not pairwise"):
        load_config(write(workdir, text + "\n[plan]\nbudget = 5\n"))


def test_sample_pipeline_writes_the_plan_and_the_report_section(tmp_path: Path) -> None:
    config = copy_sample(tmp_path / "sample", power=False)
    config.write_text(
        config.read_text(encoding="utf-8") + '\n[plan]\nbudget = 60\noutput = "next.tsv"\n',
        encoding="utf-8",
    )
    code, _, err = invoke("pipeline", str(config))
    assert code == 0, err
    assert "planned 60 comparisons for sample-pairwise" in err
    plan = pd.read_csv(config.parent / "next.tsv", sep="\t", dtype=str, keep_default_na=False)
    assert list(plan.columns) == ["query", "item_a", "item_b", "winner"] and len(plan) == 60
    html = (config.parent / "report.html").read_text(encoding="utf-8")
    assert "What the next round would buy" in html and 'id="next-round-table"' in html
