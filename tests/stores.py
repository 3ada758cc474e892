"""Engines held for the length of a ``with`` block, for tests that use a store directly."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from sqlalchemy import Engine

from orlbuild.store import open_store

#: A process that ingests one pairwise file through the library (faster to start than the
#: CLI): ``python -c INGEST_WORKER URL FILE GO [COLLECTION]``. It touches ``FILE.ready`` once
#: its store is open, then waits for the file ``GO`` to exist, so that several workers'
#: transactions overlap; it prints the ingest's message.
INGEST_WORKER = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from orlbuild.services.ingests import ingest_file\n"
    "from orlbuild.store import open_store\n"
    "engine = open_store(sys.argv[1])\n"
    "Path(sys.argv[2] + '.ready').touch()\n"
    "while not Path(sys.argv[3]).exists():\n"
    "    time.sleep(0.005)\n"
    "into = {'collection': sys.argv[4]} if len(sys.argv) > 4 else {}\n"
    "print(ingest_file(engine, 'pairwise', sys.argv[2], **into).message)\n"
)


@contextmanager
def disposed(engine: Engine) -> Iterator[Engine]:
    """``engine``, disposed when the block ends (however it ends)."""
    try:
        yield engine
    finally:
        engine.dispose()


def store_engine(url: str) -> AbstractContextManager[Engine]:
    """The store at ``url`` (:func:`orlbuild.store.open_store`), disposed when the block ends."""
    return disposed(open_store(url))
