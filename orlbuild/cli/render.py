"""One renderer for every command's output: ``table``, ``csv`` or ``json``.

JSON goes to standard output as a single document and nothing else; tables
are drawn with rich (fitted to a terminal, at full width when piped, so names
are never cut); CSV is written by pandas. NaN becomes ``null`` in JSON.

A table is a DataFrame, or :class:`Columns` (plain lists): a command whose
table is small and whose work needs no pandas (``orlbuild eval``) then never
imports pandas (docs/performance.md, "Speed of `orlbuild eval`"), which is
loaded only to write such a table as CSV.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from orlbuild.cli.options import CollectionFilterOption, FormatOption
from orlbuild.cli.state import opened_store
from orlbuild.vocabulary import OutputFormat

if TYPE_CHECKING:
    import pandas as pd

    from orlbuild.services.databases import Engine

__all__ = [
    "Columns",
    "collection_listing",
    "emit",
    "jsonable",
    "print_json",
    "print_table",
    "report_plan",
    "say",
]

#: Width a table may take when standard output is not a terminal (no truncation in practice).
PIPED_WIDTH = 100_000


@dataclass(frozen=True)
class Columns:
    """A small table without pandas: column name -> its values, drawn as that DataFrame would be.

    ``numeric`` names the columns aligned right (numbers), as
    :func:`print_table` aligns a DataFrame's numeric columns.
    """

    columns: dict[str, list[Any]]
    numeric: frozenset[str] = frozenset()

    def to_frame(self) -> pd.DataFrame:
        """The same table as a DataFrame (loads pandas)."""
        import pandas as pd

        return pd.DataFrame(self.columns)


def jsonable(value: Any) -> Any:
    """Convert numpy scalars, NaN/inf and nested containers into plain JSON values."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


#: Records beyond which a JSON document is written one record per line (C encoder).
BIG_DOCUMENT = 10_000


def print_json(payload: Any) -> None:
    """Write ``payload`` as one JSON document on standard output.

    Indented by two spaces; a document of more than :data:`BIG_DOCUMENT` records (e.g.
    ``quality --format json`` of 200,000 annotators) keeps its top-level members and
    array elements on lines of their own but writes each element on one line: Python's
    indenting encoder is pure Python and took most of that command's time (issue 39;
    docs/performance.md, "Large outputs").
    """
    data = jsonable(payload)
    if _records(data) <= BIG_DOCUMENT:
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        return
    sys.stdout.write(_record_lines(data) + "\n")


def _records(data: Any) -> int:
    """Elements of the arrays at the top level or in its members."""
    if isinstance(data, list):
        return len(data)
    if isinstance(data, dict):
        return sum(len(v) for v in data.values() if isinstance(v, (list, dict)))
    return 0


def _record_lines(data: Any, indent: str = "") -> str:
    """``data`` with its members (and their elements) one per line, each written compactly."""
    inner = indent + "  "

    def one(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    if isinstance(data, list) and data:
        return "[\n" + ",\n".join(inner + one(v) for v in data) + f"\n{indent}]"
    if isinstance(data, dict) and data:
        members = [f"{inner}{one(k)}: {_record_lines(v, inner)}" for k, v in data.items()]
        return "{\n" + ",\n".join(members) + f"\n{indent}}}"
    return one(data)


def print_table(
    frame: pd.DataFrame | Columns, *, title: str | None = None, digits: int = 4
) -> None:
    """Draw ``frame`` as a rich table on standard output (index shown if named).

    Every text is escaped: a measure pattern ``nDCG[@k]`` or an item ``[draft]`` is data, not
    rich markup.
    """
    console = Console(file=sys.stdout, soft_wrap=True)
    if not console.is_terminal:
        # Piped or redirected: no screen to fit, so every table is drawn at its natural
        # width; fitting 80 columns cut names to "sample-pairw…".
        console.width = PIPED_WIDTH
    table = Table(title=None if title is None else escape(title), show_lines=False)
    if isinstance(frame, Columns):
        for column in frame.columns:
            numeric = column in frame.numeric
            table.add_column(escape(str(column)), justify="right" if numeric else "left")
        rows: Any = zip(*frame.columns.values(), strict=True)
    else:
        import pandas as pd  # loaded already: ``frame`` is a DataFrame

        shown = frame.reset_index() if frame.index.name is not None else frame
        for column in shown.columns:
            numeric = pd.api.types.is_numeric_dtype(shown[column])
            table.add_column(escape(str(column)), justify="right" if numeric else "left")
        rows = shown.itertuples(index=False)
    for row in rows:
        table.add_row(*(_cell(v, digits) for v in row))
    console.print(table)


def _cell(value: Any, digits: int) -> str:
    """Format one table cell."""
    if isinstance(value, (float, np.floating)):
        return "NaN" if math.isnan(value) else f"{value:.{digits}f}"
    return escape(str(value))


def emit(
    fmt: OutputFormat,
    *,
    frame: pd.DataFrame | Columns,
    payload: Any = None,
    title: str | None = None,
    raw_cells: bool = False,
    note: str | None = None,
) -> None:
    """Render a command's result.

    Parameters
    ----------
    fmt
        The requested output format.
    frame
        Tabular view of the result, used for ``table`` and ``csv`` (:class:`Columns`: the
        same output as its :meth:`Columns.to_frame`).
    payload
        The JSON document for ``json``; defaults to the frame's records.
    title
        Optional title above a table.
    raw_cells
        Write CSV cells as they are; by default a text cell a spreadsheet would run
        as a formula gets a leading ``'`` (:mod:`orlbuild.orl_io.cells`).
    note
        What the column names leave implicit (the grades and gain of each nDCG,
        docs/measures.md, "Baselines"): under the title of a table; on standard error
        beside CSV, which holds only the data; JSON carries it in its payload.
    """
    if fmt is OutputFormat.table:
        print_table(frame, title=title if not note else f"{title}\n{note}" if title else note)
        return
    if fmt is OutputFormat.csv and note:
        typer.echo(f"Note: {note}", err=True)
    if fmt is OutputFormat.json and payload is not None:
        print_json(payload)
        return
    table = frame.to_frame() if isinstance(frame, Columns) else frame
    if fmt is OutputFormat.json:
        print_json(table.to_dict(orient="records"))
    else:
        from orlbuild.orl_io.cells import safe_frame

        shown = table.reset_index() if table.index.name is not None else table
        shown = shown if raw_cells else safe_frame(shown)
        shown.to_csv(sys.stdout, index=False, float_format="%.6g")


def collection_listing(
    read: Callable[[Engine, str | None], pd.DataFrame | tuple[Any, pd.DataFrame]],
    *,
    title: str,
    doc: str,
) -> Callable[..., None]:
    """A command that prints what the store holds for one collection (all when omitted).

    Parameters
    ----------
    read
        The service call: the store and the collection to the table, or to the JSON
        document and the table.
    title
        The title above the table.
    doc
        The command's help.
    """

    def command(
        ctx: typer.Context,
        collection: CollectionFilterOption = None,
        fmt: FormatOption = OutputFormat.table,
    ) -> None:
        with opened_store(ctx) as engine:
            result = read(engine, collection)
        payload, frame = result if isinstance(result, tuple) else (None, result)
        emit(fmt, frame=frame, payload=payload, title=title)

    command.__doc__ = doc
    return command


def report_plan(notes: list[str], warnings: list[str]) -> None:
    """Say on standard error what the test plan changed, and what it could not fix."""
    for note in notes:
        typer.echo(f"Note: {note}", err=True)
    for warning in warnings:
        typer.echo(f"Warning: {warning}", err=True)


def say(line: str | None) -> None:
    """Print a one-line notice on standard error (nothing for ``None``)."""
    if line:
        typer.echo(line, err=True)
