"""``margin`` in ``[builds.parameters]``: read and checked as ``orlbuild build --margin``."""

from __future__ import annotations

from pathlib import Path

import pytest

from orlbuild.pipeline.config import load_config
from tests.pipeline.test_pipeline_config import problems, workdir, write
from tests.pipeline_configs import MINIMAL

__all__ = ["workdir"]  # the fixture, re-used

WITH_PARAMETERS = MINIMAL.replace(
    'source = "pairwise"\n', 'source = "pairwise"\n[builds.parameters]\nmargin = {}\n', 1
)


def test_margin_is_a_stored_build_parameter(workdir: Path) -> None:
    config = load_config(write(workdir, WITH_PARAMETERS.format("0.5")))
    build = config.build("main")
    assert build.parameters["margin"] == 0.5
    assert build.builder_parameters().margin == 0.5
    assert load_config(write(workdir, MINIMAL)).build("main").builder_parameters().margin is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0", "must be a finite number > 0"),
        ("-0.5", "must be a finite number > 0"),
        ('"wide"', "number"),
    ],
)
def test_a_bad_margin_is_one_problem(workdir: Path, value: str, expected: str) -> None:
    message = problems(workdir, WITH_PARAMETERS.format(value))
    assert "builds[0].parameters.margin" in message and expected in message
