"""Per-file vocabularies: names mapped to dense integer codes while a file is read."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from orlbuild.store.batches import NAME_COLUMNS

__all__ = ["Vocabularies", "Vocabulary"]


class Vocabulary:
    """Names of one kind seen in one file, coded without a Python loop per name.

    While the file is read, each chunk's distinct names are appended as they
    are and its rows get *provisional* codes (positions in that growing
    list); :meth:`finish` factorizes the whole list once, giving every
    distinct name a dense final code (first seen = 0) and a map from
    provisional to final codes.
    """

    def __init__(self) -> None:
        self._parts: list[np.ndarray] = []
        self._size = 0
        self.names: list[str] = []

    def add(self, names: np.ndarray) -> int:
        """Append a chunk's distinct names; returns the provisional code of the first."""
        offset = self._size
        self._parts.append(names)
        self._size += len(names)
        return offset

    def finish(self) -> np.ndarray:
        """Assign final codes; returns the provisional -> final code map."""
        if not self._parts:
            return np.zeros(0, dtype=np.int64)
        final, uniques = pd.factorize(np.concatenate(self._parts))
        self.names = [str(name) for name in uniques]
        self._parts = [np.asarray(self.names, dtype=object)]
        self._size = len(self.names)
        return final.astype(np.int64, copy=False)


@dataclass
class Vocabularies:
    """The per-file vocabularies of queries, items and annotators."""

    queries: Vocabulary = field(default_factory=Vocabulary)
    items: Vocabulary = field(default_factory=Vocabulary)
    annotators: Vocabulary = field(default_factory=Vocabulary)

    def finish(self, facts: dict[str, np.ndarray]) -> None:
        """Replace the provisional codes in ``facts`` by final ones (see :data:`NAME_COLUMNS`)."""
        maps = {name: getattr(self, name).finish() for name in ("queries", "items", "annotators")}
        for column, vocabulary in NAME_COLUMNS.items():
            if column in facts:
                facts[column] = maps[vocabulary][facts[column]]

    def as_lists(self) -> dict[str, list[str]]:
        """Code -> name lists, keyed as :class:`orlbuild.store.batches.NewBatch` wants."""
        return {
            "queries": self.queries.names,
            "items": self.items.names,
            "annotators": self.annotators.names,
        }
