"""``--source`` is checked by one function (issue 38, "One owner each"): the builder and the
build service refuse an unknown word with the same one line, listing the valid ones."""

from __future__ import annotations

import pandas as pd
import pytest

from orlbuild.builders.build import _check_frame
from orlbuild.builders.parameters import check_source
from orlbuild.errors import ConfigError
from orlbuild.vocabulary import Source

MESSAGE = "--source 'qrels' is not valid; choose one of graded, listwise, pairwise"


@pytest.mark.parametrize("word", [s.value for s in Source])
def test_every_source_word_passes(word: str) -> None:
    assert check_source(word) == word


def test_the_builder_and_the_check_say_the_same() -> None:
    with pytest.raises(ConfigError) as checked:
        check_source("qrels")
    with pytest.raises(ConfigError) as built:
        _check_frame(pd.DataFrame({"query": ["q1"]}), "qrels")
    assert str(checked.value) == str(built.value) == MESSAGE
