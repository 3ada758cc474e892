"""Whitespace-separated TREC files are read a decoded block at a time (``ingest/rows.py``).

A block whose lines all have the layout's width and no comment is taken whole;
any other block is read line by line. Whatever block a line falls in, the rows,
their line numbers, the comment count and the error for a bad line are the
same as reading line by line.
"""

from __future__ import annotations

import numpy as np
import pytest

from orlbuild.errors import InputError
from orlbuild.ingest.rows import CHUNK_ROWS, Column, RecordLayout, read_chunks
from orlbuild.ingest.source import BLOCK_BYTES
from orlbuild.vocabulary import InputFormat

RUN = RecordLayout(
    (Column("query"), Column("item"), Column("rank"), Column("score", False)),
    headerless=InputFormat.trec,
    headerless_columns=("query", "q0", "item", "rank", "score", "tag"),
)


def _lines(n: int) -> list[str]:
    return [f"q{i % 7} Q0 msmarco_passage_{i:09d} {i + 1} {1e6 - i:.6f} tag\n" for i in range(n)]


def _blocks(text: str, size: int) -> list[str]:
    """The text cut into pieces of ``size`` characters, as :meth:`Source.texts` cuts it."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def _read(text: str, notes: list[str] | None = None) -> tuple[np.ndarray, list[str]]:
    chunks = list(read_chunks(_blocks(text, BLOCK_BYTES), InputFormat.trec, RUN, "f", notes))
    assert all(len(c.lines) <= CHUNK_ROWS for c in chunks)
    lines = np.concatenate([c.lines for c in chunks])
    items = [item for c in chunks for item in c.columns["item"]]
    return lines, items


def test_many_blocks_give_every_line_in_order() -> None:
    lines = _lines(80_000)  # about 4.5 MB: five blocks, three chunks
    numbers, items = _read("".join(lines))
    assert numbers.tolist() == list(range(1, len(lines) + 1))
    assert items == [line.split()[2] for line in lines]


@pytest.mark.parametrize("where", [1, 40_000, 79_998])
def test_comments_and_blank_lines_in_any_block_keep_the_numbering(where: int) -> None:
    lines = _lines(80_000)
    lines[where - 1] = "# a comment\n"
    lines[where] = "\n"
    notes: list[str] = []
    numbers, _items = _read("".join(lines), notes)
    assert len(numbers) == len(lines) - 2
    assert where not in numbers.tolist() and where + 1 not in numbers.tolist()
    assert numbers[-1] == len(lines)
    assert notes == ["f: skipped 1 comment line(s) starting with '#'"]


@pytest.mark.parametrize("where", [1, 40_000, 80_000])
def test_a_bad_line_in_any_block_is_named(where: int) -> None:
    lines = _lines(80_000)
    lines[where - 1] = "q1 Q0 d1 1 2.5\n"
    with pytest.raises(InputError) as caught:
        _read("".join(lines))
    assert caught.value.line == where
    assert "needs 6 fields" in str(caught.value) and "found 5" in str(caught.value)
