"""Tiny HTML building blocks: escaped text, elements, number formats.

Every value that comes from data goes through :func:`esc` (or an attribute of
:func:`tag`, which escapes it); element content is HTML already built by these
helpers.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable

__all__ = ["esc", "fmt_number", "fmt_p", "table", "tag"]


def esc(value: object) -> str:
    """HTML-escape ``str(value)`` (quotes included, safe in attributes)."""
    return html.escape(str(value), quote=True)


def tag(name: str, *children: str, **attributes: object) -> str:
    """An element ``<name attrs>children</name>``.

    Attribute names lose a trailing underscore (``class_``) and turn ``_`` into
    ``-`` (``data_query``); ``None`` and ``False`` drop the attribute, ``True``
    writes it bare.
    """
    parts = []
    for key, value in attributes.items():
        if value is None or value is False:
            continue
        attr = key.rstrip("_").replace("_", "-")
        parts.append(f" {attr}" if value is True else f' {attr}="{esc(value)}"')
    return f"<{name}{''.join(parts)}>{''.join(children)}</{name}>"


def table(header: Iterable[str], rows: Iterable[str], **attributes: object) -> str:
    """A ``<table>`` with a ``<thead>`` of escaped column names and pre-built ``<tr>`` rows."""
    head = tag("tr", *(tag("th", esc(h), scope="col") for h in header))
    return tag("table", tag("thead", head), tag("tbody", *rows), **attributes)


def fmt_number(value: float | None, digits: int = 3, *, signed: bool = False) -> str:
    """A fixed-point number, ``"–"`` for ``None``/NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def fmt_p(value: float | None) -> str:
    """A p-value: three decimals, ``< 0.001`` below that, ``–`` when absent."""
    if value is None or math.isnan(value):
        return "–"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"
