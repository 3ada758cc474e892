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

A build with ``--margin`` (or without: then nothing is equivalent) records the
state of every tested tie decision's pair (:func:`with_pair_states`) next to
its ``tied`` / ``separated`` decision: ``tied`` keeps meaning "not shown to
differ", and the state says whether the pair is shown equivalent.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import numpy.typing as npt
import pandas as pd

from orlbuild.builders.arrays import FloatArray
from orlbuild.builders.parameters import check_number
from orlbuild.errors import ConfigError
from orlbuild.records import QueryORL
from orlbuild.vocabulary import PairState

__all__ = [
    "STATE_CODES",
    "check_margin",
    "pair_state_codes",
    "pair_states",
    "single_step_critical",
    "state_changes",
    "with_pair_states",
]

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
    try:
        value = float(margin)
    except (TypeError, ValueError):
        raise ConfigError(f"--margin must be a number > 0, got {margin!r}") from None
    check_number("margin", value)
    return value


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


def single_step_critical(critical: FloatArray | None) -> float | None:
    """The single-step max-t value of a query from its ``(n, n)`` critical values (the
    step-down's first and largest value); ``None`` when no pair was tested."""
    if critical is None:
        return None
    finite = critical[np.isfinite(critical)]
    return float(finite.max()) if len(finite) else None


def with_pair_states(
    orl: QueryORL,
    items: npt.NDArray[np.object_],
    critical: FloatArray | None,
    margin: float | None,
) -> QueryORL:
    """``orl`` with the state of every tested decision's pair (leader, item) recorded.

    Parameters
    ----------
    orl
        A built query (its decisions name the items of ``items``).
    items
        Item ids, aligned with ``critical``.
    critical
        ``(n, n)`` max-t critical values of the query (``None``: no test, e.g.
        ``--sig 0``; the decisions are returned unchanged).
    margin
        The build's equivalence margin, or ``None``.

    Returns
    -------
    QueryORL
        Decisions with a standard error (of the pair's difference) get ``state`` ``separated``,
        ``equivalent`` or ``undecided`` (:func:`pair_state_codes`, with the
        pair's critical value and the query's single-step value); decisions
        taken by a rule keep ``None``.
    """
    single = single_step_critical(critical)
    if critical is None or single is None:
        return orl
    position = {str(item): k for k, item in enumerate(items)}
    decisions = []
    for decision in orl.decisions:
        i, j = position.get(decision.leader), position.get(decision.item)
        if decision.se is None or i is None or j is None or i == j:
            decisions.append(decision)
            continue
        code = pair_state_codes(
            decision.score_leader - decision.score_item,
            decision.se,
            critical[i, j],
            single,
            margin,
        )
        decisions.append(replace(decision, state=STATE_CODES[int(code)].value))
    return replace(orl, decisions=decisions)


def _state_counts(decisions: pd.DataFrame) -> pd.DataFrame:
    """Query -> how many decisions are in each state (columns: the state words)."""
    words = [s.value for s in STATE_CODES]
    known = decisions[decisions["state"].isin(words)]
    counts = pd.crosstab(known["query"].astype(str), known["state"])
    return counts.reindex(columns=words, fill_value=0)


def state_changes(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Per query, the tested decisions of two builds by state, where they differ.

    Parameters
    ----------
    before, after
        Stored decisions of the two builds (columns ``query`` and ``state``;
        :func:`orlbuild.store.builds.load_tie_decisions`).

    Returns
    -------
    pandas.DataFrame
        ``query``, then ``separated``, ``equivalent``, ``undecided`` of
        ``before`` (suffix ``_a``) and of ``after`` (suffix ``_b``); only the
        queries whose counts differ, sorted by query.
    """
    words = [s.value for s in (PairState.separated, PairState.equivalent, PairState.undecided)]
    a = _state_counts(before)[words]
    b = _state_counts(after)[words]
    joined = a.add_suffix("_a").join(b.add_suffix("_b"), how="outer").fillna(0).astype("int64")
    differ = (
        joined[[f"{w}_a" for w in words]].to_numpy() != joined[[f"{w}_b" for w in words]].to_numpy()
    ).any(axis=1)
    out = joined[differ].sort_index().reset_index()
    return out.rename(columns={out.columns[0]: "query"})
