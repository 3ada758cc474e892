"""A run's tag: the system name a TREC run carries in its sixth column (docs/input-formats.md,
"System names of runs").

``orlbuild ingest run --system-from tag`` names each run's system after its
tag. A file whose lines carry two different tags holds two systems' runs (or
a run pasted together by mistake): it is refused, naming the file, the line
and both tags, rather than stored under one of them. Tabular runs (TSV, CSV,
JSON Lines, JSON) may carry the tag in a ``tag`` column. Only the tag is read
here; the rest of the file is checked by :func:`orlbuild.ingest.reading.read_input`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from orlbuild.errors import InputError
from orlbuild.ingest.reading import input_format
from orlbuild.ingest.rows import Column, RecordLayout, read_chunks
from orlbuild.ingest.source import Source, split_lines
from orlbuild.vocabulary import InputFormat, InputKind

__all__ = ["run_tag"]

#: The run columns with the tag kept (headerless TREC: its sixth field).
_TAGGED_RUN = RecordLayout(
    (
        Column("query"),
        Column("item"),
        Column("rank"),
        Column("score", False),
        Column("tag", False),
    ),
    headerless=InputFormat.trec,
    headerless_columns=("query", "q0", "item", "rank", "score", "tag"),
)

#: Fields of a TREC run line (``query Q0 item rank score tag``).
_TREC_FIELDS = 6


def run_tag(
    path: str | Path,
    *,
    fmt: InputFormat | None = None,
    columns: Mapping[str, str] | None = None,
) -> str:
    """The one tag every line of the run ``path`` carries.

    Parameters
    ----------
    path
        A run file (plain or gzip/bz2-compressed); not standard input, which
        cannot be read twice.
    fmt
        ``--format``, as for :func:`orlbuild.ingest.reading.read_input`.
    columns
        ``--columns``: the file's column names mapped onto ours, so that a tabular run's
        ``model`` column can be read as its ``tag`` (``--columns model=tag``).

    Returns
    -------
    str
        The tag, stripped.

    Raises
    ------
    InputError
        Two different tags (naming the file, the line of the second and both
        tags), or no tag at all (a tabular run without a ``tag`` column).
    """
    chosen = input_format(InputKind.run, path, fmt)
    label = Source(str(path)).label
    if chosen is InputFormat.trec:
        tags = _trec_tags(path, label)
    else:
        tags = _column_tags(path, chosen, label, columns)
    first: tuple[int, str] | None = None
    for line, tag in tags:
        if first is None:
            first = (line, tag)
        elif tag != first[1]:
            raise InputError(
                f"two run tags in one file: {first[1]!r} (line {first[0]}) and {tag!r}",
                file=label,
                line=line,
                hint="one file holds one system's run: split it by tag, or name the system "
                "with --system NAME or --system-from stem",
            )
    if first is None:
        raise InputError(
            "the run has no tag column",
            file=label,
            hint="name the system with --system NAME or --system-from stem",
        )
    return first[1]


def _trec_tags(path: str | Path, label: str) -> list[tuple[int, str]]:
    """(line, tag) where the tag changes, over the six-field lines of a TREC run.

    Lines of another width are left to the reader, whose error names them. A
    line ending in the current tag needs no full split (the common case).
    """
    changes: list[tuple[int, str]] = []
    current = None
    for number, text in enumerate(split_lines(Source(str(path)).texts(), label), start=1):
        last = text.rsplit(None, 1)
        if len(last) == 2 and last[1] == current:
            continue
        fields = text.split()
        if len(fields) != _TREC_FIELDS or fields[0].startswith("#") or fields[5] == current:
            continue
        current = fields[5]
        changes.append((number, current))
    return changes


def _column_tags(
    path: str | Path, fmt: InputFormat, label: str, columns: Mapping[str, str] | None = None
) -> list[tuple[int, str]]:
    """(line, tag) where the ``tag`` column's value changes, in a tabular run."""
    changes: list[tuple[int, str]] = []
    current = None
    source = Source(str(path))
    for chunk in read_chunks(source.texts(), fmt, _TAGGED_RUN, label, [], columns):
        values = chunk.columns.get("tag")
        if values is None:
            return []
        for number, value in zip(chunk.lines.tolist(), values, strict=True):
            tag = value.strip()
            if tag != current:
                current = tag
                changes.append((int(number), tag))
    return changes
