"""The words of the scoring core's options, one :class:`~enum.Enum` each.

This module imports nothing (not even NumPy), so that command-line option
declarations can take their choices from here without loading the numerics.
Members are ``str`` enums: ``MissingPolicy.skip == "skip"``, and every
function that takes one of these words also takes the plain string.
"""

from __future__ import annotations

from enum import Enum

__all__ = [
    "CorrectionName",
    "DuplicatePolicy",
    "MissingPolicy",
    "ScorePrecisionName",
    "SignificanceTest",
    "Word",
]


class Word(str, Enum):
    """A vocabulary word: a ``str`` enum that prints as its value (``f"{MissingPolicy.zero}"``
    is ``zero`` and ``repr`` is ``'zero'``, on every Python version), so a word reads the same
    in messages, tables and JSON whether it is passed as the member or as the plain string."""

    def __str__(self) -> str:
        return str(self.value)

    def __repr__(self) -> str:
        return repr(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class MissingPolicy(Word):
    """What ORL queries absent from a run count as (docs/conventions.md, "Conventions and caveats"):
    ``zero`` (score 0, as ``trec_eval -c``) or ``skip`` (dropped)."""

    zero = "zero"
    skip = "skip"


class DuplicatePolicy(Word):
    """A repeated (query, item) in a run: an error (as trec_eval), or the first one kept."""

    error = "error"
    keep_first = "keep-first"


class ScorePrecisionName(Word):
    """How run scores are compared (docs/evaluating-files.md, "Score precision"); ``float32`` is
    the default."""

    float32 = "float32"
    float64 = "float64"


class SignificanceTest(Word):
    """``--test``: how a pair of systems is tested (docs/comparing-systems.md, "Comparing many
    systems")."""

    randomization = "randomization"
    t = "t"
    tukey_hsd = "tukey-hsd"
    max_t = "max-t"

    @property
    def family_wise(self) -> bool:
        """The p-values are adjusted over all pairs already (no ``--correction``)."""
        return self in (SignificanceTest.tukey_hsd, SignificanceTest.max_t)


class CorrectionName(Word):
    """``--correction``: adjustment over the pairs of a measure (not with the family-wise tests)."""

    holm = "holm"
    bonferroni = "bonferroni"
    none = "none"
