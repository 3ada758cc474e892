"""Progress bars on standard error, quiet when it is not a terminal."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

#: Moves a progress bar forward by ``n`` steps.
Advance = Callable[[int], None]


@contextmanager
def progress_bar(total: int | None, description: str, *, quiet: bool = False) -> Iterator[Advance]:
    """Show a rich progress bar on standard error for ``total`` steps.

    The bar is disabled with ``quiet=True`` or when standard error is not a
    terminal, so JSON on standard output and logs stay clean.

    Yields
    ------
    Advance
        Call it with the number of steps just completed.
    """
    enabled = not quiet and sys.stderr.isatty()
    if not enabled:
        yield lambda n: None
        return
    console = Console(file=sys.stderr)
    columns = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task(description, total=total)

        def advance(n: int = 1) -> None:
            progress.advance(task, n)

        yield advance


class _AmountColumn(ProgressColumn):
    """Bytes with units (``1.2/5.0 MB``) for reading, ``n/total rows`` for writing."""

    def __init__(self) -> None:
        super().__init__()
        self._bytes = DownloadColumn()

    def render(self, task: Task) -> Text:
        """The amount done of ``task`` in its unit."""
        if task.fields.get("unit") == "rows":
            done, total = int(task.completed), int(task.total or 0)
            return Text(f"{done:,}/{total:,} rows", style="progress.download")
        return self._bytes.render(task)


class IngestProgress:
    """The two phases of an ingest: bytes read (with units), then rows written.

    ``read`` advances the first bar by bytes; the first call of ``write``
    opens a second bar, ``rows written`` out of ``total``, so the display
    does not sit at 100% while the store is busy.
    """

    def __init__(self, progress: Progress | None, total_bytes: int | None, label: str) -> None:
        self._progress = progress
        self._label = label
        self._write: TaskID | None = None
        self._read = None if progress is None else progress.add_task(label, total=total_bytes)

    def read(self, n: int = 1) -> None:
        """Count ``n`` more bytes read."""
        if self._progress is not None and self._read is not None:
            self._progress.advance(self._read, n)

    def write(self, n: int, total: int) -> None:
        """Count ``n`` more rows written out of ``total`` (rows read so far, when streamed)."""
        if self._progress is None:
            return
        if self._write is None:
            self._write = self._progress.add_task(
                f"{self._label}: writing", total=total, unit="rows"
            )
        self._progress.update(self._write, total=total, advance=n)  # streamed: total grows


@contextmanager
def ingest_progress(
    total_bytes: int | None, description: str, *, quiet: bool = False
) -> Iterator[IngestProgress]:
    """Progress of one ingest on standard error: bytes read (MB), then rows written.

    Disabled like :func:`progress_bar` (``quiet`` or standard error not a terminal).
    """
    if quiet or not sys.stderr.isatty():
        yield IngestProgress(None, total_bytes, description)
        return
    columns = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        _AmountColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(file=sys.stderr), transient=False) as progress:
        yield IngestProgress(progress, total_bytes, description)


class _RateColumn(ProgressColumn):
    """Answers per second and the tokens used so far (``orlbuild judge``)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed or 0.0
        tokens = int(task.fields.get("tokens", 0))
        return Text(f"{speed:,.1f} answers/s  {tokens:,} tokens", style="progress.data.speed")


@contextmanager
def answer_progress(
    description: str, *, quiet: bool = False
) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on standard error for answers arriving, with their rate and tokens.

    Disabled with ``quiet=True`` or when standard error is not a terminal.

    Yields
    ------
    Callable[[int, int], None]
        Call it with the answers and the tokens so far.
    """
    if quiet or not sys.stderr.isatty():
        yield lambda answers, tokens: None
        return
    columns = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,} answers"),
        TimeElapsedColumn(),
        _RateColumn(),
    )
    with Progress(*columns, console=Console(file=sys.stderr)) as progress:
        task = progress.add_task(description, total=None, tokens=0)

        def update(answers: int, tokens: int) -> None:
            progress.update(task, completed=answers, tokens=tokens)

        yield update
