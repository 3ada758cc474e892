"""Build the ORLs of every query of a data set (the library entry point of ``orlbuild build``).

Inputs are DataFrames shaped like the store's read API returns them:

* pairwise: ``query, annotator, winner, loser, tie`` and optionally ``count``
  (a positive integer: the outcome happened that many times; absent = 1);
* listwise: ``query, annotator, item, rank``;
* graded: ``query, annotator, item, grade``.

Each query gets its own random generator, seeded with ``(seed, crc32(query))``,
so a query's estimates do not depend on which other queries are in the build.

A build of scored queries has two passes: every query is estimated (in
parallel with a mapper), then the empirical-Bayes prior is fitted over all of
them and the posterior pass tiers the ``posterior`` queries and scores every
query's stated orders (:mod:`orlbuild.builders.tiering.posterior_pass`). So a
``posterior`` query's tiers depend on the build's other queries through the
prior, (lambda, tau), which is stored with the build.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pandas as pd
from threadpoolctl import threadpool_limits

from orlbuild.builders.pairwise_data import (
    PairwiseComparisons,
    factorize_ids,
    pair_arrays,
    query_blocks,
    row_counts,
)
from orlbuild.builders.parameters import BuildParameters, check_source, resolve_parameters
from orlbuild.errors import BuildError, ConfigError
from orlbuild.records import (
    BuildOutcome,
    EstimationError,
    QueryBuildError,
    QueryFailure,
    QueryORL,
)
from orlbuild.vocabulary import OnError, values
from scoring.messages import first_and_more

if TYPE_CHECKING:
    from orlbuild.builders.estimation.crowd_bt import ReliabilityFit

__all__ = [
    "ESTIMATOR_MODULES",
    "REQUIRED_COLUMNS",
    "build_orls",
    "pairwise_query_comparisons",
    "query_rng",
    "resolve_for_frame",
]

REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "pairwise": ("query", "winner", "loser"),
    "listwise": ("query", "item", "rank"),
    "graded": ("query", "item", "grade"),
}

QueryBuilder = Callable[[str, np.random.Generator], QueryORL]

#: The estimators of each source (SciPy, choix or networkx on demand: more than half of a build's
#: imports) are imported by the per-query functions below, where the work runs, so that
#: a process that only slices the judgments and sends them to a cluster does not import
#: them; a local pool imports them here before it forks its workers (docs/parallel.md,
#: "Running on many cores or a cluster").
ESTIMATOR_MODULES: dict[str, tuple[str, ...]] = {
    "pairwise": ("orlbuild.builders.pairwise",),
    "listwise": ("orlbuild.builders.listwise",),
    "graded": ("orlbuild.builders.graded",),
}

#: How the per-query work is mapped: ``map``-like, results in task order. The
#: services layer passes its executor here (``--jobs``, ``--scheduler``), so
#: this module stays free of process pools and clusters.
QueryTask = tuple[str, QueryBuilder]
QueryMapper = Callable[
    [Callable[[QueryTask], "QueryORL | QueryFailure"], Iterable[QueryTask]],
    Iterable["QueryORL | QueryFailure"],
]


def query_rng(seed: int, query: str) -> np.random.Generator:
    """The random generator of one query in a build with ``seed``."""
    return np.random.default_rng([seed, zlib.crc32(query.encode("utf-8"))])


def _check_frame(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    check_source(source)
    missing = [c for c in REQUIRED_COLUMNS[source] if c not in frame.columns]
    if missing:
        raise BuildError(f"{source} judgments lack column(s) {', '.join(missing)}")
    if frame.empty:
        raise BuildError(f"there are no {source} judgments to build from")
    frame = frame.copy()
    if "annotator" not in frame.columns:
        frame["annotator"] = "_"
    frame["annotator"] = frame["annotator"].fillna("_").astype(str)
    if source == "pairwise" and "count" in frame.columns:
        frame = _checked_counts(frame)
    # A canonical row order makes resampling (and so the build) independent of
    # the order the store returned the rows in.
    keys = ["query", "annotator", *REQUIRED_COLUMNS[source][1:]]
    if "tie" in frame.columns:
        keys.append("tie")
    return frame.sort_values(keys, kind="stable", ignore_index=True)


def _checked_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows with ``count = 0`` carry no outcome and are dropped; a count must be a
    non-negative integer (docs/tiers-and-audit.md, "Build routes")."""
    counts = pd.to_numeric(frame["count"].fillna(1), errors="coerce")
    bad = counts.isna() | (counts < 0) | (counts != counts.round())
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise BuildError(
            f"pairwise judgments: count must be a non-negative integer, got "
            f"{frame['count'].iloc[row]!r} (query {frame['query'].iloc[row]!r})"
        )
    frame["count"] = counts.astype(np.int64)
    return frame[frame["count"] > 0]


def resolve_for_frame(frame: pd.DataFrame, params: BuildParameters) -> BuildParameters:
    """Resolve ``params`` against the data (listwise: ``direct`` iff one list per query).

    Raises
    ------
    ConfigError
        Invalid options, or ``direct`` asked for queries with several lists
        (the message names them).
    """
    single = None
    if params.source == "listwise" and "annotator" in frame.columns:
        lists = frame.groupby("query", sort=True)["annotator"].nunique()
        several = lists[lists > 1]
        single = several.empty
        if params.method == "direct" and not several.empty:
            shown = first_and_more(several.index, 10)
            raise ConfigError(
                f"--method direct needs one list per query, but {shown} have several; "
                "use --method bt, plackett-luce or borda"
            )
    return resolve_parameters(params, single_list_per_query=single)


def _graded(
    built: QueryORL | QueryBuildError, query: str, rng: np.random.Generator | None
) -> QueryORL:
    """A graded query's ORL, made beforehand for every query (or its error, raised here)."""
    if isinstance(built, QueryBuildError):
        raise built
    return built


def _listwise(
    part: pd.DataFrame, params: BuildParameters, query: str, rng: np.random.Generator
) -> QueryORL:
    from orlbuild.builders.listwise import listwise_query_orl

    return listwise_query_orl(query, part, params, rng)


def _pairwise(
    comps: PairwiseComparisons,
    params: BuildParameters,
    reliabilities: ReliabilityFit | None,
    query: str,
    rng: np.random.Generator,
) -> QueryORL:
    from orlbuild.builders.pairwise import pairwise_query_orl

    return pairwise_query_orl(query, comps, params, rng, reliabilities)


def pairwise_query_comparisons(frame: pd.DataFrame) -> Iterator[tuple[str, PairwiseComparisons]]:
    """``(query, comparisons)`` of every query of a checked pairwise frame, in query order.

    The item and annotator ids are indexed within their queries in one
    vectorised pass over the whole frame (:func:`_ranks_within`): a query's
    local indices are the ranks of its ids in sorted string order, which is
    what :func:`~orlbuild.builders.pairwise_data.comparisons_from_arrays`
    computes from each query's own strings, without converting and searching
    strings query by query. Slicing 500 queries of 200 comparisons took
    0.3 s of CPU that way, on the one process that also reads the store and
    writes the build (docs/parallel.md).
    """
    winners, losers, ties, annotators = pair_arrays(frame)
    counts = row_counts(frame)
    n_rows = len(winners)
    query_codes, _ = pd.factorize(frame["query"].astype(str), sort=True)
    query_codes = query_codes.astype(np.int64)
    item_codes, item_names = _sorted_codes(
        pd.concat([frame["winner"], frame["loser"]], ignore_index=True),
        np.concatenate([winners, losers]),
    )
    annotator_codes, annotator_names = _sorted_codes(frame["annotator"], annotators)
    item_index, items, item_bounds = _ranks_within(
        np.concatenate([query_codes, query_codes]), item_codes, item_names
    )
    annotator_index, used, annotator_bounds = _ranks_within(
        query_codes, annotator_codes, annotator_names
    )
    for position, (query, block) in enumerate(query_blocks(frame["query"])):
        tie = ties[block]
        winner = item_index[block]
        loser = item_index[n_rows + block]
        annotator = annotator_index[block]
        units = np.arange(len(block), dtype=np.int64)
        has_ties = bool(tie.any())
        half = np.where(tie, 0.5, 1.0)
        yield (
            query,
            PairwiseComparisons(
                items=items[item_bounds[position] : item_bounds[position + 1]],
                winners=np.concatenate([winner, loser[tie]]),
                losers=np.concatenate([loser, winner[tie]]),
                units=np.concatenate([units, units[tie]]),
                annotators=np.concatenate([annotator, annotator[tie]]),
                annotator_names=used[annotator_bounds[position] : annotator_bounds[position + 1]],
                weights=np.concatenate([half, half[tie]]) if has_ties else None,
                unit_sizes=None if counts is None else counts[block],
                ties=np.concatenate([tie, tie[tie]]) if has_ties else None,
            ),
        )


def _sorted_codes(
    column: pd.Series, values: npt.NDArray[np.object_]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.object_]]:
    """:func:`factorize_ids` of ``values`` (``column``'s), by hashing the column's strings
    and sorting only the distinct ones; ``factorize_ids`` itself when an id is missing."""
    codes, names = pd.factorize(column, sort=True)
    if len(codes) and (codes.min() < 0 or not all(isinstance(n, str) for n in names)):
        return factorize_ids(values)  # missing or non-string ids: as their str()
    return codes.astype(np.int64), np.asarray(names, dtype=object)


def _ranks_within(
    groups: npt.NDArray[np.int64], codes: npt.NDArray[np.int64], names: npt.NDArray[np.object_]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.object_], npt.NDArray[np.int64]]:
    """Index sorted codes within their groups, for every group at once.

    ``codes`` number ``names`` in sorted order (:func:`factorize_ids`), and
    ``groups`` are the sorted query codes ``0..Q-1``, every one present.

    Returns
    -------
    index
        The rank of each entry's code among the distinct codes of its group:
        the local index
        :func:`~orlbuild.builders.pairwise_data.comparisons_from_arrays` gives
        it from the group's own strings (tested identical,
        tests/services/test_parallel_build.py).
    local_names
        The distinct names of every group, group after group, each sorted.
    bounds
        Group ``g``'s names are ``local_names[bounds[g]:bounds[g + 1]]``.
    """
    keys = groups * max(1, len(names)) + codes
    unique, inverse = np.unique(keys, return_inverse=True)
    owner = unique // max(1, len(names))
    bounds = np.searchsorted(owner, np.arange(int(owner[-1]) + 2 if len(owner) else 1))
    rank = np.arange(len(unique), dtype=np.int64) - bounds[owner]
    return rank[inverse.reshape(-1)], names[unique % max(1, len(names))], bounds.astype(np.int64)


def _query_builders(
    frame: pd.DataFrame,
    params: BuildParameters,
    reliabilities: tuple[list[tuple[str, PairwiseComparisons]], ReliabilityFit] | None = None,
) -> Iterator[tuple[str, QueryBuilder]]:
    """One closure per query that builds its ORL from the right slice of data."""
    if params.source == "graded":
        from orlbuild.builders.graded import aggregate_grades, graded_orls

        grades = aggregate_grades(frame, str(params.grade_agg))
        for query, built in graded_orls(grades):  # sorted once for every query
            yield query, partial(_graded, built)
    elif params.source == "listwise":
        for query, block in query_blocks(frame["query"]):
            part = frame.iloc[block]
            yield query, partial(_listwise, part, params)
    elif reliabilities is not None:
        for query, comps in reliabilities[0]:
            yield query, partial(_pairwise, comps, params, reliabilities[1])
    else:
        for query, comps in pairwise_query_comparisons(frame):
            yield query, partial(_pairwise, comps, params, None)


class _QueryTasks:
    """The per-query tasks of a build, drawn lazily, with their number known up front.

    A mapper that sees the length can cut chunks before the tasks exist, so
    workers start on the first queries while this process slices the next.
    """

    def __init__(self, tasks: Iterator[QueryTask], n_queries: int) -> None:
        self._tasks = tasks
        self._n_queries = n_queries

    def __len__(self) -> int:
        return self._n_queries

    def __iter__(self) -> Iterator[QueryTask]:
        return self._tasks


def _build_query(seed: int, task: QueryTask) -> QueryORL | QueryFailure:
    """Build one query's ORL with its own generator; a query-level failure is returned."""
    query, build_query = task
    try:
        return build_query(query, query_rng(seed, query))
    except QueryBuildError as exc:
        return QueryFailure(query, exc.cause)


def _build_graded_query(task: QueryTask) -> QueryORL | QueryFailure:
    """:func:`_build_query` of a graded query: grades draw nothing, so no generator is made
    (seeding one per query was 20 of 54 s of a million-query build, docs/performance.md)."""
    query, build_query = task
    try:
        return build_query(query, None)  # type: ignore[arg-type]
    except QueryBuildError as exc:
        return QueryFailure(query, exc.cause)


def build_orls(
    frame: pd.DataFrame,
    params: BuildParameters,
    *,
    on_error: OnError | str = OnError.stop,
    advance: Callable[[int], None] | None = None,
    mapper: QueryMapper | None = None,
) -> tuple[BuildParameters, BuildOutcome]:
    """Build one ORL per query.

    Parameters
    ----------
    frame
        Judgments of ``params.source`` (columns in :data:`REQUIRED_COLUMNS`,
        plus ``annotator`` and, for pairwise, ``tie``).
    params
        Build options; defaults are resolved against the data first.
    on_error
        An :class:`~orlbuild.vocabulary.OnError` word. ``"stop"``
        (default): any failing query makes the whole build fail with a
        :class:`~orlbuild.errors.BuildError` listing every failed query and
        its cause; ``"skip"``: build the rest and list the failures.
    advance
        Called with 1 after each query (progress bar). With a ``mapper`` the
        mapper reports progress instead.
    mapper
        Runs the per-query work, ``map``-like with results in query order (for
        example :func:`orlbuild.executor.map_ordered` bound to an
        executor). Each query gets its own generator from ``(seed, query)``,
        so the ORLs are identical for any mapper. Default: a plain loop.

    Returns
    -------
    params : BuildParameters
        The resolved parameters (store these with the build).
    outcome : BuildOutcome
        ORLs by query, failures, warnings.

    Raises
    ------
    BuildError
        With ``on_error="stop"`` when a query fails (a
        :class:`~orlbuild.records.QueryBuildError` when only one did).
    ConfigError
        Invalid options.
    """
    try:
        policy = OnError(on_error)
    except ValueError:
        allowed = " or ".join(values(OnError))
        raise ConfigError(f"--on-error must be {allowed}, got {on_error!r}") from None
    frame = _check_frame(frame, params.source)
    resolved = resolve_for_frame(frame, params)
    seed = int(resolved.seed or 0)
    outcome = BuildOutcome(orls={})
    fitted = None
    if resolved.annotators == "reliability":
        # the reliabilities are shared by every query: fitted once, before the queries
        from orlbuild.builders.estimation.crowd_bt import fit_reliabilities

        queries = list(pairwise_query_comparisons(frame))
        try:
            fit = fit_reliabilities(queries, reg=resolved.reg)
        except EstimationError as exc:
            raise BuildError(f"--annotators reliability: {exc}") from exc
        fitted = (queries, fit)
    # Lazy: a serial build holds one query's slice, a parallel one sends chunks as they are cut.
    tasks = _QueryTasks(_query_builders(frame, resolved, fitted), int(frame["query"].nunique()))
    work = _build_graded_query if resolved.source == "graded" else partial(_build_query, seed)
    # Per-query linear algebra is on matrices of a few dozen rows (or the
    # max-t product of a few thousand draws): BLAS threads only add
    # synchronisation there, which made the simultaneous tiering 5 times slower
    # on a loaded machine. (Every chunk a worker runs is limited to one BLAS
    # thread by the executor, wherever it runs.)
    with threadpool_limits(limits=1, user_api="blas"):
        if mapper is None:
            results: Iterable[QueryORL | QueryFailure] = map(work, tasks)
        else:
            results = mapper(work, tasks)
            advance = None
        for result in results:
            if isinstance(result, QueryFailure):
                outcome.failures.append(result)
            else:
                outcome.orls[result.query] = result
                # the unbacked orders are fields, summed below into one line per build
                outcome.warnings += [f"query {result.query!r}: {w}" for w in result.warnings]
            if advance is not None:
                advance(1)
        # the prior's fit needs SciPy: imported here, so a coordinator that only sends chunks
        # leaves it to the workers (tests/services/test_executor.py)
        from orlbuild.builders.tiering.posterior_pass import apply_posterior, fit_build_prior

        prior = fit_build_prior(outcome.orls.values())
        if prior is not None:
            outcome.orls = apply_posterior(outcome.orls, resolved, prior)
            outcome.prior_lambda, outcome.prior_tau = prior.lam, prior.tau
    if fitted is not None:
        from orlbuild.builders.audit.leave_one_out import leave_one_annotator_out

        with threadpool_limits(limits=1, user_api="blas"):
            outcome.reliabilities = leave_one_annotator_out(
                fitted[0],
                resolved,
                fitted[1],
                outcome.orls,
                partial(query_rng, seed),
                prior=prior,
            )
    if outcome.failures and policy is OnError.stop:
        first = outcome.failures[0]
        if len(outcome.failures) == 1:
            raise QueryBuildError(first.query, first.cause)
        listed = first_and_more(
            (f"query {f.query!r}: {f.cause}" for f in outcome.failures), quote=False, sep="; "
        )
        raise BuildError(
            f"{len(outcome.failures)} queries failed: {listed}; "
            "nothing was stored (use --on-error skip to build the others)"
        )
    outcome.warnings += [f"query {f.query!r} skipped: {f.cause}" for f in outcome.failures]
    stated = sum(o.stated_orders or 0 for o in outcome.orls.values())
    unbacked = sum(o.unbacked_orders or 0 for o in outcome.orls.values())
    if unbacked:
        n_queries = sum(1 for o in outcome.orls.values() if o.unbacked_orders)
        outcome.warnings.append(
            f"{unbacked} of {stated} stated cross-tier orders ({n_queries} queries) are not "
            f"backed by the family-wise test (tiering {resolved.tiering}; under-judged items "
            "count too); `orlbuild audit` lists them per boundary"
        )
    naive = (resolved.method, resolved.uncertainty, resolved.cluster) == ("bt", "fisher", "none")
    if resolved.source == "listwise" and naive:
        outcome.warnings.append(
            "the pairs implied by one list are not independent, so Fisher variances "
            "understate the uncertainty; --cluster annotators clusters them by annotator"
        )
    return resolved, outcome
