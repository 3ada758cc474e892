"""The settings of one comparison of systems, in one frozen object.

:class:`TestSettings` is what ``orlbuild compare``, ``orlbuild eval --compare``,
the pipeline's ``[compare]`` and :func:`scoring.statistics.system_comparison`
share: the command line and the TOML take their defaults from it, and it is
passed down unchanged (docs/comparing-systems.md, "Comparing many systems"). This module imports
only the vocabulary, so that option declarations can read the defaults without
loading NumPy.
"""

from __future__ import annotations

from dataclasses import dataclass

from scoring.vocabulary import CorrectionName, SignificanceTest

__all__ = ["TestSettings"]


@dataclass(frozen=True)
class TestSettings:
    """How every pair of systems is tested.

    Attributes
    ----------
    test
        The test; ``None``: ``max-t`` for more than two systems, else ``randomization``.
    permutations
        Requested draws of the randomization tests (a minimum, raised when
        needed by :func:`scoring.statistics.plan_test`).
    correction
        Adjustment over the pairs of a measure; ``None``: ``holm`` (nothing
        with the family-wise ``max-t`` and ``tukey-hsd``).
    alpha
        A pair is significant when its adjusted p-value is below ``alpha``.
    seed
        Seed of the draws.
    """

    __test__ = False  # not a pytest test class, whatever its name

    test: SignificanceTest | None = None
    permutations: int = 1000
    correction: CorrectionName | None = None
    alpha: float = 0.05
    seed: int = 0
