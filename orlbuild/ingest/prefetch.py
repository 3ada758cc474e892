"""Prefetched chunks: a background thread reads the next chunks while the caller writes.

An ingest reads and checks a chunk of rows (CPU work in this process), then
writes it (work of the database: SQLite's statements, which release the
GIL, or the PostgreSQL server, another process). Done one after the other,
each waits for the other; with :class:`Prefetched` the next chunk is parsed
in a thread while the current one is written, on a second core. Measured on
two shared cores it gained nothing (the threads share the GIL, and the
server wants a core too), so ingests use it only for the backends listed in
:data:`orlbuild.services.ingests.READ_AHEAD`, none by default
(docs/performance.md, "Reading in a thread").

The thread only iterates the chunks: it never touches the database. At most
``depth`` chunks wait in the queue (plus the one the thread is reading and
the one the caller is writing), so memory stays bounded by a few chunks. An
exception raised while reading (a bad line) is handed over in the queue's
order: the caller gets the same exception object after every chunk read
before it, where it would have met it without the thread. Leaving the
``with`` block (at the end, on an error, or on Ctrl-C in the caller) stops
the thread after the chunk it is reading, without waiting long for it
(:data:`CLOSE_WAIT`).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Generic, TypeVar

__all__ = ["CLOSE_WAIT", "POLL", "Prefetched"]

T = TypeVar("T")

#: Seconds :meth:`Prefetched.close` waits for the thread to finish the item it is
#: reading. A longer item (a whole run file is one chunk) or a silent standard input
#: is not waited for: Ctrl-C must stop the command at once. The thread then ends at
#: its next item, and being a daemon it never keeps the process alive.
CLOSE_WAIT = 1.0

#: Seconds between the thread's looks at the stop flag while the queue is full.
POLL = 0.05


class _End:
    """The queue's last entry: the chunks ran out."""


class _Failed:
    """The queue's last entry: reading raised ``error``."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class Prefetched(Generic[T]):
    """The items of ``items``, read up to ``depth`` ahead by a background thread.

    Iterate it inside ``with``: the thread starts at the first item asked
    for and is stopped when the block is left. Items come in their order;
    an exception raised by ``items`` is raised by the iteration once the
    items before it were taken.

    Parameters
    ----------
    items
        What to read ahead (iterated by the thread only, once).
    depth
        Items that may wait read but not yet taken (at least 1).
    name
        The thread's name (for debuggers and ``threading.enumerate``).

    Examples
    --------
    >>> with Prefetched(range(3)) as numbers:
    ...     list(numbers)
    [0, 1, 2]
    """

    def __init__(self, items: Iterable[T], *, depth: int = 1, name: str = "prefetch") -> None:
        if depth < 1:
            raise ValueError(f"depth must be at least 1, not {depth}")
        self._items = items
        self._queue: queue.Queue[T | _End | _Failed] = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name=name, daemon=True)
        self._started = False
        self._done = False  # the end or an error was taken: nothing more to give

    def __enter__(self) -> Prefetched[T]:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        if self._done or self._stop.is_set():
            raise StopIteration
        if not self._started:
            self._started = True
            self._thread.start()
        entry = self._queue.get()
        if isinstance(entry, _End):
            self._done = True
            raise StopIteration
        if isinstance(entry, _Failed):
            self._done = True
            raise entry.error
        return entry

    def close(self) -> None:
        """Stop the thread (after the item it is reading) and drop what it read ahead.

        Waits at most :data:`CLOSE_WAIT` seconds for the item being read.
        """
        self._stop.set()
        if not self._started:
            return
        self._thread.join(CLOSE_WAIT)
        while not self._queue.empty():  # let the items read ahead go
            self._queue.get_nowait()

    @property
    def alive(self) -> bool:
        """Whether the thread is still running (for tests)."""
        return self._thread.is_alive()

    def _read(self) -> None:
        """The thread: read every item into the queue, then the end or the error."""
        entry: T | _End | _Failed
        try:
            for item in self._items:
                if not self._put(item):
                    return
            entry = _End()
        except BaseException as exc:  # handed to the caller, who raises it
            entry = _Failed(exc)
        self._put(entry)

    def _put(self, entry: T | _End | _Failed) -> bool:
        """Queue ``entry`` once there is room; ``False`` when stopped meanwhile."""
        while not self._stop.is_set():
            try:
                self._queue.put(entry, timeout=POLL)
            except queue.Full:
                continue
            return True
        return False
