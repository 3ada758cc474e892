"""Errors raised by the scoring core.

:class:`ScoringError` is a ``ValueError`` so that callers who only know the
standard library (``except ValueError``) still catch it.
"""

from __future__ import annotations

__all__ = ["ScoringError", "UnknownMeasureError"]


class ScoringError(ValueError):
    """An invalid ORL, ranking, measure name or measure parameter."""


class UnknownMeasureError(ScoringError):
    """One or more measure names could not be parsed.

    Parameters
    ----------
    problems
        One message per bad name; all of them are reported together.
    valid
        A description of the valid names, appended to the message.
    """

    def __init__(self, problems: list[str], valid: str) -> None:
        self.problems = problems
        self.valid = valid
        super().__init__("; ".join(problems) + f". Valid measures: {valid}")
