"""One owner per vocabulary: the command line, the TOML pipeline and the library agree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from orlbuild.builders import BuildParameters, build_orls
from orlbuild.cli.main import app, load_command
from orlbuild.errors import ConfigError
from orlbuild.vocabulary import OnError, Uncertainty
from scoring.vocabulary import MissingPolicy, ScorePrecisionName


def _choices(command: str, option: str) -> tuple[str, ...]:
    """The words a command's option accepts, as Click sees them."""
    param = next(p for p in load_command(command).params if p.name == option)
    choices = param.type_descriptor.choices or ()
    return tuple(str(c.value if hasattr(c, "value") else c) for c in choices)


@pytest.mark.parametrize("command", ["eval", "score", "compare", "power", "report"])
def test_every_missing_option_offers_the_scoring_words(command: str) -> None:
    """Regression: ``eval --missing`` was a free string checked by hand (``<str>`` in help)."""
    assert _choices(command, "missing") == tuple(m.value for m in MissingPolicy)
    assert _choices(command, "score_precision") == tuple(p.value for p in ScorePrecisionName)


def test_build_options_offer_the_builder_words() -> None:
    from orlbuild.builders.parameters import METHODS, UNCERTAINTY_BY_METHOD
    from orlbuild.vocabulary import Method

    assert _choices("build", "uncertainty") == tuple(u.value for u in Uncertainty)
    assert _choices("build", "on_error") == ("stop", "skip")
    assert _choices("build", "method") == tuple(m.value for m in Method)
    # every word the builder's tables use is a word of the vocabulary
    assert {m for methods in METHODS.values() for m in methods} == set(_choices("build", "method"))
    assert set(UNCERTAINTY_BY_METHOD) == {m.value for m in Method}
    assert {u for kinds in UNCERTAINTY_BY_METHOD.values() for u in kinds} == {
        u.value for u in Uncertainty
    }


def test_on_error_speaks_one_word_to_users() -> None:
    """Regression: the library said "--on-error must be 'raise' or 'skip'"."""
    params = BuildParameters(source="pairwise")
    with pytest.raises(ConfigError) as info:
        build_orls(pd.DataFrame(), params, on_error="halt")
    assert str(info.value) == "--on-error must be stop or skip, got 'halt'"
    assert "raise" not in str(info.value)


def test_on_error_has_one_word_per_choice() -> None:
    """``"raise"`` (the library's word before the vocabulary) is no longer accepted."""
    assert OnError("stop") is OnError.stop
    with pytest.raises(ValueError):
        OnError("raise")


@pytest.mark.parametrize("command", ["power", "report"])
def test_budgets_are_parsed_by_one_function(command: str, tmp_path: Path) -> None:
    """Regression: ``report --budgets`` exited 2 with its own rules, ``power`` exited 1."""
    db = f"sqlite:///{tmp_path / 'absent.db'}"
    args = ["--db", db, command, "--build", "b", "--system", "s", "-m", "nDCG@10"]
    result = CliRunner().invoke(app, [*args, "--budgets", "10,x"])
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "Error: --budgets: 'x' is not a positive whole number; write e.g. 25,50,100"
    )
    assert not (tmp_path / "absent.db").exists()  # refused before the store is opened


def test_budgets_parser() -> None:
    from orlbuild.cli.power_options import parse_budgets

    assert parse_budgets(None) is None
    assert parse_budgets("50, 25,50") == [25, 50]
    for bad in ("", "0", "-5", "2.5", "10,,20"):
        with pytest.raises(ConfigError, match="--budgets"):
            parse_budgets(bad)


def test_options_module_loads_no_numerics() -> None:
    probe = (
        "import sys, orlbuild.cli.options, orlbuild.cli.statistics_options, "
        "orlbuild.cli.power_options, orlbuild.cli.input_options; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'numpy', 'pandas', 'scipy', 'sqlalchemy', 'alembic', 'matplotlib'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_scoring_checks_every_word_it_takes() -> None:
    """A word outside the vocabulary is an error, never a silent default."""
    from scoring import ORL, evaluate_run
    from scoring.errors import ScoringError
    from scoring.run import check_score_precision, flat_run_from_frame

    run = pd.DataFrame({"query": ["q1", "q1"], "item": ["d1", "d1"], "score": [2.0, 1.0]})
    with pytest.raises(ScoringError, match="duplicates must be 'error' or 'keep-first'"):
        flat_run_from_frame(run, duplicates="keep-last")  # type: ignore[arg-type]
    kept = flat_run_from_frame(run, duplicates="keep-first")
    assert len(kept.items) == 1
    with pytest.raises(ScoringError, match="missing must be 'zero' or 'skip'"):
        evaluate_run({"q1": ORL({"d1": 1})}, {"q1": ["d1"]}, ["AP"], missing="drop").to_frame()  # type: ignore[arg-type]
    assert check_score_precision(ScorePrecisionName.float64) == "float64"
    assert (
        evaluate_run({"q1": ORL({"d1": 1})}, {"q1": ["d1"]}, ["AP"], missing=MissingPolicy.skip)
        .to_frame()
        .shape
    )
