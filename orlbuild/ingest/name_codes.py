"""Per-file vocabularies: names mapped to dense integer codes while a file is read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["Vocabularies", "Vocabulary"]


class Vocabulary:
    """Names of one kind seen in one file, coded without a Python loop per name.

    While the file is read, each chunk's distinct names are appended as they
    are and its rows get *provisional* codes (positions in the stream of
    appended names). Now and then - and in :meth:`finish` - the appended
    names are factorized together with the distinct names found so far
    (which keep their codes), so memory stays proportional to the number of
    distinct names. :meth:`finish` returns the provisional -> final code map.
    """

    #: Appended names that trigger a compaction (at least; or twice the distinct names).
    COMPACT_AT = 200_000

    def __init__(self) -> None:
        self._distinct = np.empty(0, dtype=object)
        self._pending: list[np.ndarray] = []
        self._pending_size = 0
        self._codes = np.empty(0, dtype=np.int64)  # provisional position -> code
        self._positions = 0
        self._alone_distinct = False  # the only names added were known to be distinct
        self.names: list[str] = []

    def add(self, names: np.ndarray, *, distinct: bool = False) -> int:
        """Append a chunk's names; returns the provisional code of the first.

        ``distinct``: the caller knows that no name repeats in ``names`` (the
        first names of a vocabulary then need no factorizing).
        """
        offset = self._positions
        self._alone_distinct = distinct and not self._pending and not len(self._distinct)
        self._pending.append(names)
        self._positions += len(names)
        self._pending_size += len(names)
        if self._pending_size >= max(self.COMPACT_AT, 2 * len(self._distinct)):
            self._compact()
        return offset

    def _compact(self) -> None:
        """Factorize the distinct names followed by the pending ones (distinct keep codes)."""
        if not self._pending:
            return
        known = len(self._distinct)
        if self._alone_distinct and len(self._pending) == 1:  # already distinct: keep their order
            uniques = self._pending[0]
            self._codes = np.arange(len(uniques), dtype=np.int64)
            self._distinct = np.asarray(uniques, dtype=object)
            self._pending, self._pending_size = [], 0
            return
        codes, uniques = pd.factorize(np.concatenate([self._distinct, *self._pending]))
        self._codes = np.concatenate([self._codes, codes[known:].astype(np.int64)])
        self._distinct = np.asarray(uniques, dtype=object)
        self._pending, self._pending_size = [], 0

    def finish(self) -> np.ndarray:
        """Assign final codes (first seen = 0); returns the provisional -> final code map."""
        self._compact()
        names = self._distinct.tolist()
        if pd.api.types.infer_dtype(self._distinct, skipna=False) != "string":
            names = [str(name) for name in names]  # str() only where some name is not text
        self.names = names
        return self._codes


@dataclass
class Vocabularies:
    """The per-file vocabularies of queries, items and annotators."""

    queries: Vocabulary = field(default_factory=Vocabulary)
    items: Vocabulary = field(default_factory=Vocabulary)
    annotators: Vocabulary = field(default_factory=Vocabulary)

    def finish(self, facts: dict[str, np.ndarray], name_columns: Mapping[str, str]) -> None:
        """Replace the provisional codes in ``facts`` by final ones.

        ``name_columns`` maps each fact column holding codes to the vocabulary it
        indexes (``queries``, ``items`` or ``annotators``): the batch layout of
        :data:`orlbuild.ingest.kinds.NAME_COLUMNS`, which the caller passes so
        that this module needs no store.
        """
        maps = {name: getattr(self, name).finish() for name in ("queries", "items", "annotators")}
        for column, vocabulary in name_columns.items():
            if column in facts:
                facts[column] = maps[vocabulary][facts[column]]

    def as_lists(self) -> dict[str, list[str]]:
        """Code -> name lists, keyed as :class:`orlbuild.store.batches.NewBatch` wants."""
        return {
            "queries": self.queries.names,
            "items": self.items.names,
            "annotators": self.annotators.names,
        }
