"""Turning a run table into ordered candidate lists (docs/conventions.md, "Conventions and
caveats").

Within a query, documents are ordered by score descending with ties broken by
document id descending - trec_eval's rule, which pytrec_eval follows - or by
the rank column when asked (ties again by document id descending).

Score precision (docs/evaluating-files.md, "Score precision"): by default scores are compared
as 32-bit floats, as trec_eval up to 9.0.8 (every official TREC result until
2025, pytrec_eval, ir_measures) stores them, so two scores equal in float32
tie and are ordered by document id. ``score_precision="float64"`` compares the
full double values, as trec_eval 10 does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Literal

import numpy as np

from scoring.batch import FlatRun, IdTable
from scoring.errors import ScoringError
from scoring.vocabulary import DuplicatePolicy, ScorePrecisionName

if TYPE_CHECKING:  # pandas is loaded only for run tables (orlbuild eval needs none)
    import pandas as pd

__all__ = [
    "DEFAULT_SCORE_PRECISION",
    "CodedRuns",
    "OrderBy",
    "check_score_precision",
    "comparable_scores",
    "flat_run_from_frame",
    "flat_run_from_scores",
    "flat_runs_from_codes",
    "rankings_from_frame",
    "trec_order",
]

OrderBy = Literal["score", "rank"]


#: The default: trec_eval <= 9.0.8 / pytrec_eval compare scores as float32.
DEFAULT_SCORE_PRECISION = ScorePrecisionName.float32


def check_score_precision(precision: str) -> ScorePrecisionName:
    """``precision`` if it is ``"float32"`` or ``"float64"``, else :class:`ScoringError`."""
    if precision not in {p.value for p in ScorePrecisionName}:
        raise ScoringError(f"score precision must be 'float32' or 'float64', got {precision!r}")
    return ScorePrecisionName(precision)


def comparable_scores(scores: np.ndarray, precision: ScorePrecisionName) -> np.ndarray:
    """Scores as float64 values that compare as ``precision`` does.

    ``float32`` rounds every score to the nearest 32-bit float (as C's
    ``float x = atof(text)`` does in trec_eval <= 9.0.8), so scores equal in
    float32 compare equal; ``float64`` leaves them unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> a = comparable_scores(np.array([67.62227973937988, 67.62227935791016]), "float32")
    >>> bool(a[0] == a[1])
    True
    """
    if precision == "float64":
        return scores
    with np.errstate(over="ignore"):  # beyond float32's range: +-inf, as in C
        return scores.astype(np.float32).astype(np.float64)


def _codes(column: pd.Series | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of an id column and its unique ids as strings."""
    import pandas as pd

    codes, uniques = pd.factorize(column)
    as_text = np.asarray(uniques).astype(str).astype(object)
    if len(set(as_text.tolist())) != len(as_text):  # e.g. 1 and "1" in one column
        codes, uniques = pd.factorize(np.asarray(column).astype(str))
        as_text = np.asarray(uniques, dtype=object)
    return codes.astype(np.int64), as_text


def _sort_keys(
    frame: pd.DataFrame, order_by: OrderBy | None, precision: ScorePrecisionName
) -> np.ndarray:
    """The column to order by, validated: finite float64, smaller is better."""
    import pandas as pd

    missing = {"query", "item"} - set(frame.columns)
    if missing:
        raise ScoringError(f"a run table needs columns query, item; missing {sorted(missing)}")
    key = order_by or ("score" if "score" in frame.columns else "rank")
    if key not in frame.columns:
        raise ScoringError(f"a run table needs a {key!r} column to order by")
    values = pd.to_numeric(frame[key], errors="coerce").to_numpy(dtype=np.float64)
    finite = np.isfinite(values)
    if not finite.all():
        bad = frame[key].to_numpy()[~finite][0]
        raise ScoringError(f"run column {key!r} holds a non-finite or non-numeric value {bad!r}")
    return values if key == "rank" else -comparable_scores(values, precision)


def trec_order(
    group: np.ndarray, primary: np.ndarray, item_codes: np.ndarray, items: np.ndarray | IdTable
) -> np.ndarray:
    """Indices sorting rows by (group, primary) ascending, ties by item id descending.

    trec_eval's order (docs/conventions.md, "Conventions and caveats"): within a
    query, score descending (``primary`` is the negated comparable score, or the
    rank), then document id descending as C's ``strcmp`` compares them (the code
    point order of Python strings). The rows are sorted on integer keys; only
    the rows that tie on (group, primary) are then ordered by their ids, so
    the only strings compared are the ids of tied rows, not every distinct id
    of the run (a run of 600,000 distinct MS MARCO ids sorts as integers).

    Parameters
    ----------
    group
        Integer group of each row (its query, or run and query), >= 0.
    primary
        The key within a group, smaller first.
    item_codes
        Each row's index into ``items``.
    items
        Distinct item ids (strings, or an :class:`~scoring.batch.IdTable`).

    Returns
    -------
    numpy.ndarray
        The permutation, as ``np.lexsort((-id_order, primary, group))`` would give it.
    """
    if _already_ordered(group, primary):  # a run as it is usually written: no sort
        order = np.arange(len(group))
        same = (group[1:] == group[:-1]) & (primary[1:] == primary[:-1])
        return _ties_by_id(order, same, item_codes, items)
    levels, dense = np.unique(primary, return_inverse=True)
    n_group = int(group.max(initial=0)) + 1
    if n_group * max(len(levels), 1) < 2**62:  # one argsort on numbers, faster than lexsort
        key = group * len(levels) + dense.astype(np.int64)
        order = np.argsort(key, kind="stable")
        sorted_key = key[order]
        same = sorted_key[1:] == sorted_key[:-1]
    else:  # pragma: no cover - beyond 2**31 rows
        order = np.lexsort((primary, group))
        g, p = group[order], primary[order]
        same = (g[1:] == g[:-1]) & (p[1:] == p[:-1])
    return _ties_by_id(order, same, item_codes, items)


def _already_ordered(group: np.ndarray, primary: np.ndarray) -> bool:
    """Whether the rows are sorted by (group, primary) already (one pass, no sort)."""
    if len(group) < 2:
        return True
    later, same = group[1:] > group[:-1], group[1:] == group[:-1]
    return bool(np.all(later | (same & (primary[1:] >= primary[:-1]))))


def _ties_by_id(
    order: np.ndarray, same: np.ndarray, item_codes: np.ndarray, items: np.ndarray | IdTable
) -> np.ndarray:
    """``order`` with each run of tied rows (``same[i]``: rows ``i``, ``i + 1`` tie) by id desc."""
    if not same.any():
        return order
    tie_group = np.concatenate([[0], np.cumsum(~same)])  # rows of one (group, primary) share it
    tied = np.zeros(len(order), dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    at = np.flatnonzero(tied)
    rows = order[at]
    used, local = np.unique(item_codes[rows], return_inverse=True)
    id_rank = np.empty(len(used), dtype=np.int64)
    if isinstance(items, IdTable):  # ASCII bytes: their order is strcmp's (and str's)
        by_id = np.argsort(items.bytes[used], kind="stable")
    else:
        by_id = _string_order(np.asarray(items, dtype=object)[used])
    id_rank[by_id] = np.arange(len(used))
    # The tied rows keep their positions (grouped by key); within a key, id descending.
    order[at] = rows[np.lexsort((-id_rank[local.ravel()], tie_group[at]))]
    return order


#: Largest fixed-width copy (in characters) :func:`_string_order` makes to sort in C.
_FIXED_WIDTH_CHARS = 1 << 25


def _string_order(names: np.ndarray) -> np.ndarray:
    """Stable argsort of distinct strings in code point order (Python's, C ``strcmp``'s).

    Sorted as a NumPy fixed-width unicode array (compared in C, several times
    faster than comparing Python strings) unless a string holds a NUL (which
    that array would drop at the end) or the copy would be very large.
    """
    texts = names.tolist()
    width = max(map(len, texts), default=0)
    if width * len(texts) > _FIXED_WIDTH_CHARS or "\x00" in "".join(texts):
        return np.argsort(names, kind="stable")
    return np.argsort(np.array(texts, dtype=f"U{max(width, 1)}"), kind="stable")


def flat_run_from_frame(
    frame: pd.DataFrame,
    *,
    order_by: OrderBy | None = None,
    duplicates: DuplicatePolicy = DuplicatePolicy.error,
    depth: int | None = None,
    score_precision: ScorePrecisionName = DEFAULT_SCORE_PRECISION,
) -> FlatRun:
    """Order a run table and concatenate its candidate lists.

    Parameters
    ----------
    frame
        Columns ``query``, ``item`` and ``score`` or ``rank``.
    order_by
        ``"score"`` (default when present) or ``"rank"``.
    duplicates
        ``"error"`` (default, as trec_eval) or ``"keep-first"`` after ordering.
    depth
        Keep at most this many items per query.
    score_precision
        Compare scores as ``"float32"`` (default, trec_eval <= 9.0.8) or
        ``"float64"`` (trec_eval 10).

    Returns
    -------
    FlatRun
        Queries in order of first appearance, each list best first.
    """
    primary = _sort_keys(frame, order_by, check_score_precision(score_precision))
    query_codes, queries = _codes(frame["query"])
    return _ordered_run(query_codes, queries, frame["item"], primary, duplicates, depth)


def flat_run_from_scores(
    run: Mapping[str, Mapping[str, float]],
    *,
    depth: int | None = None,
    score_precision: ScorePrecisionName = DEFAULT_SCORE_PRECISION,
) -> FlatRun:
    """Order a ``{query: {item: score}}`` run (pytrec_eval's shape) like a run table."""
    lengths = np.fromiter((len(docs) for docs in run.values()), dtype=np.int64, count=len(run))
    queries = np.empty(len(run), dtype=object)
    queries[:] = [str(q) for q in run]
    items = np.empty(int(lengths.sum()), dtype=object)
    items[:] = list(chain.from_iterable(docs.keys() for docs in run.values()))
    scores = np.fromiter(
        chain.from_iterable(docs.values() for docs in run.values()),
        dtype=np.float64,
        count=len(items),
    )
    if not np.isfinite(scores).all():
        bad = scores[~np.isfinite(scores)][0]
        raise ScoringError(f"run scores must be finite numbers, got {bad!r}")
    query_codes = np.repeat(np.arange(len(run), dtype=np.int64), lengths)
    scores = comparable_scores(scores, check_score_precision(score_precision))
    return _ordered_run(query_codes, queries, items, -scores, DuplicatePolicy.error, depth)


def _ordered_run(
    query_codes: np.ndarray,
    queries: np.ndarray,
    item_column: pd.Series | np.ndarray,
    primary: np.ndarray,
    duplicates: DuplicatePolicy,
    depth: int | None,
) -> FlatRun:
    """Sort rows by (query, primary, item id descending), check repeats, truncate, flatten."""
    if duplicates not in {d.value for d in DuplicatePolicy}:
        raise ScoringError(f"duplicates must be 'error' or 'keep-first', got {duplicates!r}")
    item_codes, items = _codes(item_column)
    order = trec_order(query_codes, primary, item_codes, items)
    query_codes, item_codes = query_codes[order], item_codes[order]

    pair = query_codes * max(len(items), 1) + item_codes
    first = np.zeros(len(pair), dtype=bool)
    first[np.unique(pair, return_index=True)[1]] = True
    if not first.all():
        if duplicates == "error":
            at = int(np.flatnonzero(~first)[0])
            raise ScoringError(
                f"document {items[item_codes[at]]!r} appears twice for query "
                f"{queries[query_codes[at]]!r} (use duplicates='keep-first' to keep the first "
                "occurrence after ordering)"
            )
        query_codes, item_codes = query_codes[first], item_codes[first]

    if depth is not None:
        keep = _within_depth(query_codes, depth)
        query_codes, item_codes = query_codes[keep], item_codes[keep]
    starts = _group_starts(query_codes)
    offsets = np.append(starts, len(query_codes)).astype(np.int64)
    return FlatRun(queries[query_codes[starts]], offsets, items[item_codes])


@dataclass(frozen=True)
class CodedRuns:
    """Several scored runs as integer codes into shared id tables (e.g. read in one pass).

    Row ``i`` belongs to run ``runs[i]`` (rows grouped by run, runs ascending
    from 0), query ``queries[query_codes[i]]`` and item ``items[item_codes[i]]``,
    with score ``scores[i]``. Each (run, query, item) occurs once.
    """

    runs: np.ndarray
    query_codes: np.ndarray
    queries: np.ndarray
    item_codes: np.ndarray
    items: np.ndarray | IdTable
    scores: np.ndarray
    n_runs: int


def flat_runs_from_codes(
    coded: CodedRuns,
    *,
    depth: int | None = None,
    score_precision: ScorePrecisionName = DEFAULT_SCORE_PRECISION,
) -> list[FlatRun]:
    """Order every run of ``coded`` at once: :func:`flat_run_from_frame` of each run's table.

    One sort over (run, query, score, item id descending) orders all runs;
    each run's lists are then cut out of the result. Only the order in which
    a run's queries are listed differs from :func:`flat_run_from_frame` (here:
    the shared query table's order), which no measure reads.

    Parameters
    ----------
    coded
        The runs.
    depth
        Keep at most this many items per query.
    score_precision
        Compare scores as ``"float32"`` (default) or ``"float64"``.

    Returns
    -------
    list of FlatRun
        One per run, ``0 .. coded.n_runs - 1``, keeping the item codes
        (:attr:`FlatRun.codes` into ``coded.items``).
    """
    precision = check_score_precision(score_precision)
    scores = np.asarray(coded.scores, dtype=np.float64)
    if not np.isfinite(scores).all():
        bad = scores[~np.isfinite(scores)][0]
        raise ScoringError(f"run scores must be finite numbers, got {bad!r}")
    n_queries = max(len(coded.queries), 1)
    items = coded.items if isinstance(coded.items, IdTable) else np.asarray(coded.items, object)
    group = coded.runs.astype(np.int64) * n_queries + coded.query_codes
    order = trec_order(group, -comparable_scores(scores, precision), coded.item_codes, items)
    group, item_codes = group[order], coded.item_codes[order]
    if depth is not None:
        keep = _within_depth(group, depth)
        group, item_codes = group[keep], item_codes[keep]
    starts = _group_starts(group)
    heads = group[starts]
    run_of = heads // n_queries
    cuts = np.searchsorted(run_of, np.arange(coded.n_runs + 1))
    ends = np.append(starts, len(group))
    flats = []
    for lo, hi in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
        first, last = int(ends[lo]), int(ends[hi])
        flats.append(
            FlatRun(  # items made from the codes only if read (not by measures on codes)
                np.asarray(coded.queries, dtype=object)[heads[lo:hi] % n_queries],
                (ends[lo : hi + 1] - first).astype(np.int64),
                codes=item_codes[first:last],
                table=items,
            )
        )
    return flats


def _group_starts(codes: np.ndarray) -> np.ndarray:
    """Indices where a run of equal (sorted) codes begins."""
    if not len(codes):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])


def _within_depth(codes: np.ndarray, depth: int) -> np.ndarray:
    """Mask of the first ``depth`` rows of each run of equal (sorted) codes."""
    starts = _group_starts(codes)
    lengths = np.diff(np.append(starts, len(codes)))
    return np.arange(len(codes)) - np.repeat(starts, lengths) < depth


def rankings_from_frame(
    frame: pd.DataFrame,
    *,
    order_by: OrderBy | None = None,
    duplicates: DuplicatePolicy = DuplicatePolicy.error,
    score_precision: ScorePrecisionName = DEFAULT_SCORE_PRECISION,
) -> dict[str, list[str]]:
    """``{query: [items best first]}`` from a ``query, item, score|rank`` table."""
    flat = flat_run_from_frame(
        frame, order_by=order_by, duplicates=duplicates, score_precision=score_precision
    )
    return flat.to_dict()
