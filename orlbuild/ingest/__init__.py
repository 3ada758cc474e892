"""Ingestion of judgments (listwise, pairwise, graded) and system runs (docs/input-formats.md,
"Input formats").

The readers never touch the store: :func:`orlbuild.services.ingests.ingest_file`
stores what they read. The names below are loaded on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orlbuild.ingest.reading import ParsedInput, read_input
    from scoring.vocabulary import DuplicatePolicy

_HOME = {
    "DuplicatePolicy": "kinds",
    "ParsedInput": "reading",
    "read_input": "reading",
}

__all__ = [
    "DuplicatePolicy",
    "ParsedInput",
    "read_input",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"orlbuild.ingest.{_HOME[name]}"), name)
    globals()[name] = value
    return value
