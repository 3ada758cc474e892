"""The score panel: per-query scores of several systems on one measure.

A panel is a float64 matrix of shape ``(n_queries, n_systems)`` (one row per
query, one column per system), the layout of a pandas DataFrame with one column
per system. Paired tests work on the per-query differences of every pair of
systems, an ``(n_queries, n_pairs)`` matrix whose columns follow
:func:`numpy.triu_indices` order: ``(0, 1), (0, 2), ..., (m-2, m-1)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.errors import ScoringError

__all__ = [
    "BoolMatrix",
    "FloatMatrix",
    "FloatVector",
    "IndexVector",
    "IntVector",
    "ScorePanel",
    "as_panel",
    "score_panels",
]

FloatMatrix: TypeAlias = npt.NDArray[np.float64]
FloatVector: TypeAlias = npt.NDArray[np.float64]
IndexVector: TypeAlias = npt.NDArray[np.intp]
IntVector: TypeAlias = npt.NDArray[np.int64]
BoolMatrix: TypeAlias = npt.NDArray[np.bool_]


@dataclass(frozen=True, eq=False)
class ScorePanel:
    """Per-query scores of ``m >= 2`` systems on the same ``n >= 1`` queries.

    Attributes
    ----------
    scores
        Float64 matrix, shape ``(n_queries, n_systems)``, all values finite.
    systems
        System names, one per column (unique).
    queries
        Query ids, one per row.
    """

    scores: FloatMatrix
    systems: tuple[str, ...]
    queries: tuple[str, ...]
    _pairs: tuple[IndexVector, IndexVector] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        scores = np.asarray(self.scores, dtype=np.float64)
        if scores.ndim != 2:
            raise ScoringError(f"score panel must be 2-D (queries x systems), not {scores.ndim}-D")
        n_queries, n_systems = scores.shape
        if n_systems < 2:
            raise ScoringError(f"comparing systems needs at least 2 systems, got {n_systems}")
        if n_queries < 1:
            raise ScoringError("a score panel needs at least one query shared by all systems")
        if len(self.systems) != n_systems or len(set(self.systems)) != n_systems:
            raise ScoringError(f"need {n_systems} unique system names, got {list(self.systems)}")
        if len(self.queries) != n_queries:
            raise ScoringError(f"need {n_queries} query ids, got {len(self.queries)}")
        bad = np.argwhere(~np.isfinite(scores))
        if bad.size:
            row, col = bad[0]
            raise ScoringError(
                f"score of system {self.systems[col]!r} on query {self.queries[row]!r} is "
                f"{scores[row, col]!r}; per-query scores must be finite (align the systems "
                "on shared queries first)"
            )
        object.__setattr__(self, "scores", scores)
        object.__setattr__(self, "_pairs", np.triu_indices(n_systems, k=1))

    @property
    def n_queries(self) -> int:
        """Number of queries (rows)."""
        return int(self.scores.shape[0])

    @property
    def n_systems(self) -> int:
        """Number of systems (columns)."""
        return int(self.scores.shape[1])

    @property
    def pair_index(self) -> tuple[IndexVector, IndexVector]:
        """Column indices ``(a, b)`` of every system pair, ``a < b``."""
        return self._pairs

    @property
    def pair_names(self) -> list[tuple[str, str]]:
        """System names ``(a, b)`` of every pair, in :attr:`pair_index` order."""
        first, second = self._pairs
        return [(self.systems[a], self.systems[b]) for a, b in zip(first, second, strict=True)]

    def canonical(self) -> ScorePanel:
        """The same panel with its systems and queries in sorted order.

        Every random draw of a test is made on this order, so that a p-value does
        not depend on the order in which systems or files were given
        (docs/comparing-systems.md, "Comparing many systems").

        Returns
        -------
        ScorePanel
            ``self`` when already sorted, else a reordered copy.
        """
        columns = sorted(range(self.n_systems), key=lambda i: str(self.systems[i]))
        rows = sorted(range(self.n_queries), key=lambda i: str(self.queries[i]))
        if columns == list(range(self.n_systems)) and rows == list(range(self.n_queries)):
            return self
        return ScorePanel(
            self.scores[np.ix_(rows, columns)],
            tuple(self.systems[i] for i in columns),
            tuple(self.queries[i] for i in rows),
        )

    def pair_differences(self) -> FloatMatrix:
        """Per-query differences ``score_a - score_b``, shape ``(n_queries, n_pairs)``."""
        first, second = self._pairs
        return self.scores[:, first] - self.scores[:, second]


def as_panel(
    scores: ScorePanel | pd.DataFrame | npt.ArrayLike,
    *,
    systems: Sequence[str] | None = None,
    queries: Sequence[str] | None = None,
) -> ScorePanel:
    """Build a :class:`ScorePanel` from a DataFrame or an array.

    Parameters
    ----------
    scores
        A DataFrame with one column per system and one row per query (the
        index holds the query ids), or an array of shape
        ``(n_queries, n_systems)``. An existing panel is returned unchanged.
    systems, queries
        Names for an array's columns and rows (default ``s0, s1, ...`` and
        ``q0, q1, ...``); ignored for a DataFrame.

    Returns
    -------
    ScorePanel
        The validated panel.

    Raises
    ------
    ScoringError
        Fewer than two systems, no query, duplicate system names or a
        non-finite score.
    """
    if isinstance(scores, ScorePanel):
        return scores
    if isinstance(scores, pd.DataFrame):
        return ScorePanel(
            scores=scores.to_numpy(dtype=np.float64),
            systems=tuple(str(c) for c in scores.columns),
            queries=tuple(str(q) for q in scores.index),
        )
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2:
        raise ScoringError(f"a score panel must be 2-D (queries x systems), got {matrix.ndim}-D")
    n_queries, n_systems = matrix.shape
    return ScorePanel(
        scores=matrix,
        systems=tuple(systems) if systems is not None else tuple(f"s{i}" for i in range(n_systems)),
        queries=tuple(queries) if queries is not None else tuple(f"q{i}" for i in range(n_queries)),
    )


def score_panels(
    per_system: Mapping[str, pd.DataFrame], measures: Sequence[str] | None = None
) -> dict[str, pd.DataFrame]:
    """Turn per-system evaluations into one panel per measure.

    Parameters
    ----------
    per_system
        System -> per-query scores (``per_query`` of :func:`scoring.evaluate_run`)
        (index: query, one column per measure).
    measures
        Measures to take (default: the columns of the first system's frame).

    Returns
    -------
    dict of str to pandas.DataFrame
        Measure -> DataFrame with one column per system (in ``per_system``
        order) and one row per query. Paired tests need a value of every system
        on every query, so only queries that all systems scored (``--missing
        skip`` can leave some out) and whose value is defined for all of them
        (rank correlations can be NaN) are kept, in the first system's order.
    """
    if not per_system:
        raise ScoringError("no system to compare")
    frames = list(per_system.values())
    chosen = list(measures) if measures is not None else [str(c) for c in frames[0].columns]
    panels = {}
    for measure in chosen:
        absent = [name for name, frame in per_system.items() if measure not in frame.columns]
        if absent:
            raise ScoringError(f"measure {measure!r} was not computed for {absent}")
        panel = pd.concat(
            {name: frame[measure] for name, frame in per_system.items()}, axis=1, join="inner"
        )
        panels[measure] = panel.dropna(how="any")
    return panels
