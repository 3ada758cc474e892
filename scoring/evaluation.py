"""Evaluating a run over many queries (docs/conventions.md, "Conventions and caveats").

:func:`evaluate_run` is the batch entry point: it parses all measure names at
once, aligns the run with the ORLs, lays both out as matrices once
(:func:`scoring.batch.prepare_batch`) and lets every measure reduce them.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeGuard, cast

import numpy as np

from scoring.batch import FlatRun, flatten_rankings, prepare_batch
from scoring.errors import ScoringError
from scoring.measures import Measure, parse_measures
from scoring.messages import first_and_more
from scoring.orl import ORL
from scoring.run import (
    DEFAULT_SCORE_PRECISION,
    CodedRuns,
    OrderBy,
    check_score_precision,
    flat_run_from_frame,
    flat_run_from_scores,
    flat_runs_from_codes,
)
from scoring.vocabulary import DuplicatePolicy, MissingPolicy, ScorePrecisionName

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "EvaluationResult",
    "QueryScores",
    "check_query_overlap",
    "conventions",
    "evaluate_run",
    "evaluate_runs",
    "measure_conventions",
]

TIE_BREAK = "score descending, ties by item id descending (trec_eval)"


_PRECISION_TEXT = {
    "float32": "float32: scores compared as 32-bit floats, equal in float32 = tie "
    "(trec_eval <= 9.0.8, pytrec_eval, ir_measures; official TREC results)",
    "float64": "float64: scores compared as 64-bit floats (trec_eval 10)",
}


def conventions(
    missing: MissingPolicy,
    order_by: str = "score",
    score_precision: ScorePrecisionName = DEFAULT_SCORE_PRECISION,
) -> dict[str, str]:
    """The conventions an evaluation used, for machine-readable output."""
    return {
        "missing": (
            "zero: ORL queries absent from the run score 0 (trec_eval -c); "
            "rank correlations are undefined (NaN) there"
            if missing == "zero"
            else "skip: averages over queries present in both the ORLs and the run"
        ),
        "run_order": TIE_BREAK if order_by == "score" else "rank column ascending",
        "score_precision": _PRECISION_TEXT[score_precision],
        "duplicates": "only the first occurrence of an item earns credit",
        "relevance": "an item is relevant iff it is in the ORL (with rel=N, trec_eval's -l N: "
        "iff its native grade, else its lc grade, is at least N)",
        "undefined": "Kendall tau / Spearman rho are NaN when undefined and left out of means",
    }


_GRADES_TEXT = {
    "native": "linear gain on the native grades (trec_eval's ndcg_cut)",
    "lc": "linear gain on the lc grades T - rank + 1, the grades of the qrels export "
    "(trec_eval's ndcg_cut on that export)",
    "auto": "linear gain on the native grades where the ORL has them, else on the lc grades",
}


def measure_conventions(spelled_out: Mapping[str, str]) -> dict[str, str]:
    """What the measures' names leave implicit: the grades and gain of each nDCG.

    Parameters
    ----------
    spelled_out
        Label -> full name (:attr:`EvaluationResult.spelled_out`).

    Returns
    -------
    dict
        ``{"ndcg": "nDCG@10 = nDCG(grade=native,gain=linear)@10: ..."}`` when an nDCG
        is among the measures, else empty.
    """
    parts = []
    for label, full in spelled_out.items():
        if not full.startswith("nDCG("):
            continue
        grade = full[len("nDCG(grade=") :].split(",", 1)[0]
        gain = full.split("gain=", 1)[1].split(")", 1)[0]
        text = _GRADES_TEXT.get(grade) if gain == "linear" else None
        parts.append(f"{label} = {full}" + (f": {text}" if text else ""))
    return {"ndcg": "; ".join(parts)} if parts else {}


@dataclass(frozen=True)
class QueryScores:
    """Per-query values as plain arrays: ``matrix[j, m]`` is ``measures[m]`` on ``queries[j]``.

    What :attr:`EvaluationResult.per_query` holds, without pandas (``orlbuild eval``
    prints its means without loading pandas; docs/performance.md, "Speed of
    `orlbuild eval`").
    """

    queries: list[Any]
    measures: list[str]
    matrix: np.ndarray  # (queries, measures), float64


@dataclass(frozen=True, eq=False, init=False)
class EvaluationResult:
    """A run scored against ORLs: the per-query values and what the scoring reported.

    Returned by :func:`evaluate_run` (docs/python-api.md, "Python API"); :meth:`to_frame`
    gives the per-query frame with the metadata in ``attrs``. The metadata lives in typed
    fields rather than in ``DataFrame.attrs``, which pandas drops on many
    operations.

    Parameters
    ----------
    per_query
        The per-query frame; or, instead, ``scores`` (keyword): the same values
        as arrays, made into the frame when :attr:`per_query` is first read.

    Attributes
    ----------
    per_query
        Index ``query`` (ORL order), one float column per measure.
    scores
        The same values as a :class:`QueryScores` (no pandas).
    conventions
        How missing queries, run order, duplicates and undefined values were
        handled (:func:`conventions`).
    warnings
        A partial query overlap, naming the ORL queries missing from the run.
    missing_queries
        ORL queries the run does not answer.
    queries_without_orl
        How many run queries have no ORL (ignored).
    ignored_queries
        Those run queries, in the run's order.
    spelled_out
        Measure label -> its full name as it evaluated these ORLs, which no
        change of a default can change (``nDCG@10`` ->
        ``nDCG(grade=native,gain=linear)@10``; what a saved score records).
    """

    conventions: dict[str, str]
    warnings: tuple[str, ...]
    missing_queries: tuple[str, ...]
    queries_without_orl: int
    ignored_queries: tuple[str, ...]
    spelled_out: dict[str, str]
    _frame: Any = field(repr=False)
    _columns: Mapping[str, np.ndarray] | None = field(repr=False)
    _scores: QueryScores | None = field(repr=False)

    def __init__(
        self,
        per_query: pd.DataFrame | None = None,
        conventions: dict[str, str] | None = None,
        warnings: tuple[str, ...] = (),
        missing_queries: tuple[str, ...] = (),
        queries_without_orl: int = 0,
        ignored_queries: tuple[str, ...] = (),
        *,
        scores: QueryScores | None = None,
        columns: Mapping[str, np.ndarray] | None = None,
        spelled_out: Mapping[str, str] | None = None,
    ) -> None:
        if (per_query is None) == (scores is None):
            raise TypeError("EvaluationResult needs per_query or scores, not both")
        put = object.__setattr__  # frozen
        put(self, "conventions", {} if conventions is None else conventions)
        put(self, "warnings", warnings)
        put(self, "missing_queries", missing_queries)
        put(self, "queries_without_orl", queries_without_orl)
        put(self, "ignored_queries", ignored_queries)
        put(self, "spelled_out", {} if spelled_out is None else dict(spelled_out))
        put(self, "_frame", per_query)
        put(self, "_columns", columns)
        put(self, "_scores", scores)

    @property
    def per_query(self) -> pd.DataFrame:
        """Index ``query`` (ORL order), one float column per measure."""
        if self._frame is None:
            import pandas as pd

            scores = self.scores
            columns = self._columns
            data = (
                dict(columns)
                if columns is not None
                else dict(zip(scores.measures, scores.matrix.T, strict=True))
            )
            frame = pd.DataFrame(
                data,
                index=pd.Index(scores.queries, name="query", dtype=object),
                columns=scores.measures,
            )
            object.__setattr__(self, "_frame", frame)
        return cast("pd.DataFrame", self._frame)

    @property
    def scores(self) -> QueryScores:
        """The per-query values as arrays (:class:`QueryScores`), read without pandas."""
        if self._scores is None:
            frame = self._frame
            scores = QueryScores(
                frame.index.tolist(),
                [str(c) for c in frame.columns],
                frame.to_numpy(dtype=float),
            )
            object.__setattr__(self, "_scores", scores)
        return cast(QueryScores, self._scores)

    @property
    def measures(self) -> list[str]:
        """The measure names, in column order."""
        return list(self.scores.measures)

    def to_frame(self) -> pd.DataFrame:
        """The per-query frame with the metadata copied into ``frame.attrs``.

        ``attrs`` holds ``conventions``, ``queries_without_orl``,
        ``missing_queries`` (a list) and ``warnings`` (a list).
        """
        frame = self.per_query.copy()
        frame.attrs["conventions"] = dict(self.conventions)
        frame.attrs["queries_without_orl"] = self.queries_without_orl
        frame.attrs["missing_queries"] = list(self.missing_queries)
        frame.attrs["warnings"] = list(self.warnings)
        return frame


def _as_orl(query: str, value: Any) -> ORL:
    if isinstance(value, ORL):
        return value
    if isinstance(value, Mapping):
        try:
            return ORL(value)
        except ScoringError as exc:
            raise ScoringError(f"query {query!r}: {exc}") from None
    raise ScoringError(f"query {query!r}: expected an ORL or an item -> rank mapping")


def _is_frame(run: object) -> bool:
    """Whether ``run`` is a DataFrame (without importing pandas: none exists before it is)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(run, pandas.DataFrame)


def _is_scored(run: Mapping[str, Any]) -> TypeGuard[Mapping[str, Mapping[str, float]]]:
    """Whether a run maps queries to ``{item: score}`` (pytrec_eval's shape), not to lists."""
    first = next(iter(run.values()), None)
    return isinstance(first, Mapping)


def _aligned(run: FlatRun, queries: Sequence[str], depth: int) -> FlatRun:
    """Reorder a flat run to follow ``queries`` (empty lists where absent), truncated."""
    index = {q: j for j, q in enumerate(run.queries.tolist())}
    where = np.fromiter((index.get(q, -1) for q in queries), dtype=np.int64, count=len(queries))
    present = where >= 0
    at = np.where(present, where, 0)
    starts = run.offsets[at]
    ends = run.offsets[np.minimum(at + 1, len(run.offsets) - 1)]  # a run without queries
    lengths = np.where(present, np.minimum(ends - starts, depth), 0)
    offsets = np.zeros(len(queries) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    take = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1], dtype=np.int64)
    qarr = np.empty(len(queries), dtype=object)
    qarr[:] = list(queries)
    if run.codes is not None and run.table is not None:  # items made from the codes if read
        return FlatRun(qarr, offsets, codes=run.codes[take], table=run.table)
    return FlatRun(qarr, offsets, run.items[take])


def check_query_overlap(orl_queries: Sequence[str], run_queries: Sequence[str]) -> list[str]:
    """Check that a run shares queries with the ORLs (docs/evaluating-files.md, "Evaluating files").

    Parameters
    ----------
    orl_queries, run_queries
        Query ids of each side, in their order.

    Returns
    -------
    list of str
        Warnings: one naming the ORL queries missing from the run when the
        overlap is partial; empty otherwise.

    Raises
    ------
    ScoringError
        When both sides hold queries but share none, showing a few ids from each side
        (e.g. ``Q01`` in the run, ``q01`` in the ORLs).
    """
    in_run = set(run_queries)
    shared = [q for q in orl_queries if q in in_run]
    if not shared and orl_queries and run_queries:
        raise ScoringError(
            "the run and the ORLs share no query: run queries "
            f"{first_and_more(list(run_queries))}; ORL queries "
            f"{first_and_more(list(orl_queries))} (ids are compared exactly, "
            "case included)"
        )
    absent = [q for q in orl_queries if q not in in_run]
    if not absent or not shared:
        return []
    return [
        f"{len(absent)} of {len(orl_queries)} ORL queries are missing from the run: "
        f"{first_and_more(absent)}"
    ]


def evaluate_run(
    orls: Mapping[str, ORL | Mapping[str, int]],
    run: Mapping[str, Sequence[str]] | Mapping[str, Mapping[str, float]] | pd.DataFrame,
    measures: Iterable[str | Measure],
    *,
    missing: MissingPolicy = MissingPolicy.zero,
    order_by: OrderBy | None = None,
    duplicates: DuplicatePolicy = DuplicatePolicy.error,
    score_precision: ScorePrecisionName = DEFAULT_SCORE_PRECISION,
) -> EvaluationResult:
    """Score a run against ORLs: one row per ORL query, one column per measure.

    Parameters
    ----------
    orls
        Query -> :class:`~scoring.ORL` (or a plain item -> rank mapping).
    run
        Query -> candidate list best first; or query -> ``{item: score}``
        (pytrec_eval's shape); or a DataFrame with columns ``query, item,
        score`` or ``query, item, rank``. Scored runs are ordered by the rules
        of docs/evaluating-files.md, "Score precision" (score descending, ties by item id
        descending).
    measures
        Measure names (``"RDQm2-a1@10"``, ``"nDCG@10"``, ...) or
        :class:`~scoring.measures.Measure` objects; all bad names are reported
        together.
    missing
        ``"zero"``: ORL queries absent from the run score 0 (rank correlations
        NaN); ``"skip"``: such queries are dropped.
    order_by, duplicates
        For a DataFrame run: order by ``"score"`` (default when present) or
        ``"rank"``; a repeated (query, item) is an ``"error"`` (default) or
        ``"keep-first"``.
    score_precision
        Scored runs: compare scores as ``"float32"`` (default; trec_eval <=
        9.0.8, pytrec_eval, official TREC results: scores equal in float32
        tie and are ordered by item id) or ``"float64"`` (trec_eval 10).

    Returns
    -------
    EvaluationResult
        ``per_query``: index ``query`` (ORL order), one float column per
        measure, named by the strings passed in; with the conventions, the
        overlap warnings, the missing queries and how many run queries had
        no ORL.

    Raises
    ------
    ScoringError
        Bad measure names, bad options, or a run sharing no query with the
        ORLs (see :func:`check_query_overlap`).

    Examples
    --------
    >>> from scoring import ORL, evaluate_run
    >>> orls = {"q1": ORL({"d1": 1, "d2": 2})}
    >>> result = evaluate_run(orls, {"q1": ["d3"], "q2": ["d1"]}, ["RDQm2-a1@5"])
    >>> float(result.per_query.loc["q1", "RDQm2-a1@5"]), result.queries_without_orl
    (0.0, 1)
    """
    setup = _Setup.of(orls, measures, missing, score_precision)
    if not _is_frame(run) and _is_scored(cast(Mapping[str, Any], run)):
        scored = cast(Mapping[str, Mapping[str, float]], run)
        flat = flat_run_from_scores(scored, depth=setup.bound, score_precision=setup.precision)
    elif _is_frame(run):
        flat = flat_run_from_frame(
            cast("pd.DataFrame", run),
            order_by=order_by,
            duplicates=duplicates,
            depth=setup.bound,
            score_precision=setup.precision,
        )
    else:
        flat = flatten_rankings(cast(Mapping[str, Sequence[str]], run), depth=setup.bound)
    part = setup.part(flat)
    data = prepare_batch(part.orls, part.queries, part.flat, part.depth)
    values = {label: m.batch(data) for label, m in zip(setup.labels, setup.parsed, strict=True)}
    return part.result(setup, values, order_by or "score")


def evaluate_runs(
    orls: Mapping[str, ORL | Mapping[str, int]],
    runs: Sequence[pd.DataFrame] | CodedRuns,
    measures: Iterable[str | Measure],
    *,
    missing: MissingPolicy = MissingPolicy.zero,
    score_precision: ScorePrecisionName = DEFAULT_SCORE_PRECISION,
) -> list[EvaluationResult]:
    """:func:`evaluate_run` of several run tables against the same ORLs, scored together.

    Each run is ordered on its own; then the runs whose lists need the same
    depth are laid out as one batch (one row per run and query), so the
    ORL side and every measure are computed once for all of them instead of
    once per run. Each result equals :func:`evaluate_run` of that run alone,
    up to the last bit of a value (a matrix product may round a row
    differently when the matrix holds more rows).

    Parameters
    ----------
    orls, measures, missing, score_precision
        As in :func:`evaluate_run`.
    runs
        Run tables (columns ``query, item`` and ``score`` or ``rank``), each
        (query, item) once; or scored runs as :class:`~scoring.run.CodedRuns`,
        all ordered in one sort (:func:`~scoring.run.flat_runs_from_codes`).

    Returns
    -------
    list of EvaluationResult
        One per run, in order.

    Raises
    ------
    ScoringError
        As :func:`evaluate_run`, for the first run that fails (the message
        does not say which: call :func:`evaluate_run` to find it).
    """
    setup = _Setup.of(orls, measures, missing, score_precision)
    if isinstance(runs, CodedRuns):
        flats = flat_runs_from_codes(runs, depth=setup.bound, score_precision=setup.precision)
    else:
        flats = [
            flat_run_from_frame(run, depth=setup.bound, score_precision=setup.precision)
            for run in runs
        ]
    parts = [setup.part(flat) for flat in flats]
    results: list[EvaluationResult | None] = [None] * len(parts)
    for depth in sorted({part.depth for part in parts}):
        group = [i for i, part in enumerate(parts) if part.depth == depth]
        rows = [len(parts[i].queries) for i in group]
        data = prepare_batch(
            [orl for i in group for orl in parts[i].orls],
            [query for i in group for query in parts[i].queries],
            _stacked([parts[i].flat for i in group]),
            depth,
        )
        values = {label: m.batch(data) for label, m in zip(setup.labels, setup.parsed, strict=True)}
        bounds = np.cumsum([0, *rows]).tolist()
        for k, i in enumerate(group):
            lo, hi = bounds[k], bounds[k + 1]
            mine = {label: column[lo:hi] for label, column in values.items()}
            results[i] = parts[i].result(setup, mine, "score")
    return [result for result in results if result is not None]


def _stacked(flats: Sequence[FlatRun]) -> FlatRun:
    """Candidate lists one after the other, as one flat run."""
    if not flats:
        return FlatRun(np.empty(0, dtype=object), np.zeros(1, dtype=np.int64), np.empty(0, object))
    if len(flats) == 1:
        return flats[0]  # one run (FlatRun is frozen): no copy of its items
    sizes = [len(f.items) if f.codes is None else len(f.codes) for f in flats]  # ids unmade
    starts = np.cumsum([0, *sizes[:-1]])
    offsets = np.concatenate(
        [flats[0].offsets[:1]]
        + [f.offsets[1:] + start for f, start in zip(flats, starts, strict=True)]
    ).astype(np.int64)
    queries = np.concatenate([f.queries for f in flats])
    table = flats[0].table
    if table is None or any(f.codes is None or f.table is not table for f in flats):
        return FlatRun(queries, offsets, np.concatenate([f.items for f in flats]))
    codes = np.concatenate([f.codes for f in flats if f.codes is not None])
    return FlatRun(queries, offsets, codes=codes, table=table)


@dataclass(frozen=True)
class _Setup:
    """What scoring any run against ``orls`` with ``measures`` needs, checked once."""

    queries: list[str]
    orls: list[ORL]
    labels: list[str]
    parsed: list[Measure]
    bound: int | None
    missing: MissingPolicy
    precision: ScorePrecisionName

    @classmethod
    def of(
        cls,
        orls: Mapping[str, ORL | Mapping[str, int]],
        measures: Iterable[str | Measure],
        missing: str,
        score_precision: str,
    ) -> _Setup:
        if missing not in {m.value for m in MissingPolicy}:
            raise ScoringError(f"missing must be 'zero' or 'skip', got {missing!r}")
        names = list(measures)
        parsed = parse_measures(names)
        labels = [n if isinstance(n, str) else str(n) for n in names]
        if len(set(labels)) != len(labels):
            raise ScoringError(f"a measure is listed twice: {labels}")
        # With every measure cut off, nothing below the deepest cutoff is ever read.
        cutoffs = [m.cutoff for m in parsed if m.cutoff is not None]
        bound = max(cutoffs) if cutoffs and len(cutoffs) == len(parsed) else None
        return cls(
            queries=[str(q) for q in orls],
            orls=[_as_orl(q, orls[q]) for q in orls],
            labels=labels,
            parsed=parsed,
            bound=bound,
            missing=MissingPolicy(missing),
            precision=check_score_precision(score_precision),
        )

    def part(self, flat: FlatRun) -> _Part:
        """One run's rows: its overlap with the ORLs checked, aligned with them."""
        queries, orl_list = self.queries, self.orls
        run_queries = flat.queries.tolist()
        warnings = check_query_overlap(queries, run_queries)
        present = set(run_queries)
        with_orl = set(queries)
        ignored = tuple(dict.fromkeys(q for q in run_queries if q not in with_orl))
        missing_queries = [q for q in queries if q not in present]
        if self.missing == "skip":
            keep = [i for i, q in enumerate(queries) if q in present]
            queries, orl_list = [queries[i] for i in keep], [orl_list[i] for i in keep]
        longest = int(np.diff(flat.offsets).max(initial=0))
        largest = max((len(o) for o in orl_list), default=0)
        depth = max((m.depth(longest, largest) for m in self.parsed), default=1)
        return _Part(
            queries,
            orl_list,
            _aligned(flat, queries, depth),
            depth,
            tuple(warnings),
            tuple(missing_queries),
            ignored,
        )


@dataclass(frozen=True)
class _Part:
    """One run, aligned with the ORL queries it is scored on."""

    queries: list[str]
    orls: list[ORL]
    flat: FlatRun
    depth: int
    warnings: tuple[str, ...]
    missing_queries: tuple[str, ...]
    ignored_queries: tuple[str, ...]

    def result(
        self, setup: _Setup, values: Mapping[str, np.ndarray], order_by: str
    ) -> EvaluationResult:
        labels = list(setup.labels)
        columns = {label: values[label] for label in labels}
        # Measures x queries, seen transposed: the layout of the frame's ``to_numpy()``,
        # so that a mean along queries adds in the same order (the same bits).
        matrix = np.empty((len(labels), len(self.queries)), dtype=np.float64)
        for row, label in zip(matrix, labels, strict=True):
            row[:] = columns[label]
        full = {
            label: measure.resolved(self.orls).spelled_out()
            for label, measure in zip(labels, setup.parsed, strict=True)
        }
        stated = conventions(setup.missing, order_by, setup.precision)
        stated.update(measure_conventions(full))
        return EvaluationResult(
            scores=QueryScores(list(self.queries), labels, matrix.T),
            columns=columns,
            conventions=stated,
            spelled_out=full,
            warnings=self.warnings,
            missing_queries=self.missing_queries,
            queries_without_orl=len(self.ignored_queries),
            ignored_queries=self.ignored_queries,
        )
