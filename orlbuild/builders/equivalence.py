"""Three-state pair decisions: separated, shown equivalent within a margin, or undecided.

A tie in an ORL means "not shown to differ". With a margin ``DELTA`` a tie can
also be *shown* (docs/planning.md, "Planning the next judgments"): the pair's
simultaneous interval ``d +- c * se`` lies inside ``(-DELTA, DELTA)``. That is
the two one-sided tests of ``d <= -DELTA`` and ``d >= DELTA`` run at the same
family-wise level as the separation tests: ``c`` is the query's single-step
max-t critical value, so every interval of the query covers its true
difference with probability at least ``1 - sig`` at once and a pair called
equivalent is wrongly called so with at most that error over the whole query.

* separated: ``|d| / se > c_ab`` (the build's critical value of the pair);
* equivalent: not separated and ``|d| + c * se < DELTA``;
* undecided: neither.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from orlbuild.builders.pairwise_data import FloatArray
from orlbuild.errors import ConfigError
from orlbuild.vocabulary import PairState

__all__ = ["STATE_CODES", "check_margin", "pair_state_codes", "pair_states"]

#: Integer code of each state in the vectorised functions (index into this tuple).
STATE_CODES: tuple[PairState, ...] = (
    PairState.undecided,
    PairState.separated,
    PairState.equivalent,
)
UNDECIDED, SEPARATED, EQUIVALENT = 0, 1, 2


def check_margin(margin: float | None) -> float | None:
    """``margin`` when it is ``None`` or a finite number > 0; else :class:`ConfigError`."""
    if margin is None:
        return None
    if not np.isfinite(margin) or margin <= 0:
        raise ConfigError(
            f"--margin must be a number > 0 (a log-strength difference), got {margin}"
        )
    return float(margin)


def pair_state_codes(
    diff: npt.ArrayLike,
    se: npt.ArrayLike,
    critical: npt.ArrayLike,
    single: npt.ArrayLike,
    margin: float | None,
) -> npt.NDArray[np.int8]:
    """Vectorised states (:data:`STATE_CODES`) of pairs with difference ``diff``.

    Parameters
    ----------
    diff
        Score differences ``s_a - s_b`` (any shape).
    se
        Their standard errors (same shape).
    critical
        The critical value each pair is separated with (the step-down value of
        the build, or the single-step ``c``); broadcast against ``diff``.
    single
        The single-step critical value of the query (the simultaneous
        intervals' width); broadcast against ``diff``.
    margin
        The equivalence margin ``DELTA``; ``None``: no pair is equivalent.

    Returns
    -------
    numpy.ndarray
        ``0`` undecided, ``1`` separated, ``2`` equivalent.

    Examples
    --------
    >>> pair_state_codes([2.0, 0.05, 0.4], [0.5, 0.05, 0.5], 3.0, 3.0, 0.25).tolist()
    [1, 2, 0]
    """
    d = np.abs(np.asarray(diff, dtype=np.float64))
    s = np.asarray(se, dtype=np.float64)
    crit = np.asarray(critical, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        separated = np.where(s > 0, d > crit * s, d > 0)
    codes = np.where(separated, SEPARATED, UNDECIDED).astype(np.int8)
    if margin is not None:
        equivalent = ~separated & (d + np.asarray(single, dtype=np.float64) * s < margin)
        codes[equivalent] = EQUIVALENT
    return codes


def pair_states(
    diff: FloatArray,
    se: FloatArray,
    critical: FloatArray | float,
    single: float,
    margin: float | None,
) -> list[PairState]:
    """:func:`pair_state_codes` as :class:`~orlbuild.vocabulary.PairState` words (1-d input)."""
    codes = pair_state_codes(diff, se, critical, single, margin)
    return [STATE_CODES[int(c)] for c in np.ravel(codes)]
