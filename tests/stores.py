"""Engines held for the length of a ``with`` block, for tests that use a store directly."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from sqlalchemy import Engine

from orlbuild.store import open_store


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
