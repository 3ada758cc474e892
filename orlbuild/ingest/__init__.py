"""Ingestion of judgments (listwise, pairwise, graded) and system runs (docs/input-formats.md,
"Input formats").

The readers never touch the store: :func:`orlbuild.services.ingests.ingest_file`
stores what they read. The names below are loaded on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scoring.lazy_names import lazy_getattr

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


__getattr__ = lazy_getattr(__name__, _HOME)
