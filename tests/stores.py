"""A store opened for the length of a ``with`` block, for tests that read or write it directly."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine

from orlbuild.store import open_store


@contextmanager
def store_engine(url: str) -> Iterator[Engine]:
    """The store at ``url`` (:func:`orlbuild.store.open_store`), disposed when the block ends."""
    engine = open_store(url)
    try:
        yield engine
    finally:
        engine.dispose()
