"""orlbuild: ordered reference lists from annotator judgments, and RDQ scoring.

The :mod:`orlbuild` package holds the store, ingestion, ORL builders and the
command line; the pure scoring core lives in the sibling package :mod:`scoring`.
``__version__`` is read from the installed package metadata on first use
(importing :mod:`importlib.metadata` costs more than any command's start-up
should).
"""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    """``__version__``, looked up once (PEP 562)."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("orlbuild")
    except PackageNotFoundError:  # running from a source tree that was never installed
        value = "0.0.0+unknown"
    globals()["__version__"] = value
    return value
