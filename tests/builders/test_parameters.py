"""BuildParameters holds vocabulary members; its stored form is plain words (issue 22)."""

from __future__ import annotations

import json

import pytest

from orlbuild.builders.parameters import BuildParameters, resolve_parameters
from orlbuild.errors import ConfigError
from orlbuild.vocabulary import (
    Method,
    NotApplicable,
    Solver,
    Source,
    TieringProcedure,
    Uncertainty,
)


def test_plain_words_are_read_into_their_vocabularies() -> None:
    params = BuildParameters(source="listwise", method="plackett-luce", solver="mm")
    assert params.source is Source.listwise
    assert params.method is Method.plackett_luce
    assert params.solver is Solver.mm


def test_options_that_do_not_apply_resolve_to_not_applicable() -> None:
    resolved = resolve_parameters(BuildParameters(source=Source.graded))
    assert resolved.solver is NotApplicable.none
    assert resolved.tiering is NotApplicable.none
    assert resolved.uncertainty is Uncertainty.none  # a word users may choose themselves


def test_stored_form_is_plain_strings_and_reads_back_to_members() -> None:
    resolved = resolve_parameters(BuildParameters(source=Source.pairwise))
    stored = resolved.to_json()
    assert {type(value) for value in stored.values()} <= {str, int, float, bool, type(None)}
    assert [k for k, v in stored.items() if v is None] == ["margin"]  # no --margin: null
    # issue 32: posterior is bt's default tiering, with its fdr recorded
    assert stored["tiering"] == "posterior" and stored["method"] == "bt"
    assert stored["fdr"] == 0.05
    again = BuildParameters.from_json(json.loads(json.dumps(stored)))
    assert again == resolved
    assert again.tiering is TieringProcedure.posterior


def test_an_unknown_word_is_a_config_error_naming_the_option() -> None:
    with pytest.raises(ConfigError, match=r"--solver 'newton' is not valid; choose one of ilsr"):
        BuildParameters(source="pairwise", solver="newton")
    with pytest.raises(ConfigError, match=r"--disconnected 'none' is not valid"):
        BuildParameters(source="pairwise", disconnected="none")
