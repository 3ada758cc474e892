"""The answer cache: one SQLite file, keyed by endpoint, model, prompt, pair and order.

docs/llm-judges.md, "Cache and resume". Lookups go to disk, so memory does not
grow with the number of answers; answers are committed every ``commit_every``
and on close, so Ctrl-C loses at most the requests in flight. The base URL and
model enter the key as a hash; no key, header or URL is stored.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from types import TracebackType

__all__ = ["AnswerCache", "CachedAnswer", "cache_key"]

#: One cached reply: the raw text, its verdict word and the tokens it used.
CachedAnswer = tuple[str, str, int]


def cache_key(
    base_url: str, model: str, prompt_hash: str, query: str, first: str, second: str
) -> str:
    """The key of one question: the item shown ``first`` and the one shown ``second``."""
    parts = (base_url.rstrip("/"), model, prompt_hash, query, first, second)
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


class AnswerCache:
    """Answers by key in a SQLite file (created when absent).

    Parameters
    ----------
    path
        The cache file.
    commit_every
        Answers between commits.
    """

    def __init__(self, path: Path, *, commit_every: int = 64) -> None:
        self.path = path
        self._db = sqlite3.connect(path)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS answers "
            "(key TEXT PRIMARY KEY, answer TEXT NOT NULL, verdict TEXT NOT NULL, tokens INTEGER)"
        )
        self._pending = 0
        self._commit_every = commit_every

    def get(self, key: str) -> CachedAnswer | None:
        """The cached answer of ``key``, or None."""
        row = self._db.execute(
            "SELECT answer, verdict, tokens FROM answers WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else (row[0], row[1], int(row[2] or 0))

    def put(self, key: str, answer: str, verdict: str, tokens: int) -> None:
        """Store one answer (committed with the next batch or on close)."""
        self._db.execute(
            "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?)", (key, answer, verdict, tokens)
        )
        self._pending += 1
        if self._pending >= self._commit_every:
            self.commit()

    def commit(self) -> None:
        """Make every stored answer durable."""
        self._db.commit()
        self._pending = 0

    def close(self) -> None:
        """Commit and close."""
        self.commit()
        self._db.close()

    def __enter__(self) -> AnswerCache:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
