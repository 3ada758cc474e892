"""A run whose rank column contradicts its scores (docs/conventions.md, "Conventions and caveats").

trec_eval orders a run by score and ignores its rank column, and so does
orlbuild. A run whose ranks order the documents opposite to its scores - rank
1 on the lowest score, as negated scores give - is still scored by its scores,
which is rarely what its author meant: the readers say so, once per file
(``orlbuild ingest run`` from the whole file, ``orlbuild eval`` and
``score --run`` from the whole file or, on their C-speed path, from the
file's first lines).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from orlbuild.ingest.source import open_input

__all__ = [
    "AGAINST_SHARE",
    "HEAD_BYTES",
    "contradicting_queries",
    "rank_order_note",
    "rank_order_note_of_file",
]

#: A query contradicts its scores when more than this share of its rank steps goes against them.
AGAINST_SHARE = 0.75

#: Bytes of a run file's start read to judge its order on the C-speed path of ``eval``.
HEAD_BYTES = 1 << 18


def contradicting_queries(
    query_codes: np.ndarray, ranks: np.ndarray, scores: np.ndarray
) -> tuple[int, int]:
    """How many queries' ranks order their documents against their scores, of those that say.

    Within a query, documents are taken in rank order; each step to the next
    rank where both rank and score change counts for the scores (score falls)
    or against them (score rises). A query contradicts its scores when more
    than :data:`AGAINST_SHARE` of its steps go against them (negated scores
    put every step against); a query with no such step says nothing. A rank
    column in arbitrary order (shuffled, or written by another sort) puts
    about half of a query's steps against, so it rarely passes that share
    (docs/conventions.md, "Conventions and caveats", measured rates).

    Returns
    -------
    tuple of int
        ``(contradicting, judged)`` queries.

    Examples
    --------
    >>> contradicting_queries(np.array([0, 0, 1, 1]), np.array([1, 2, 1, 2]),
    ...                       np.array([-3.0, -1.0, 2.0, 1.0]))
    (1, 2)
    """
    scores = np.asarray(scores, dtype=np.float64)
    known = np.isfinite(scores)
    q = np.asarray(query_codes, dtype=np.int64)[known]
    r, s = np.asarray(ranks, dtype=np.int64)[known], scores[known]
    if len(q) < 2:
        return 0, 0
    order = np.lexsort((r, q))
    q, r, s = q[order], r[order], s[order]
    step = (q[1:] == q[:-1]) & (r[1:] != r[:-1]) & (s[1:] != s[:-1])
    queries = int(q.max()) + 1
    against = np.bincount(q[1:][step & (s[1:] > s[:-1])], minlength=queries)
    along = np.bincount(q[1:][step & (s[1:] < s[:-1])], minlength=queries)
    steps = against + along
    judged = steps > 0
    contradicting = judged & (against > AGAINST_SHARE * steps)
    return int(contradicting.sum()), int(judged.sum())


def rank_order_note(
    label: str, query_codes: np.ndarray, ranks: np.ndarray, scores: np.ndarray
) -> str | None:
    """The warning for a run most of whose queries rank against their scores, else ``None``.

    Warns when more than half of the judged queries contradict their scores
    (:func:`contradicting_queries`).
    """
    bad, judged = contradicting_queries(query_codes, ranks, scores)
    if not judged or bad * 2 <= judged:
        return None
    return (
        f"{label}: the rank column orders the documents opposite to the scores in {bad} of "
        f"{judged} queries (rank 1 has a low score: negated scores?); like trec_eval, orlbuild "
        "orders a run by its scores, not its ranks"
    )


def rank_order_note_of_file(path: Path, label: str | None = None) -> str | None:
    """:func:`rank_order_note` of the first :data:`HEAD_BYTES` of a TREC run file.

    Lines that are not ``query Q0 item rank score tag`` with an integer rank and
    a numeric score are skipped (the reader that scores the file judges them).
    """
    try:
        with path.open("rb") as raw, open_input(raw) as stream:
            head = stream.read(HEAD_BYTES)
    except (OSError, EOFError, ValueError):
        return None
    lines = head.decode("utf-8", errors="replace").splitlines()
    if len(head) == HEAD_BYTES:
        lines = lines[:-1]  # the last line may be cut
    queries, ranks, scores = [], [], []
    for line in lines:
        fields = line.split()
        if len(fields) != 6:
            continue
        try:
            rank, score = int(fields[3]), float(fields[4])
        except ValueError:
            continue
        queries.append(fields[0])
        ranks.append(rank)
        scores.append(score)
    if not queries:
        return None
    _, codes = np.unique(np.asarray(queries, dtype=object), return_inverse=True)
    return rank_order_note(label or str(path), codes, np.asarray(ranks), np.asarray(scores))
