"""Query and item text: ingesting text files and looking the texts up for display.

``orlbuild ingest text`` (docs/input-formats.md, "Query and item text") reads
a file once (:class:`orlbuild.ingest.texts.TextReader`), keeping by default
only the names the collection already holds, and stores the kept texts
(:func:`orlbuild.store.texts.store_texts`). The look-ups give what ``orl
show``, ``audit``, ``plan --with-text`` and the report print beside a name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from orlbuild.ingest.texts import TextReader
from orlbuild.store.texts import NewTexts as _NewTexts
from orlbuild.store.texts import (
    collection_names,
    current_texts,
    store_texts,
)
from orlbuild.store.users import current_user
from orlbuild.vocabulary import DEFAULT_COLLECTION, TextFormat, TextOf

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy import Engine

    from orlbuild.records import QueryORL
    from orlbuild.report.data import ReportTexts
    from orlbuild.store.engine import Bind

__all__ = [
    "TEXT_WIDTH",
    "TextIngestResult",
    "add_text_column",
    "display_texts",
    "ingest_text",
    "report_texts",
    "shorten",
    "text_fields",
    "text_shape_words",
]

#: Characters of a text shown beside a name in ``orl show`` and ``audit``.
TEXT_WIDTH = 60


@dataclass(frozen=True)
class TextIngestResult:
    """The outcome of one ``orlbuild ingest text``.

    Attributes
    ----------
    file_name, of, format
        What was read, as what.
    lines, kept, skipped
        Physical lines read; records kept (of the collection's names, or
        all with ``--all``); records skipped (not named, or repeated).
    batch_id
        The text batch stored, or ``None`` when nothing was new (a no-op).
    added, replaced, unchanged
        Kept texts new to the collection, replacing a stored one, or stored already.
    filtered
        Whether only the collection's names were kept.
    """

    file_name: str
    of: TextOf
    format: TextFormat
    lines: int
    kept: int
    skipped: int
    batch_id: int | None
    added: int
    replaced: int
    unchanged: int
    filtered: bool
    notes: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        """One line: what was read, kept and stored."""
        what = "query texts" if self.of is TextOf.queries else "item texts"
        read = (
            f"{self.file_name} (read as {text_shape_words(self.format, self.of)}): "
            f"{self.lines:,} lines read, {self.kept:,} {what} kept, {self.skipped:,} skipped"
        )
        if self.batch_id is None:
            if self.kept == 0 and self.filtered:
                return (
                    f"{read}; nothing stored: the collection names none of these "
                    f"{self.of.value} (ingest judgments or runs first, or pass --all)"
                )
            return f"{read}; already stored ({self.unchanged:,} unchanged), nothing to do"
        stored = f"stored as text batch {self.batch_id}: {self.added:,} new"
        if self.replaced:
            stored += f", {self.replaced:,} replaced"
        if self.unchanged:
            stored += f", {self.unchanged:,} unchanged"
        return f"{read}; {stored}"


def text_shape_words(fmt: TextFormat, of: TextOf) -> str:
    """How a text file was read, for the message: ``tsv: id text``, ``trec-topics: num title
    desc narr`` (docs/input-formats.md, "Query and item text").

    Examples
    --------
    >>> text_shape_words(TextFormat.title_tsv, TextOf.items)
    'title-tsv: id title text'
    """
    fields = {
        TextFormat.tsv: "id text",
        TextFormat.title_tsv: "id text description" if of is TextOf.queries else "id title text",
        TextFormat.jsonl: "one object a line",
        TextFormat.trec_topics: "num title desc narr",
    }
    return f"{fmt.value}: {fields[fmt]}"


def ingest_text(
    engine: Engine,
    file: str,
    *,
    of: TextOf | str,
    collection: str = DEFAULT_COLLECTION,
    fmt: TextFormat | str | None = None,
    keep_all: bool = False,
    replace: bool = False,
    stream: BinaryIO | None = None,
) -> TextIngestResult:
    """Read a query or item text file and store its texts (docs/input-formats.md, "Query and
    item text").

    Parameters
    ----------
    engine
        The store.
    file
        The file (``-`` for standard input; gzip or bz2 are recognised).
    of
        ``queries`` or ``items``.
    collection
        The collection whose names are kept, and where the texts go.
    fmt
        The shape (``tsv``, ``title-tsv``, ``jsonl``, ``trec-topics``); sniffed when ``None``.
    keep_all
        Keep every record, not only the names the collection holds.
    replace
        Store a text that differs from the stored one (as a new batch) instead of refusing it.
    stream
        Read this binary stream instead of opening ``file`` (tests).

    Returns
    -------
    TextIngestResult

    Raises
    ------
    InputError
        Bad input, naming the file, line and value; nothing is stored.
    StoreError
        A different text for a stored name without ``replace``; nothing is stored.
    """
    of = TextOf(of)
    fmt = None if fmt is None else TextFormat(fmt)
    wanted = None if keep_all else collection_names(engine, collection, of.value)
    reader = TextReader(file, of, fmt, wanted, stream=stream)
    words = f"--of {of}" + (" --all" if keep_all else "") + (" --replace" if replace else "")

    def finished() -> tuple[str, str, int]:
        assert reader.format is not None
        return reader.sha256, reader.format.value, reader.counts.lines

    stored = store_texts(
        engine,
        _NewTexts(
            collection=collection,
            of=of.value,
            file_name=reader.label,
            created_by=current_user(),
            chunks=reader.chunks(),
            finished=finished,
            reading=words,
            replace=replace,
        ),
    )
    assert reader.format is not None
    return TextIngestResult(
        file_name=reader.label,
        of=of,
        format=reader.format,
        lines=reader.counts.lines,
        kept=reader.counts.kept,
        skipped=reader.counts.skipped,
        batch_id=stored.batch_id,
        added=stored.added,
        replaced=stored.replaced,
        unchanged=stored.unchanged,
        filtered=not keep_all,
        notes=() if reader.invisible_note is None else (reader.invisible_note,),
    )


def text_fields(
    engine: Bind, collection: str, of: TextOf | str, names: Iterable[str] | None = None
) -> dict[str, tuple[str | None, str | None, str | None]]:
    """Name -> stored fields: ``(text, description, narrative)`` of queries, ``(title, text,
    url)`` of items (the newest text of each name that has one)."""
    return current_texts(engine, collection, TextOf(of).value, names)


def display_texts(
    engine: Bind, collection: str, of: TextOf | str, names: Iterable[str] | None = None
) -> dict[str, str]:
    """Name -> the text to show beside it: a query's text; an item's title and text.

    An item with a title shows ``title: text``; names without a stored text are absent.
    """
    of = TextOf(of)
    shown: dict[str, str] = {}
    for name, fields in text_fields(engine, collection, of, names).items():
        if of is TextOf.queries:
            shown[name] = fields[0] or ""
        else:
            title, text = fields[0], fields[1] or ""
            shown[name] = f"{title}: {text}" if title else text
    return shown


def shorten(text: str, width: int = TEXT_WIDTH) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis.

    Examples
    --------
    >>> shorten("a  long\\ttext", 20)
    'a long text'
    >>> shorten("abcdefghij", 6)
    'abcde…'
    """
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def add_text_column(
    engine: Bind,
    collection: str,
    frame: pd.DataFrame,
    *,
    column: str = "item",
    of: TextOf | str = TextOf.items,
    into: str = "text",
    width: int | None = TEXT_WIDTH,
) -> pd.DataFrame:
    """``frame`` with the stored text of each name of ``column`` in a new column beside it.

    The texts are cut to ``width`` characters (:func:`shorten`; ``None``: whole, on one
    line); names without a text get an empty cell. When no name of the frame
    has a stored text, the frame is returned unchanged (no empty column).
    """
    if column not in frame.columns or not len(frame):
        return frame
    texts = display_texts(engine, collection, of, {str(n) for n in frame[column].unique()})
    if not texts:
        return frame
    cut = (lambda t: " ".join(t.split())) if width is None else (lambda t: shorten(t, width))
    shown = frame.copy()
    values = [cut(texts[str(n)]) if str(n) in texts else "" for n in shown[column]]
    shown.insert(shown.columns.get_loc(column) + 1, into, values)
    return shown


def report_texts(engine: Bind, collection: str, orls: Iterable[QueryORL]) -> ReportTexts | None:
    """The stored texts of the ORLs' queries and items, for the report's hovers.

    ``None`` when none of them has a stored text.
    """
    from orlbuild.report.data import ReportTexts  # the report's modules load only for reports

    orls = list(orls)
    queries = {o.query for o in orls}
    items = {item for o in orls for tier in o.tiers for item in tier}
    texts = ReportTexts(
        display_texts(engine, collection, TextOf.queries, queries),
        display_texts(engine, collection, TextOf.items, items),
    )
    return texts if texts.queries or texts.items else None
