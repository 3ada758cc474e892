"""``rel_level = N`` in the pipeline TOML is the CLI's ``--rel-level N`` (trec_eval's ``-l N``):
``rel=N`` on every binary measure that sets no level of its own (docs/pipeline.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orlbuild.errors import ConfigError
from orlbuild.pipeline.config import load_config
from orlbuild.pipeline.specs import PipelineConfig
from tests.pipeline_configs import pipeline_toml


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    for name in ("pairs.tsv", "a.trec"):
        (tmp_path / name).write_text("x\n", encoding="utf-8")
    return tmp_path


def _config_text(level: str, power: str = "") -> str:
    text = pipeline_toml(measure="AP@10")
    text = text.replace(
        'measures = ["AP@10"]',
        f'measures = ["AP@10", "nDCG@10", "RR", "P(rel=3)@5"]\nrel_level = {level}',
    )
    return text + power


def _load(workdir: Path, text: str) -> PipelineConfig:
    path = workdir / "pipeline.toml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def test_rel_level_rewrites_the_binary_measures_only(workdir: Path) -> None:
    config = _load(workdir, _config_text("2"))
    assert config.measures == ("AP(rel=2)@10", "nDCG@10", "RR(rel=2)", "P(rel=3)@5")


def test_without_rel_level_the_names_are_kept(workdir: Path) -> None:
    config = _load(workdir, pipeline_toml(measure="AP@10"))
    assert config.measures == ("AP@10",)


def test_power_measures_are_read_at_the_same_level(workdir: Path) -> None:
    power = '\n[power]\nbudgets = [5, 10]\nmeasures = ["AP@10", "nDCG@10"]\n'
    config = _load(workdir, _config_text("2", power))
    assert config.power is not None
    assert config.power.measures == ("AP(rel=2)@10", "nDCG@10")


@pytest.mark.parametrize(
    ("level", "message"),
    [
        ("0", "rel_level: must be a number > 0, e.g. 2 (trec_eval -l 2) (got 0)"),
        ("-1", "rel_level: must be a number > 0, e.g. 2 (trec_eval -l 2) (got -1)"),
        ("true", "rel_level: must be an integer or a number (got True)"),
        ('"2"', "rel_level: must be an integer or a number (got '2')"),
    ],
)
def test_a_bad_level_is_refused_naming_the_key(workdir: Path, level: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(workdir, _config_text(level))
    assert message in str(info.value)
