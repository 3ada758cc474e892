"""Unquoted TSV chunks are split in one call when nothing in them is unusual
(``ingest/rows.py``, ``_plain_columns``); any other chunk goes to the ``csv`` module.

Whichever reader takes a chunk, the columns, line numbers, notes and errors must be
those of the ``csv`` module alone.
"""

from __future__ import annotations

import pytest

import orlbuild.ingest.rows as rows_module
from orlbuild.errors import InputError
from orlbuild.ingest.kinds import KINDS
from orlbuild.vocabulary import InputFormat, InputKind

HEADER = "query\tannotator\twinner\tloser\ttie\n"
PLAIN = [
    "q1\ta\td1\td2\t0\n",
    " q2 \t a \t d 3 \td4\t1\n",  # spaces kept in the fields
    "NA\tnull\t#x\tNaN\t0\n",  # values pandas would take for missing, or for a comment
    "q3\t\td5\td6\t\n",  # empty fields
    "007\t1e3\t1.0\t-0\t00\n",  # numbers kept as written
    "q4\ta\t\u00e9t\u00e9\t\U0001f600\t0\n",
    "q\x0b6\ta\x0c\td\x1c9\td\x8510\tx\u2028y\n",  # line breaks to str.splitlines only
    "q5\ta\td7\td8\t1",  # no line end on the last line
]
ODD = [
    '"q"\ta\td1\td2\t0\n',  # a quote: kept in the value, and noted
    "q1\ta\td1\td2\t0\r\n",  # a carriage return
    "\n",  # a blank line
    "   \n",
    "\ufeffq1\ta\td1\td2\t0\n",  # a byte order mark inside the file
    "q1\ta\td1\td2\n",  # too few fields
    "q1\ta\td1\td2\t0\t9\n",  # too many
    "q1\ta\td1\td2\nq1\ta\td1\td2\t0\t9\n",  # too few and too many: the right total
    "q1\ta\td1\td2\t0\t9\nq1\ta\td1\td2\n",
]


def _read(text: str, *, fast: bool) -> tuple[list[tuple[list[int], dict[str, list[str]]]], list]:
    layouts = KINDS[InputKind.pairwise].layouts
    notes: list[str] = []
    if not fast:
        original = rows_module._plain_columns
        rows_module._plain_columns = lambda *_args: None  # type: ignore[assignment]
    try:
        chunks = [
            (c.lines.tolist(), {k: list(v) for k, v in c.columns.items()}, c.shape)
            for c in rows_module.read_chunks([text], InputFormat.tsv, layouts, "f", notes)
        ]
    finally:
        if not fast:
            rows_module._plain_columns = original  # type: ignore[assignment]
    return chunks, notes


@pytest.mark.parametrize("odd", [None, *ODD])
def test_the_plain_split_reads_what_the_csv_module_reads(
    odd: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rows_module, "CHUNK_ROWS", 4)  # the odd line in one chunk only
    lines = PLAIN[:-1] * 3 + ([odd] if odd else []) + PLAIN
    text = HEADER + "".join(lines)
    calls: list[bool] = []
    real = rows_module._plain_columns

    def spy(*args: object) -> object:
        result = real(*args)  # type: ignore[arg-type]
        calls.append(result is not None)
        return result

    monkeypatch.setattr(rows_module, "_plain_columns", spy)
    try:
        fast = _read(text, fast=True)
    except InputError as exc:
        monkeypatch.setattr(rows_module, "_plain_columns", real)
        with pytest.raises(InputError) as slow:
            _read(text, fast=False)
        assert str(exc) == str(slow.value)
        assert any(calls) and not all(calls)
        return
    monkeypatch.setattr(rows_module, "_plain_columns", real)
    assert fast == _read(text, fast=False)
    assert any(calls)
    assert all(calls) == (odd is None)


@pytest.mark.parametrize("last", ["q5\ta\td7\td8\t", "q5\ta\td7\td8\t\n", "\t\t\t\t"])
def test_an_empty_last_field_at_the_end_of_the_file(last: str) -> None:
    text = HEADER + "".join(PLAIN[:-1]) + last
    fast = _read(text, fast=True)
    assert fast == _read(text, fast=False)
    assert fast[0][0][1]["tie"][-1] == ""
