"""Vectorised conversion of string columns into typed arrays, naming the first bad line.

Each converter works on a whole chunk at once (NumPy / pandas); only when a
chunk fails does a slow scan find the first offending row, so that the error
names its line and value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from orlbuild.errors import InputError
from orlbuild.ingest.characters import CONTROL_CHARACTERS
from orlbuild.ingest.name_codes import Vocabulary
from orlbuild.ingest.rows import ColumnChunk
from orlbuild.ingest.trec_reader import (
    NAME_LENGTH,  # the store's limit, without importing the store
)

__all__ = [
    "FLAG_VALUES",
    "finite_floats",
    "flags",
    "identifier_codes",
    "identifier_pair_codes",
    "integers",
]

#: Largest integer a rank or grade may take (the store's INTEGER is 32-bit on PostgreSQL).
MAX_INTEGER = 2**31 - 1

_INTEGER = re.compile(r"\s*[+-]?\d+\s*")
#: The one vocabulary of a 0/1 column (``tie``), after stripping and lower-casing
#: (docs/input-formats.md, "Ties"): 0/1, as a float column is written (``0.0``/``1.0``),
#: ``false``/``true`` (JSON booleans too), ``no``/``yes``, and an empty cell for 0.
FLAG_VALUES = {
    "0": False,
    "1": True,
    "0.0": False,
    "1.0": True,
    "false": False,
    "true": True,
    "no": False,
    "yes": True,
    "": False,
}


def _fail_at(
    chunk: ColumnChunk,
    mask: np.ndarray,
    values: Sequence[str] | np.ndarray,
    reason: str,
    label: str,
    hint: str,
) -> None:
    """Raise :class:`InputError` for the first row where ``mask`` is true, if any."""
    bad = np.flatnonzero(mask)
    if bad.size:
        i = int(bad[0])
        raise InputError(reason, file=label, line=int(chunk.lines[i]), value=values[i], hint=hint)


def identifier_codes(
    chunk: ColumnChunk,
    column: str,
    label: str,
    vocabulary: Vocabulary,
    *,
    default: str | None = None,
) -> np.ndarray:
    """Provisional vocabulary codes of the identifiers in ``column`` (whitespace stripped).

    Only the distinct values of the chunk are stripped and checked, so the
    cost is one hash pass over the column. The codes become final with
    :meth:`Vocabularies.finish`.

    Parameters
    ----------
    chunk
        The rows.
    column
        Column name; when absent from the chunk every row gets ``default``.
    label
        File name for messages.
    vocabulary
        Assigns the codes (shared by every chunk of the file).
    default
        Value for absent columns and empty cells; ``None`` makes an empty
        cell an error.

    Returns
    -------
    numpy.ndarray
        ``int64`` provisional codes.
    """
    raw = chunk.columns.get(column)
    if raw is None:
        if default is None:  # pragma: no cover - required columns are checked by the reader
            raise InputError(f"missing required column {column!r}", file=label)
        offset = vocabulary.add(np.asarray([default], dtype=object))
        return np.full(len(chunk), offset, dtype=np.int64)
    return _coded_names(chunk, [raw], [column], label, vocabulary, default)


def identifier_pair_codes(
    chunk: ColumnChunk, columns: tuple[str, str], label: str, vocabulary: Vocabulary
) -> tuple[np.ndarray, np.ndarray]:
    """Provisional codes of two required identifier columns of one vocabulary.

    Both columns go through one hash pass (e.g. ``winner`` and ``loser``,
    whose items largely overlap); otherwise as :func:`identifier_codes`.
    """
    raws = [chunk.columns[c] for c in columns]
    codes = _coded_names(chunk, raws, list(columns), label, vocabulary, None)
    return codes[: len(chunk)], codes[len(chunk) :]


def _coded_names(
    chunk: ColumnChunk,
    raws: list[Sequence[str]],
    columns: list[str],
    label: str,
    vocabulary: Vocabulary,
    default: str | None,
) -> np.ndarray:
    """Codes of the concatenated columns ``raws``; names the line of an empty or long value."""
    values = np.concatenate([np.asarray(raw, dtype=object) for raw in raws])
    local, uniques = pd.factorize(values)
    # Plain C-level passes over the distinct values (pandas' .str methods call a
    # Python function per value): strip, lengths, and one search for a NUL byte.
    raw_names = uniques.tolist()
    stripped = list(map(str.strip, raw_names))
    if default is not None:
        stripped = [name or default for name in stripped]
    lengths = np.fromiter(map(len, stripped), dtype=np.int64, count=len(stripped))
    joined = "".join(stripped)
    nul = "\x00" in joined
    control = CONTROL_CHARACTERS.search(joined) is not None
    none = np.zeros(len(stripped), dtype=bool)
    problems: tuple[tuple[np.ndarray, str, str], ...] = (
        (lengths == 0, "empty {}", "every row needs a {}"),
        (lengths > NAME_LENGTH, f"{{}} is longer than {NAME_LENGTH} characters", "shorten it"),
        (
            np.fromiter(("\x00" in n for n in stripped), bool, len(stripped)) if nul else none,
            "{} contains a NUL byte (\\x00)",
            "identifiers are text: remove the NUL byte (is this a binary or UTF-16 file?)",
        ),
        (
            np.fromiter(
                (CONTROL_CHARACTERS.search(n) is not None for n in stripped), bool, len(stripped)
            )
            if control
            else none,
            "{} contains a control character",
            "identifiers are printable text: remove it (tabs and line ends separate fields)",
        ),
    )
    for bad, reason, hint in problems:
        if bad.any():
            i = int(np.flatnonzero(np.isin(local, np.flatnonzero(bad)))[0])
            column = columns[i // len(chunk)]
            raise InputError(
                reason.format(column),
                file=label,
                line=int(chunk.lines[i % len(chunk)]),
                value=values[i],
                hint=hint.format(column),
            )
    names = np.empty(len(stripped), dtype=object)
    names[:] = stripped
    # Nothing stripped or replaced: the names are pandas' distinct values (the list
    # comparison meets the same objects, so it costs a pointer test per name).
    return local.astype(np.int64) + vocabulary.add(names, distinct=stripped == raw_names)


def _parse_or_locate(
    chunk: ColumnChunk,
    raw: Sequence[str],
    convert: Callable[[np.ndarray], np.ndarray],
    valid: Callable[[str], bool],
    reason: str,
    label: str,
    hint: str,
) -> np.ndarray:
    """Convert a whole column at once; on failure find the first value ``valid`` rejects."""
    try:
        return convert(np.asarray(raw, dtype=np.str_))
    except (ValueError, OverflowError):
        mask = np.fromiter((not valid(v) for v in raw), dtype=bool, count=len(raw))
        _fail_at(chunk, mask, raw, reason, label, hint)
        raise  # pragma: no cover - the fast path and ``valid`` disagree


def integers(
    chunk: ColumnChunk,
    column: str,
    label: str,
    *,
    minimum: int,
    hint: str,
    empty: int | None = None,
) -> np.ndarray:
    """Integers of ``column`` that must be ``>= minimum`` and at most :data:`MAX_INTEGER`.

    ``empty``, when given, is the value of an empty cell (otherwise an error).
    A value too large for 64 bits is reported like any other too large value.

    Returns
    -------
    numpy.ndarray
        ``int64`` array.
    """
    raw: Sequence[str] | np.ndarray = chunk.columns[column]
    if empty is not None:
        text = np.char.strip(np.asarray(raw, dtype=np.str_))
        raw = np.where(text == "", str(empty), text)
    reason = f"{column} must be an integer"
    too_large = f"{column} is too large (at most {MAX_INTEGER})"
    try:
        values = np.asarray(raw, dtype=np.str_).astype(np.int64)
    except (ValueError, OverflowError):
        valid = np.fromiter((_INTEGER.fullmatch(v) is not None for v in raw), bool, len(raw))
        _fail_at(chunk, ~valid, raw, reason, label, hint)
        huge = np.fromiter((abs(int(v)) > MAX_INTEGER for v in raw), bool, len(raw))
        _fail_at(chunk, huge, raw, too_large, label, hint)
        raise  # pragma: no cover - every value matched and none overflowed
    # numpy accepts "1_000" like int(); the text format does not.
    underscores = np.char.find(np.asarray(raw, dtype=np.str_), "_") >= 0
    _fail_at(chunk, underscores, raw, reason, label, hint)
    _fail_at(chunk, values < minimum, raw, f"{column} must be >= {minimum}", label, hint)
    _fail_at(chunk, values > MAX_INTEGER, raw, too_large, label, hint)
    return values


def _is_float(value: str) -> bool:
    """Whether ``value`` is a number in the text format (``float()`` without ``_``)."""
    try:
        float(value)
    except ValueError:
        return False
    return "_" not in value


def finite_floats(chunk: ColumnChunk, column: str, label: str, *, hint: str) -> np.ndarray:
    """Finite floats of ``column`` (NaN and infinities are errors); NaN when the column is absent.

    Returns
    -------
    numpy.ndarray
        ``float64`` array.
    """
    raw = chunk.columns.get(column)
    if raw is None:
        return np.full(len(chunk), np.nan)
    reason = f"{column} must be a number"
    values = _parse_or_locate(
        chunk, raw, lambda a: a.astype(np.float64), _is_float, reason, label, hint
    )
    # float() accepts "1_000" (Python literal syntax); the text format does not.
    underscores = np.char.find(np.asarray(raw, dtype=np.str_), "_") >= 0
    _fail_at(chunk, underscores, raw, reason, label, hint)
    _fail_at(chunk, ~np.isfinite(values), raw, f"{column} must be finite", label, hint)
    return values


def flags(chunk: ColumnChunk, column: str, label: str) -> np.ndarray:
    """Booleans of a 0/1 column, in the words of :data:`FLAG_VALUES` (any case, stripped).

    Returns
    -------
    numpy.ndarray
        ``bool`` array, all false when the column is absent.
    """
    raw = chunk.columns.get(column)
    if raw is None:
        return np.zeros(len(chunk), dtype=bool)
    local, uniques = pd.factorize(np.asarray(raw, dtype=object))
    meaning = [FLAG_VALUES.get(str(u).strip().lower()) for u in uniques]
    unknown = [i for i, m in enumerate(meaning) if m is None]
    if unknown:
        mask = np.isin(local, unknown)
        _fail_at(
            chunk,
            mask,
            raw,
            f"{column} must be 0 or 1",
            label,
            "use 1 (or 1.0, true, yes) for a tie, 0 (0.0, false, no or empty) for none",
        )
    return np.asarray(meaning, dtype=bool)[local]
