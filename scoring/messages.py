"""Wording shared by messages: the first few names of a list, then how many more.

Imports nothing, so that every layer (and :mod:`orlbuild`) can use it.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["SHOWN_NAMES", "first_and_more"]

#: How many names a message shows before it says "and K more".
SHOWN_NAMES = 5


def first_and_more(
    names: Iterable[object], limit: int = SHOWN_NAMES, *, quote: bool = True, sep: str = ", "
) -> str:
    """The first ``limit`` names joined by ``sep``, then ``and K more`` if there are more.

    Parameters
    ----------
    names
        The names (ids, or whole phrases with ``quote=False``).
    limit
        How many to show.
    quote
        Show each name as ``repr(str(name))``.
    sep
        Separator between the names shown.

    Returns
    -------
    str
        E.g. ``'q1', 'q2' and 3 more``.

    Examples
    --------
    >>> first_and_more(["q1", "q2", "q3"], 2)
    "'q1', 'q2' and 1 more"
    """
    listed = [repr(str(n)) if quote else str(n) for n in names]
    shown = sep.join(listed[:limit])
    rest = len(listed) - limit
    return shown + (f" and {rest} more" if rest > 0 else "")
