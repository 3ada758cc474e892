"""C-speed reading of TREC qrels and runs (docs/evaluating-files.md, "Evaluating files").

``orlbuild eval`` (:func:`fast_trec_eval`) and :func:`fast_trec_runs` first
try the byte reader of :mod:`orlbuild.ingest.trec_bytes`, which makes no
Python object per line and declines anything outside a plain subset (it
never reads a file differently from the line-exact reader); a declined file
takes the pandas path described here.

``orlbuild eval`` reads whole TREC files with pandas' C parser: one pass,
identifiers as strings, numbers parsed in C. The fast path is all-or-nothing: when it meets anything
the line-exact reader of :mod:`orlbuild.ingest` would reject or might treat
differently (a wrong field count, a non-integer rank or grade, a non-finite
score, bytes that are not UTF-8, a repeated document, an over-long id), it
returns ``None`` and the caller reads the file again with that reader, whose
error names the file, line and value. So error messages stay exactly as
precise, and good files never pay for the slow reader.

Comment lines (first non-blank character ``#``, as ir_metadata writes them)
are taken out before the C parser sees the text, and counted: a frame
carries their number in ``frame.attrs["comment_lines"]``. Lines longer than
:data:`orlbuild.ingest.source.MAX_LINE_CHARS` send the file to the exact
reader before they are buffered whole.
"""

from __future__ import annotations

import csv
import io
import itertools
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from orlbuild.ingest import trec_bytes
from orlbuild.ingest.characters import CONTROL_CHARACTERS, INVISIBLE_CHARACTERS
from orlbuild.ingest.source import BLOCK_BYTES, MAX_LINE_CHARS, open_input
from orlbuild.vocabulary import InputFormat
from scoring.batch import IdTable
from scoring.run import CodedRuns

if TYPE_CHECKING:  # loaded by the pandas path only: the byte reader needs none
    import pandas as pd

__all__ = [
    "NAME_LENGTH",
    "CodedQrels",
    "fast_trec_eval",
    "fast_trec_frame",
    "fast_trec_frames",
    "fast_trec_qrels",
    "fast_trec_runs",
]

#: Longest identifier the store accepts (``orlbuild.store.models.NAME_LENGTH``;
#: repeated here so that ``orlbuild eval`` does not import SQLAlchemy, and
#: checked equal by a test).
NAME_LENGTH = 512

#: Largest integer a rank or grade may take (as :mod:`orlbuild.ingest.fields`).
MAX_INTEGER = 2**31 - 1

_COLUMNS = {
    InputFormat.trec: ("query", "q0", "item", "rank", "score", "tag"),
    InputFormat.qrels: ("query", "iteration", "item", "grade"),
}
# Integers are read as categoricals: a categorical infers integer categories
# only when every value is an integer literal, so "1.0" (which an int64 column
# would accept) is seen and left to the exact reader, and the few distinct
# ranks or grades cost one small array.
_NUMBERS = {"rank": "category", "grade": "category", "score": "float64"}
_IDS = ("query", "item")
_BOM = "\ufeff".encode()
_READ_ERRORS = (ValueError, UnicodeDecodeError, OverflowError, OSError, EOFError, zlib.error)


def fast_trec_frame(path: Path, fmt: InputFormat) -> pd.DataFrame | None:
    """A whole TREC run or qrels file as a DataFrame, or ``None`` if it needs the exact reader.

    Parameters
    ----------
    path
        A regular file, plain or gzip/bz2-compressed (recognised by content).
    fmt
        :attr:`InputFormat.trec` (``query Q0 item rank score tag``) or
        :attr:`InputFormat.qrels` (``query iteration item grade``).

    Returns
    -------
    pandas.DataFrame or None
        Runs: columns ``query``, ``item`` (categoricals of strings), ``rank`` (int64),
        ``score`` (float64); qrels: ``query``, ``item``, ``grade`` (int64).
        Rows in file order, each (query, item) once. ``None`` when anything
        would make the line-exact reader fail or differ.
    """
    read = _read_one(path, fmt)
    if read is None:
        return None
    frame, (query_codes, queries), (item_codes, items), comments = read
    out = _frame(frame, fmt, query_codes, queries, item_codes, items)
    out.attrs["comment_lines"] = comments
    return out


def fast_trec_qrels(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
    """TREC qrels read as :func:`fast_trec_frame` reads them, as plain arrays.

    For building ORLs straight away (``orlbuild eval``): no categoricals, whose
    construction hashes every distinct id once more.

    Parameters
    ----------
    path
        A regular file, plain or gzip/bz2-compressed.

    Returns
    -------
    tuple or None
        Queries and items (object arrays of strings), grades (int64), one
        entry per line in file order, and the number of comment lines
        skipped; ``None`` exactly when :func:`fast_trec_frame` returns ``None``.
    """
    read = _read_one(path, InputFormat.qrels)
    if read is None:
        return None
    frame, (query_codes, queries), (item_codes, items), comments = read
    column = frame["grade"].cat
    levels = _integer_levels(column.categories)
    assert levels is not None  # checked by _numbers_and_fields_ok
    return queries[query_codes], items[item_codes], levels[column.codes.to_numpy()], comments


def _read_one(path: Path, fmt: InputFormat) -> tuple[pd.DataFrame, _Coded, _Coded, int] | None:
    """The parse of one file: its rows, their id codes and its number of comment lines."""
    parsed = _parse_one(path, fmt)
    if parsed is None:
        return None
    frame, comments = parsed
    coded = _coded_ids([frame])
    if coded is None:
        return None
    (query_codes, _), (item_codes, _) = coded
    if not _unique_pairs(np.zeros(len(frame), dtype=np.int64), query_codes, item_codes):
        return None  # a repeated (query, item): the exact reader names both lines
    return frame, coded[0], coded[1], comments


def _parse_one(path: Path, fmt: InputFormat) -> tuple[pd.DataFrame, int] | None:
    """One file's rows (ids not yet coded) and its number of comment lines."""
    try:
        with path.open("rb") as raw:
            checked = _CheckedStream(open_input(raw))
            frame = _parse(checked, fmt)  # type: ignore[arg-type]
    except _READ_ERRORS:
        return None
    return None if frame is None else (frame, checked.comments)


@dataclass(frozen=True)
class CodedQrels:
    """TREC qrels as :func:`fast_trec_qrels` reads them, ids as codes into shared tables.

    Row ``i`` is query ``queries[query_codes[i]]``, item ``items[item_codes[i]]``,
    grade ``grades[i]``, in file order; ``comments`` comment lines were skipped.
    """

    query_codes: np.ndarray
    queries: np.ndarray
    item_codes: np.ndarray
    items: np.ndarray | IdTable
    grades: np.ndarray
    comments: int


def fast_trec_eval(
    qrels: Path, runs: Sequence[Path]
) -> tuple[CodedQrels, CodedRuns, list[int]] | None:
    """TREC qrels and runs read together, their ids coded into one table per column.

    What ``orlbuild eval`` needs: the qrels' and the runs' ids are hashed in
    one pass over both, so that the qrels' items and the runs' items share
    codes, and ORLs built from the qrels
    (:func:`scoring.orl.orls_from_coded_grades`) are joined with the runs on
    integers, with no id hashed again.

    Parameters
    ----------
    qrels
        TREC qrels (``query iteration item grade``), a regular file.
    runs
        As for :func:`fast_trec_runs`.

    Returns
    -------
    tuple or None
        The qrels, the runs (sharing the qrels' ``queries`` and ``items``
        arrays) and each run file's number of comment lines; ``None`` when
        :func:`fast_trec_qrels` or :func:`fast_trec_runs` would return ``None``.
    """
    from_bytes = _bytes_eval(qrels, runs)
    if from_bytes is not None and from_bytes[0] is not None:
        return from_bytes[0], from_bytes[1], from_bytes[2]
    judged = _parse_one(qrels, InputFormat.qrels)
    if judged is None:
        return None
    qrels_frame, qrels_comments = judged
    many = _parse_many(runs)
    if many is None:
        return None
    frame, lines, comments = many
    coded = _coded_ids([qrels_frame, frame])
    if coded is None:
        return None
    (query_codes, queries), (item_codes, items) = coded
    cut = len(qrels_frame)
    if not _unique_pairs(np.zeros(cut, dtype=np.int64), query_codes[:cut], item_codes[:cut]):
        return None
    files = np.repeat(np.arange(len(lines), dtype=np.int64), lines)
    if not _unique_pairs(files, query_codes[cut:], item_codes[cut:]):
        return None
    column = qrels_frame["grade"].cat
    levels = _integer_levels(column.categories)
    assert levels is not None  # checked by _numbers_and_fields_ok
    judgments = CodedQrels(
        query_codes=query_codes[:cut].astype(np.int64),
        queries=queries,
        item_codes=item_codes[:cut].astype(np.int64),
        items=items,
        grades=levels[column.codes.to_numpy()],
        comments=qrels_comments,
    )
    coded_runs = CodedRuns(
        runs=files,
        query_codes=query_codes[cut:].astype(np.int64),
        queries=queries,
        item_codes=item_codes[cut:].astype(np.int64),
        items=items,
        scores=frame["score"].to_numpy(dtype=np.float64),
        n_runs=len(runs),
    )
    return judgments, coded_runs, comments


def _bytes_eval(
    qrels: Path | None, runs: Sequence[Path]
) -> tuple[CodedQrels | None, CodedRuns, list[int]] | None:
    """:func:`fast_trec_eval` (or, without ``qrels``, :func:`fast_trec_runs`) from bytes.

    Through the byte reader (:mod:`orlbuild.ingest.trec_bytes`), which makes
    no Python object per line. ``None`` when that reader refuses a file: the
    caller then takes the pandas path, and from there the exact reader.
    """
    paths = [*([qrels] if qrels is not None else []), *runs]
    texts = []
    try:
        for path in paths:
            with path.open("rb") as raw, open_input(raw) as stream:
                texts.append(trec_bytes.read_text(stream))
    except _READ_ERRORS:
        return None
    first_run = 1 if qrels is not None else 0
    read = trec_bytes.read_sections(
        [(text, 6 if i >= first_run else 4) for i, text in enumerate(texts)]
    )
    if read is None:
        return None
    cut = int(np.searchsorted(read.sections, first_run))
    files = read.sections[cut:] - first_run
    if not _unique_pairs(
        np.zeros(cut, dtype=np.int64), read.query_codes[:cut], read.item_codes[:cut]
    ) or not _unique_pairs(files, read.query_codes[cut:], read.item_codes[cut:]):
        return None  # a repeated (query, item): the exact reader names both lines
    judgments = None
    if qrels is not None:
        judgments = CodedQrels(
            query_codes=read.query_codes[:cut],
            queries=read.queries,
            item_codes=read.item_codes[:cut],
            items=read.items,
            grades=read.numbers["grade"],
            comments=texts[0].comments,
        )
    coded_runs = CodedRuns(
        runs=files,
        query_codes=read.query_codes[cut:],
        queries=read.queries,
        item_codes=read.item_codes[cut:],
        items=read.items,
        scores=read.numbers["score"],
        n_runs=len(runs),
    )
    return judgments, coded_runs, [text.comments for text in texts[first_run:]]


_NON_BLANK = re.compile(rb"\S")
_COMMENT_LINE = trec_bytes.COMMENT_LINE


class _CheckedStream:
    """A binary stream of complete lines, comment lines removed (counted), lines capped.

    ``read`` hands the C parser whole lines only, so a comment is recognised
    at the start of its line; a line longer than :data:`MAX_LINE_CHARS` bytes
    raises :class:`ValueError` (the caller then uses the exact reader, whose
    error names the line) before more of it is read.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._carry = b""
        self._first = True
        self.comments = 0

    def read(self, size: int = -1) -> bytes:
        """Up to about ``max(size, BLOCK_BYTES)`` bytes of complete lines (``b""`` at the end)."""
        while True:
            block = self._stream.read(max(size, BLOCK_BYTES))
            if self._first:
                block, self._first = block.removeprefix(_BOM), False
            if not block:
                data, self._carry = self._carry, b""
                return self._uncommented(data)
            data = self._carry + block
            cut = data.rfind(b"\n") + 1
            if len(data) - cut > MAX_LINE_CHARS or (
                cut and data.find(b"\n") - len(self._carry) > MAX_LINE_CHARS
            ):
                raise ValueError("line too long")
            if cut == 0:
                self._carry = data
                continue
            self._carry = data[cut:]
            data = self._uncommented(data[:cut])
            if data:
                return data

    def _uncommented(self, data: bytes) -> bytes:
        """``data`` without its comment lines, which are counted."""
        if b"#" not in data:
            return data
        data, removed = _COMMENT_LINE.subn(b"", data)
        self.comments += removed
        return data


def fast_trec_frames(paths: Sequence[Path]) -> list[pd.DataFrame] | None:
    """TREC runs parsed in one C pass: :func:`fast_trec_frame` of each, or ``None``.

    The files' decompressed bytes are joined and read by one ``read_csv``
    call (its fixed cost, a few milliseconds, is paid once instead of per
    file); each file's rows are found again by counting its lines. Anything
    that could blur where one file ends (a blank line, a lone carriage
    return) or that :func:`fast_trec_frame` would refuse in any file gives
    ``None``: the caller then reads each file on its own, and the exact
    reader names the file, line and value of any error.

    Parameters
    ----------
    paths
        Regular files, each a TREC run (``query Q0 item rank score tag``),
        plain or gzip/bz2-compressed.

    Returns
    -------
    list of pandas.DataFrame or None
        One frame per path, equal to :func:`fast_trec_frame`'s for that file.
    """
    import pandas as pd

    many = _read_many(paths)
    if many is None:
        return None
    frame, (query_codes, queries), (item_codes, items), bounds, comments = many
    frames = []
    for (start, stop), comment_lines in zip(
        itertools.pairwise(bounds.tolist()), comments, strict=True
    ):
        # Each file's own categories, in order of first appearance (as fast_trec_frame).
        query_local, query_used = pd.factorize(query_codes[start:stop])
        item_local, item_used = pd.factorize(item_codes[start:stop])
        part = frame.iloc[start:stop]
        one = _frame(
            part, InputFormat.trec, query_local, queries[query_used], item_local, items[item_used]
        )
        one.attrs["comment_lines"] = comment_lines
        frames.append(one)
    return frames


def fast_trec_runs(paths: Sequence[Path]) -> tuple[CodedRuns, list[int]] | None:
    """One or more TREC runs read as :func:`fast_trec_frames` reads them, kept as shared codes.

    For scoring them all at once (:func:`scoring.evaluation.evaluate_runs`)
    without building a table per file: ids stay integer codes into one table
    of distinct strings per column, which the scorer sorts as integers.

    Parameters
    ----------
    paths
        As for :func:`fast_trec_frames`.

    Returns
    -------
    tuple or None
        The runs (run ``i`` is ``paths[i]``) and each file's number of comment
        lines (skipped); ``None`` exactly when :func:`fast_trec_frames`
        returns ``None``.
    """
    from_bytes = _bytes_eval(None, paths)
    if from_bytes is not None:
        return from_bytes[1], from_bytes[2]
    many = _read_many(paths)
    if many is None:
        return None
    frame, (query_codes, queries), (item_codes, items), bounds, comments = many
    coded = CodedRuns(
        runs=np.repeat(np.arange(len(paths), dtype=np.int64), np.diff(bounds)),
        query_codes=query_codes.astype(np.int64),
        queries=queries,
        item_codes=item_codes.astype(np.int64),
        items=items,
        scores=frame["score"].to_numpy(dtype=np.float64),
        n_runs=len(paths),
    )
    return coded, comments


_Coded = tuple[np.ndarray, np.ndarray]


def _read_many(
    paths: Sequence[Path],
) -> tuple[pd.DataFrame, _Coded, _Coded, np.ndarray, list[int]] | None:
    """The joined parse of :func:`fast_trec_frames`: rows, id codes, file bounds, comment lines."""
    many = _parse_many(paths)
    if many is None:
        return None
    frame, lines, comments = many
    coded = _coded_ids([frame])
    if coded is None:
        return None
    (query_codes, _), (item_codes, _) = coded
    files = np.repeat(np.arange(len(lines), dtype=np.int64), lines)
    if not _unique_pairs(files, query_codes, item_codes):
        return None
    return frame, coded[0], coded[1], np.cumsum([0, *lines]), comments


def _parse_many(paths: Sequence[Path]) -> tuple[pd.DataFrame, list[int], list[int]] | None:
    """The runs' rows from one ``read_csv`` call (ids not coded), lines and comments per file."""
    chunks, lines, comments = [], [], []
    try:
        for path in paths:
            with path.open("rb") as raw, open_input(raw) as stream:
                checked = _CheckedStream(stream)  # drops the BOM; caps the line length
                data = b"".join(iter(checked.read, b""))
            comments.append(checked.comments)
            if _NON_BLANK.search(data) is None or (
                b"\r" in data and data.count(b"\r") != data.count(b"\r\n")
            ):
                return None  # empty, or a lone carriage return: the line count would be off
            if not data.endswith(b"\n"):
                data += b"\n"
            chunks.append(data)
            lines.append(data.count(b"\n"))
        frame = _parse(io.BytesIO(b"".join(chunks)), InputFormat.trec)
    except _READ_ERRORS:
        return None
    # A blank line is skipped, never split: each file gives at most one row per
    # line, so equal totals mean every file gave exactly one row per line.
    if frame is None or len(frame) != sum(lines):
        return None
    return frame, lines, comments


def _parse(source: BinaryIO, fmt: InputFormat) -> pd.DataFrame | None:
    """``read_csv`` of a whole TREC file; ``None`` when a number or field is refused.

    Raises the parser's errors (caught by the callers as :data:`_READ_ERRORS`).
    """
    import pandas as pd

    names = _COLUMNS[fmt]
    # Ids as Python strings ("01" stays "01"; a categorical would infer integers;
    # pandas 3's "str" would convert them to Arrow and back), the columns whose
    # value is unused as categoricals (only emptiness is checked).
    dtypes: dict[str, Any] = {
        name: _NUMBERS.get(name, object if name in _IDS else "category") for name in names
    }
    frame = pd.read_csv(
        source,
        sep=r"\s+",
        header=None,
        names=list(names),
        dtype=dtypes,
        quoting=csv.QUOTE_NONE,
        na_filter=False,
        engine="c",
        encoding="utf-8",  # strict; the C parser drops a BOM ("utf-8-sig" is 2x slower)
        encoding_errors="strict",
    )
    if frame.empty or not _numbers_and_fields_ok(frame, names):
        return None
    return frame


def _coded_ids(
    frames: Sequence[pd.DataFrame],
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]] | None:
    """Query and item codes of the frames' rows (one after the other) with their unique strings.

    One hash pass per column over all the frames, so that the frames share
    codes; ``None`` for an id the store refuses.
    """
    import pandas as pd

    coded = []
    for name in _IDS:  # factorised once: the scorer reuses the codes
        columns = [frame[name].to_numpy(dtype=object) for frame in frames]
        values = columns[0] if len(columns) == 1 else np.concatenate(columns)
        codes, uniques = _factorize_ids(values) if name == "item" else pd.factorize(values)
        if max(map(len, uniques), default=0) > NAME_LENGTH:
            return None  # an id the store refuses: the exact reader names it
        text = "".join(map(str, uniques))
        if CONTROL_CHARACTERS.search(text) or INVISIBLE_CHARACTERS.search(text):
            return None  # refused or warned about: the exact reader names the line
        coded.append((codes, np.asarray(uniques, dtype=object)))
    return coded[0], coded[1]


#: Rows sampled to tell mostly distinct ids (hashed first) from repeating ones.
_SAMPLE_ROWS = 20_000


def _factorize_ids(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``pandas.factorize`` of many distinct strings, hashed in C first (same codes, same order).

    Hashing the strings' bytes (``pandas.util.hash_array``) and factorising
    the 64-bit hashes costs less than factorising the Python strings, when
    most are distinct (a run's long document ids). The result is checked
    exact: every string is compared with the first string of its hash, and
    a collision falls back to ``pandas.factorize``. Ids that repeat a lot
    (short ids shared by every query, judged in a sample of rows) are
    factorised by ``pandas.factorize`` directly, which is faster for them.
    """
    import pandas as pd

    sample = values[:: max(1, len(values) // _SAMPLE_ROWS)]
    if len(pd.unique(sample)) < len(sample) // 2:
        return pd.factorize(values)
    hashes = pd.util.hash_array(values, categorize=False)
    codes, distinct = pd.factorize(hashes)
    # Codes number the hashes in order of first appearance: a row holds a new code
    # exactly where its code exceeds every earlier one.
    running = np.maximum.accumulate(codes)
    first = np.flatnonzero(codes > np.concatenate([[-1], running[:-1]]))
    uniques = values[first]
    if len(first) != len(distinct) or not (uniques[codes] == values).all():
        return pd.factorize(values)  # a 64-bit hash collision
    return codes, uniques


def _unique_pairs(files: np.ndarray, query_codes: np.ndarray, item_codes: np.ndarray) -> bool:
    """Whether each (file, query, item) occurs once (one sort of integer keys, no pandas)."""
    n_queries = int(query_codes.max(initial=0)) + 1
    n_items = int(item_codes.max(initial=0)) + 1
    n_files = int(files.max(initial=0)) + 1
    if n_files * n_queries * n_items >= 2**62:  # pragma: no cover - beyond any real run
        order = np.lexsort((item_codes, query_codes, files))
        keys = np.stack([files[order], query_codes[order], item_codes[order]])
        return not bool((keys[:, 1:] == keys[:, :-1]).all(axis=0).any())
    pairs = np.sort((files * n_queries + query_codes) * n_items + item_codes)
    return not bool((pairs[1:] == pairs[:-1]).any())


def _frame(
    frame: pd.DataFrame,
    fmt: InputFormat,
    query_codes: np.ndarray,
    queries: np.ndarray,
    item_codes: np.ndarray,
    items: np.ndarray,
) -> pd.DataFrame:
    """The reader's output frame: id categoricals from the codes, numbers as int64/float64."""
    import pandas as pd

    out: dict[str, object] = {
        "query": pd.Categorical.from_codes(query_codes, pd.Index(queries, dtype=object)),
        "item": pd.Categorical.from_codes(item_codes, pd.Index(items, dtype=object)),
    }
    for name in _COLUMNS[fmt]:
        if name == "score":
            out[name] = frame[name].to_numpy()
        elif name in _NUMBERS:
            column = frame[name].cat
            levels = _integer_levels(column.categories)
            assert levels is not None  # checked by _numbers_and_fields_ok
            out[name] = levels[column.codes.to_numpy()]
    return pd.DataFrame(out)


def _integer_levels(categories: pd.Index) -> np.ndarray | None:
    """The categories of an integer column as int64, ``None`` when one is not an integer.

    pandas 3 infers the categories of a ``category`` column read by ``read_csv``
    (integers here); pandas 2 keeps them as strings, which are accepted only
    when every one is plain decimal digits, optionally signed.
    """
    import pandas as pd

    if pd.api.types.is_integer_dtype(categories.dtype):
        return categories.to_numpy(dtype=np.int64)
    texts = categories.astype(str)
    if not texts.str.fullmatch(r"[+-]?[0-9]+").all():
        return None
    return np.array([int(text) for text in texts], dtype=np.int64)


def _numbers_and_fields_ok(frame: pd.DataFrame, names: tuple[str, ...]) -> bool:
    """Numbers in range and finite; the unused fields present (no short row)."""
    for name in names:
        if name in _IDS:
            continue  # whitespace-separated fields are never empty
        column = frame[name]
        if name == "score":
            if not np.isfinite(column.to_numpy()).all():
                return False
            continue
        if name in _NUMBERS:
            values = _integer_levels(column.cat.categories)
            if values is None:
                return False  # "1.0", "1_000", "x", or an empty (missing) field
            if len(values) and (values.min() < 0 or values.max() > MAX_INTEGER):
                return False
            continue
        categories = column.cat.categories
        if "" in set(categories.astype(str).tolist()):
            return False  # a short row: its missing last field reads as ""
    return True
