"""Cells safe to open in a spreadsheet: no text that a spreadsheet would run as a formula.

An id or name such as ``=HYPERLINK("http://x", "y")``, ``+cmd|' /C calc'!A0`` or
``@SUM(A1:A9)`` in a CSV cell is run by Excel, LibreOffice and Google Sheets when the
file is opened, whatever the quoting. Following the OWASP rule for CSV files meant for
people, every text cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return is written with a leading ``'`` (docs/reliability.md, "Spreadsheet-safe CSV"),
which spreadsheets show as text and do not display. Numbers are left alone, also when
held as text (``-1.5``): a spreadsheet reads them as numbers, never as formulas.
``--raw-cells`` turns this off. Machine formats (qrels, trec-prefs, runs, JSON) are never
changed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FORMULA_STARTS", "safe_cell", "safe_frame"]

#: The first characters that make a spreadsheet read a cell as a formula (OWASP).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def safe_cell(value: Any) -> Any:
    """``value`` with a leading ``'`` when it is text a spreadsheet would run as a formula.

    Parameters
    ----------
    value
        A cell; anything but a ``str`` is returned as it is.

    Returns
    -------
    object
        ``"'" + value`` for a text beginning with one of :data:`FORMULA_STARTS` that is
        not a plain number, else ``value``.

    Examples
    --------
    >>> safe_cell("=1+1"), safe_cell("-1.5"), safe_cell("doc-1"), safe_cell(3)
    ("'=1+1", '-1.5', 'doc-1', 3)
    """
    risky = isinstance(value, str) and value.startswith(FORMULA_STARTS)
    return "'" + value if risky and not _NUMBER.fullmatch(value) else value


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with :func:`safe_cell` applied to its text cells and its column names.

    Parameters
    ----------
    frame
        The table to write as CSV (its index is not touched: reset it first).

    Returns
    -------
    pandas.DataFrame
        A copy when anything changed, otherwise ``frame`` itself.
    """
    import pandas as pd  # loaded already: ``frame`` is a DataFrame

    changed: dict[Any, Any] = {}
    for column in frame.columns:
        values = frame[column]
        if not (pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values)):
            text = values.astype(object)
            risky = text.map(lambda v: isinstance(v, str) and v.startswith(FORMULA_STARTS))
            if bool(risky.any()):
                changed[column] = text.map(safe_cell)
    names = [safe_cell(c) if isinstance(c, str) else c for c in frame.columns]
    if not changed and names == list(frame.columns):
        return frame
    out = frame.copy()
    for column, values in changed.items():
        out[column] = values
    out.columns = names
    return out
