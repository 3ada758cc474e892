"""The binary ``COPY`` blocks built by NumPy hold exactly the rows given (store/bulk.py)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from orlbuild.store.bulk import _binary_block


def _decode(block: bytes, fields: int) -> list[tuple[object, ...]]:
    """Rows of a binary ``COPY`` block of ``int4`` fields and one last text field."""
    rows, at = [], 0
    while at < len(block):
        (count,) = struct.unpack_from(">h", block, at)
        assert count == fields
        at += 2
        row: list[object] = []
        for _ in range(fields - 1):
            size, value = struct.unpack_from(">ii", block, at)
            assert size == 4
            row.append(value)
            at += 8
        (size,) = struct.unpack_from(">i", block, at)
        at += 4
        row.append(block[at : at + size].decode())
        at += size
        rows.append(tuple(row))
    return rows


@pytest.mark.parametrize(
    "names",
    [
        ["msmarco_passage_00_000000001", "msmarco_passage_01_000000002"],  # one length
        ["b", "", "ccc", "a", "dd", "", "eee", "f"],  # several lengths, empty names
        ["plain", "é", "naïve", "雪", "z"],  # non-ASCII: name by name
        ["a", 7, "bb", 12],  # non-str values are written as text
        ["a\x00b", "c"],  # a NUL is not fixed-width bytes' business
    ],
)
def test_text_block_holds_every_row_once_and_in_order_within_a_length(names: list) -> None:
    ids = np.arange(100, 100 + len(names), dtype=np.int64)
    collection = np.full(len(names), 3, dtype=np.int64)
    block = _binary_block(["int4", "int4", "text"], [ids, collection, np.asarray(names, object)])
    expected = [(100 + i, 3, str(name)) for i, name in enumerate(names)]
    rows = _decode(block, 3)
    assert sorted(rows) == sorted(expected)
    by_length: dict[int, list[tuple[object, ...]]] = {}
    for row in rows:
        by_length.setdefault(len(str(row[2]).encode()), []).append(row)
    for length, group in by_length.items():
        assert group == [r for r in expected if len(str(r[2]).encode()) == length]
