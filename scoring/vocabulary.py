"""The words of the scoring core's options, one :class:`~enum.Enum` each.

This module imports nothing (not even NumPy), so that command-line option
declarations can take their choices from here without loading the numerics.
Members are ``str`` enums: ``MissingPolicy.skip == "skip"``, and every
function that takes one of these words also takes the plain string.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

__all__ = [
    "CorrectionName",
    "DuplicatePolicy",
    "Missing",
    "MissingPolicy",
    "ScorePrecisionName",
    "SignificanceTest",
]

Missing = Literal["zero", "skip"]


class MissingPolicy(str, Enum):
    """What ORL queries absent from a run count as (docs/conventions.md, "Conventions and caveats"):
    ``zero`` (score 0, as ``trec_eval -c``) or ``skip`` (dropped)."""

    zero = "zero"
    skip = "skip"

    @property
    def literal(self) -> Missing:
        """The plain word, typed as :data:`Missing`."""
        return "skip" if self is MissingPolicy.skip else "zero"


class DuplicatePolicy(str, Enum):
    """A repeated (query, item) in a run: an error (as trec_eval), or the first one kept."""

    error = "error"
    keep_first = "keep-first"


class ScorePrecisionName(str, Enum):
    """How run scores are compared (docs/evaluating-files.md, "Score precision"); ``float32`` is the
    default."""

    float32 = "float32"
    float64 = "float64"


class SignificanceTest(str, Enum):
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


class CorrectionName(str, Enum):
    """``--correction``: adjustment over the pairs of a measure (not with the family-wise tests)."""

    holm = "holm"
    bonferroni = "bonferroni"
    none = "none"
