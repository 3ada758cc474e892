"""Vocabularies code names the same whether or not the caller knows them to be distinct."""

from __future__ import annotations

import numpy as np
import pytest

from orlbuild.ingest.name_codes import Vocabulary
from orlbuild.ingest.reading import read_input


def _coded(batches: list[list[str]], distinct: list[bool]) -> tuple[list[int], list[str]]:
    vocabulary = Vocabulary()
    provisional = []
    for names, known in zip(batches, distinct, strict=True):
        offset = vocabulary.add(np.asarray(names, dtype=object), distinct=known)
        provisional.extend(range(offset, offset + len(names)))
    codes = vocabulary.finish()
    return codes[np.asarray(provisional, dtype=np.int64)].tolist(), vocabulary.names


@pytest.mark.parametrize(
    "batches",
    [[["b", "a", "c"]], [["b", "a"], ["a", "c"]], [[], ["x", "y"]], [["x"], [], ["y", "x"]]],
)
def test_distinct_hint_changes_nothing(batches: list[list[str]]) -> None:
    plain = _coded(batches, [False] * len(batches))
    assert _coded(batches, [True] * len(batches)) == plain
    assert plain[1] == list(dict.fromkeys(n for names in batches for n in names))


def test_names_equal_once_stripped_are_one_name(tmp_path) -> None:
    data = tmp_path / "prefs.tsv"
    data.write_text("query\twinner\tloser\nq1\ta\tb\nq1 \t a\tc\nq2\tb \ta\n")
    frame = read_input("pairwise", data).decoded()
    assert frame["query"].tolist() == ["q1", "q1", "q2"]
    assert list(zip(frame["winner"], frame["loser"], strict=True)) == [
        ("a", "b"),
        ("a", "c"),
        ("b", "a"),
    ]
    assert sorted(set(frame["winner"]) | set(frame["loser"])) == ["a", "b", "c"]
