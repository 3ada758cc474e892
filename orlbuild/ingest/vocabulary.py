"""Per-file vocabularies: names mapped to dense integer codes while a file is read."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Vocabularies", "Vocabulary"]


class Vocabulary:
    """Names seen in one file, each with a dense integer code (first seen = 0)."""

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}
        self.names: list[str] = []

    def codes_for(self, names: Iterable[str]) -> np.ndarray:
        """Codes of ``names``; names not seen before get new codes."""
        codes = self._codes
        out = []
        for name in names:
            code = codes.get(name)
            if code is None:
                code = codes[name] = len(self.names)
                self.names.append(name)
            out.append(code)
        return np.asarray(out, dtype=np.int64)


@dataclass
class Vocabularies:
    """The per-file vocabularies of queries, items and annotators."""

    queries: Vocabulary = field(default_factory=Vocabulary)
    items: Vocabulary = field(default_factory=Vocabulary)
    annotators: Vocabulary = field(default_factory=Vocabulary)

    def as_lists(self) -> dict[str, list[str]]:
        """Code -> name lists, keyed as :class:`orlbuild.store.batches.NewBatch` wants."""
        return {
            "queries": self.queries.names,
            "items": self.items.names,
            "annotators": self.annotators.names,
        }
