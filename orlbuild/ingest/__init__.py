"""Ingestion of judgments (listwise, pairwise, graded) and system runs (docs/input-formats.md,
"Input formats").

The names below are loaded on first use (PEP 562), so that reading files
(``orlbuild eval``) does not import the store and SQLAlchemy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orlbuild.ingest.file_ingest import (
        IngestResult,
        ingest_file,
        ingest_graded_file,
        ingest_listwise_file,
        ingest_pairwise_file,
        ingest_run_file,
    )
    from orlbuild.ingest.kinds import DuplicatePolicy
    from orlbuild.ingest.reading import ParsedInput, read_input
    from orlbuild.ingest.source import InputFormat

_HOME = {
    "DuplicatePolicy": "kinds",
    "IngestResult": "file_ingest",
    "InputFormat": "source",
    "ParsedInput": "reading",
    "ingest_file": "file_ingest",
    "ingest_graded_file": "file_ingest",
    "ingest_listwise_file": "file_ingest",
    "ingest_pairwise_file": "file_ingest",
    "ingest_run_file": "file_ingest",
    "read_input": "reading",
}

__all__ = [
    "DuplicatePolicy",
    "IngestResult",
    "InputFormat",
    "ParsedInput",
    "ingest_file",
    "ingest_graded_file",
    "ingest_listwise_file",
    "ingest_pairwise_file",
    "ingest_run_file",
    "read_input",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"orlbuild.ingest.{_HOME[name]}"), name)
    globals()[name] = value
    return value
