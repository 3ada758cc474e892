"""Progress bars on standard error, quiet when it is not a terminal."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class Advance(Protocol):
    """Callable that moves a progress bar forward by ``n`` steps."""

    def __call__(self, n: int = 1) -> None: ...


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
        yield lambda n=1: None
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
