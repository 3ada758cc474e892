"""``paused_gc``: the cyclic garbage collector off while bulk rows are built.

A leaf module (standard library only) shared by the readers of
:mod:`orlbuild.ingest` and the bulk reads and writes of :mod:`orlbuild.store`.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Suspend the cyclic garbage collector while millions of short-lived rows are built.

    Bulk parsing and fetching create no reference cycles, but every list and
    tuple they allocate counts towards the collector's thresholds; collections
    triggered that way cost more than the work itself.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
