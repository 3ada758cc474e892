"""Which significance test and correction compare the systems, and with how many draws.

docs/comparing-systems.md, "Comparing many systems": the names of the tests and corrections live
here once (the CLI options and the pipeline config take them from these
enums), the default test depends on the number of systems, and
:func:`plan_test` makes sure that no configuration that cannot reject runs
silently.

* ``max-t`` (studentized step-down randomized Tukey HSD, Westfall & Young
  1993) is the default for more than two systems, and ``tukey-hsd``
  (randomized Tukey HSD, Carterette 2012) its single-step, unstudentized form:
  their p-values are adjusted over all pairs already, the smallest attainable
  one is ``1 / (B + 1)``.
* ``randomization`` (paired sign-flip test) is the default for two systems.
  With Holm or Bonferroni over ``m`` pairs the smallest attainable adjusted
  p-value is ``m / (B + 1)``; the number of flips ``B`` is raised until it is
  below ``alpha / 10``, or all ``2**n`` sign vectors are enumerated when the
  ``n`` queries are few enough for that to be cheaper.
* ``t`` (paired t-test) has continuous p-values; nothing to plan.

Where the target cannot be met (too many pairs, too few queries) the plan
carries a warning that the commands print, put in their JSON and in the report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from scoring.errors import ScoringError
from scoring.vocabulary import CorrectionName, SignificanceTest

__all__ = [
    "MAX_PERMUTATIONS",
    "TestPlan",
    "default_test",
    "plan_test",
    "resolve_test",
]

#: Largest number of Monte Carlo draws chosen automatically (about 5 s for the
#: sign-flip test of 100 systems on 50 queries).
MAX_PERMUTATIONS: Final = 1_000_000
#: Largest number of queries whose ``2**n`` sign vectors are enumerated (the
#: enumeration is used only when it is cheaper than the Monte Carlo draws).
EXACT_MAX_QUERIES: Final = 20
#: The smallest attainable adjusted p-value must be below ``alpha / RESOLUTION``.
RESOLUTION: Final = 10


def default_test(n_systems: int) -> SignificanceTest:
    """``max-t`` for more than two systems, ``randomization`` for two.

    ``max-t`` rather than ``tukey-hsd``: at the same family-wise error it finds
    at least as many truly different pairs as the sign-flip test with Holm, at
    every spread of true means measured, where ``tukey-hsd`` finds fewer once
    the means spread widely (docs/comparing-systems.md, "Comparing many systems").
    """
    return SignificanceTest.max_t if n_systems > 2 else SignificanceTest.randomization


@dataclass(frozen=True)
class TestPlan:
    """How one family of pairs (one measure) is tested.

    Attributes
    ----------
    test
        The test run.
    correction
        ``holm``, ``bonferroni`` or ``none``; ``None`` for ``max-t`` and
        ``tukey-hsd``, whose p-values are family-wise adjusted by construction.
    permutations
        Monte Carlo draws actually used (``None`` for ``t`` and for exact enumeration).
    exact
        All ``2**n`` sign vectors were enumerated.
    smallest_p
        Smallest adjusted p-value the configuration can produce (``None`` for ``t``).
    note
        What was changed from the request and why (``None``: nothing).
    warning
        Set when the smallest attainable adjusted p-value is not below
        ``alpha / 10``: the test can then reject only very clear differences,
        or none at all.
    """

    __test__ = False  # not a pytest class, despite its name

    test: SignificanceTest
    correction: str | None
    permutations: int | None
    exact: bool
    smallest_p: float | None
    note: str | None = None
    warning: str | None = None

    def describe(self) -> str:
        """One line naming the test, its draws and the correction (for legends)."""
        if self.test is SignificanceTest.t:
            return f"paired t-test, {self.correction} correction"
        if self.test is SignificanceTest.max_t:
            return (
                f"studentized step-down randomized Tukey HSD (max-T), {self.permutations:,} "
                "permutations (p-values family-wise adjusted over all pairs)"
            )
        if self.test is SignificanceTest.tukey_hsd:
            return (
                f"randomized Tukey HSD, {self.permutations:,} permutations "
                "(p-values family-wise adjusted over all pairs)"
            )
        draws = "exact enumeration" if self.exact else f"{self.permutations:,} sign flips"
        return f"paired randomization test, {draws}, {self.correction} correction"


def plan_test(
    test: str | None,
    correction: str | None,
    *,
    n_systems: int,
    n_queries: int,
    permutations: int,
    alpha: float,
) -> TestPlan:
    """Resolve the defaults and choose the number of draws of one comparison.

    Parameters
    ----------
    test
        ``randomization``, ``t``, ``tukey-hsd``, ``max-t``, or ``None`` for
        :func:`default_test`.
    correction
        ``holm``, ``bonferroni``, ``none``, or ``None`` (``holm``; nothing for
        ``max-t`` and ``tukey-hsd``, which refuse ``holm`` and ``bonferroni``).
    n_systems, n_queries
        Size of the score panel.
    permutations
        Requested number of draws ``B``: a minimum, raised when needed.
    alpha
        Significance level.

    Returns
    -------
    TestPlan

    Raises
    ------
    ScoringError
        Unknown test or correction, or a correction with ``max-t`` or ``tukey-hsd``.
    """
    chosen = resolve_test(test, n_systems)
    if permutations < 1:
        raise ScoringError(f"permutations must be at least 1, got {permutations}")
    if not 0.0 < alpha < 1.0:
        raise ScoringError(f"alpha must lie in (0, 1), got {alpha}")
    if chosen.family_wise:
        if correction not in (None, CorrectionName.none.value):
            raise ScoringError(
                f"correction {correction!r} does not apply to {chosen.value}: its p-values are "
                "adjusted over all pairs already; leave the correction out, or choose the "
                "randomization or t test"
            )
        return _monte_carlo_plan(chosen, None, 1, permutations, alpha, None)
    method = _correction(correction)
    if chosen is SignificanceTest.t:
        return TestPlan(chosen, method, None, False, None)
    n_pairs = n_systems * (n_systems - 1) // 2
    factor = 1 if method == CorrectionName.none.value else n_pairs
    return _monte_carlo_plan(chosen, method, factor, permutations, alpha, n_queries)


def resolve_test(test: str | None, n_systems: int) -> SignificanceTest:
    """The test called ``test``, or :func:`default_test` for ``n_systems`` when ``None``.

    Raises
    ------
    ScoringError
        Unknown name; the message lists the valid ones.
    """
    if test is None:
        return default_test(n_systems)
    try:
        return SignificanceTest(test)
    except ValueError:
        valid = ", ".join(t.value for t in SignificanceTest)
        raise ScoringError(f"unknown test {test!r}; valid tests: {valid}") from None


def _correction(correction: str | None) -> str:
    """The named correction (``holm`` when ``None``)."""
    if correction is None:
        return CorrectionName.holm.value
    try:
        return CorrectionName(correction).value
    except ValueError:
        valid = ", ".join(c.value for c in CorrectionName)
        raise ScoringError(
            f"unknown correction {correction!r}; valid corrections: {valid}"
        ) from None


def _monte_carlo_plan(
    test: SignificanceTest,
    correction: str | None,
    factor: int,
    requested: int,
    alpha: float,
    n_queries: int | None,
) -> TestPlan:
    """Draws for a smallest adjusted p-value ``factor / (B + 1)`` below ``alpha / 10``.

    ``n_queries`` is given when the sign vectors may be enumerated exactly instead.
    """
    target = alpha / RESOLUTION
    needed = math.floor(factor / target)
    while factor / (needed + 1) >= target:  # guard the float division at the boundary
        needed += 1
    family = _family(test, correction, factor)
    if (
        n_queries is not None
        and n_queries <= EXACT_MAX_QUERIES
        and 2**n_queries <= max(needed, requested)
    ):
        smallest = min(1.0, factor * 2.0 ** (1 - n_queries))
        enumerated = (
            f"{test.value}: all 2**{n_queries} sign vectors enumerated (exact p-values), "
            f"fewer than the {max(needed, requested):,} flips asked for or needed"
        )
        return TestPlan(
            test, correction, None, True, smallest, enumerated, _warning(smallest, alpha, family)
        )
    draws = min(max(needed, requested), max(requested, MAX_PERMUTATIONS))
    smallest = min(1.0, factor / (draws + 1))
    note: str | None = None
    if draws > requested:
        note = (
            f"{test.value}: {requested:,} permutations raised to {draws:,} so that the smallest "
            f"attainable {family} p-value ({smallest:.5g}) is below alpha/{RESOLUTION} "
            f"({target:g})"
        )
    warning = _warning(smallest, alpha, family)
    return TestPlan(test, correction, draws, False, smallest, note, warning)


def _family(test: SignificanceTest, correction: str | None, factor: int) -> str:
    """How the p-values are adjusted, in words."""
    if test is SignificanceTest.max_t:
        return "family-wise (max-T)"
    if test is SignificanceTest.tukey_hsd:
        return "family-wise (Tukey HSD)"
    if correction == CorrectionName.none.value:
        return "unadjusted"
    return f"{correction}-adjusted (over {factor:,} pairs)"


def _warning(smallest: float, alpha: float, family: str) -> str | None:
    """The warning of a configuration that can reject only very clear differences, or none."""
    if smallest < alpha / RESOLUTION:
        return None
    hint = (
        "use --test max-t (family-wise without a Bonferroni factor), more queries, or fewer systems"
    )
    if smallest >= alpha:
        return (
            f"no pair can be significant: the smallest attainable {family} p-value is "
            f"{smallest:.3g} >= alpha = {alpha:g}; {hint}"
        )
    return (
        f"the smallest attainable {family} p-value is {smallest:.3g}, not below "
        f"alpha/{RESOLUTION} = {alpha / RESOLUTION:g}: only the clearest differences can be "
        f"significant; {hint}"
    )
