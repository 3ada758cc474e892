"""Build use cases: build-and-store, derive a build by an auditor's override, read builds back.

This module joins the store (:mod:`orlbuild.store.builds`, persistence only)
and the builders (pure computation on plain frames): it reads a collection's
judgments, runs the per-query work where the executor says (serially, on
local processes or on a Dask cluster; docs/parallel.md, "Running on many cores or a
cluster"), and writes the build in one transaction from this process. The
CLI (``build``, ``audit``) and the TOML pipeline call these functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

import pandas as pd
from sqlalchemy import Engine

from orlbuild.builders.audit.overrides import merge_adjacent_tiers, split_tier_at
from orlbuild.builders.parameter_specs import check_option_ranges
from orlbuild.builders.parameters import BuildParameters, check_source
from orlbuild.builders.tiering.posterior_summary import one_tier_note, pooled_risk, risk_line
from orlbuild.errors import BuildError, ConfigError, StoreError
from orlbuild.executor import Executor, map_ordered, start_workers
from orlbuild.limits import (
    PAIRWISE_ROUTES,
    check_items_per_query,
    check_name,
)
from orlbuild.records import BuildOutcome, OverrideRequest, QueryORL
from orlbuild.store.builds import (
    JUDGMENT_LOADERS,
    VERSIONED_NAME,
    BuildChangedError,
    BuildRecord,
    BuildRows,
    build_versions,
    derived_builds,
    float_or_none,
    get_build,
    int_or_none,
    load_build_judgments,
    load_build_orls,
    load_query_failures,
    load_query_orls,
    store_build,
)
from orlbuild.store.engine import Bind
from orlbuild.store.models import NAME_LENGTH
from orlbuild.store.read import batch_fingerprints
from orlbuild.store.users import current_user
from orlbuild.vocabulary import DEFAULT_COLLECTION, OnError, PairState, Source

if TYPE_CHECKING:
    from orlbuild.builders.audit.quality import QualityReport
    from orlbuild.builders.build import QueryMapper

__all__ = [
    "TIERING_COLUMNS",
    "BuildQuality",
    "NewBuild",
    "assess_build",
    "build_and_store",
    "build_or_reuse",
    "built_orls",
    "check_build_name",
    "override_build",
    "reusable_build",
    "tiering_by_query",
    "version_note",
]

#: ``progress(total)`` opens a progress bar of ``total`` queries and yields its
#: ``advance(n)`` callable.
Progress = Callable[[int], AbstractContextManager[Callable[[int], None]]]


def check_build_name(name: str) -> str:
    """A new build's name, stripped: 1 to NAME_LENGTH characters, not ending in ``@<digits>``.

    Raises
    ------
    ConfigError
        For an empty or too long name, or one that reads as a version (``X@2``).
    """
    text = name.strip()
    if not text or len(text) > NAME_LENGTH or "\x00" in text:
        raise ConfigError(f"invalid build name {name[:80]!r}: use 1 to {NAME_LENGTH} characters")
    if VERSIONED_NAME.fullmatch(text) or text.isdigit():
        raise ConfigError(
            f"invalid build name {text!r}: a name cannot be a number or end in '@<number>' "
            "(that addresses a build id or a version of a name)"
        )
    return text


def version_note(bind: Bind, name: str, build_id: int) -> str | None:
    """What storing ``build_id`` under ``name`` did to the name, when it was taken already.

    Never silent (docs/tiers-and-audit.md, "Build names"): the name now means the new build,
    and the earlier ones stay reachable as ``NAME@1``, ``NAME@2``, ...

    Returns
    -------
    str or None
        The note, or ``None`` when ``build_id`` is the name's first build.
    """
    versions = build_versions(bind, name)
    if build_id not in versions or versions.index(build_id) == 0:
        return None
    number = versions.index(build_id) + 1
    earlier = ", ".join(f"{name}@{i + 1} = build {b}" for i, b in enumerate(versions[:-1]))
    return (
        f"{name!r} already named {number - 1} build(s): this build ({build_id}) is "
        f"{name}@{number} and '{name}' now means it; earlier versions stay: {earlier}"
    )


@dataclass(frozen=True)
class NewBuild:
    """A build made and stored by :func:`build_and_store`.

    Attributes
    ----------
    id
        The build's id.
    params
        The parameters resolved against the data.
    outcome
        The ORLs, failures, warnings and reliabilities.
    new_version
        :func:`version_note`: what storing the build under a name already taken
        did to the name (``None`` without a name, or for the name's first build).
    """

    id: int
    params: BuildParameters
    outcome: BuildOutcome
    new_version: str | None = None

    def summary(self, name: str | None) -> tuple[pd.DataFrame, dict[str, Any]]:
        """What ``orlbuild build`` shows: a row per query (items, tiers) and the JSON document.

        The document has the build's id, name and new version, method and tiering,
        tiers per query, warnings, failures, under-judged items, stated and unbacked
        orders, the margin and the decisions by state (docs/planning.md), and the
        annotator reliabilities.
        """
        outcome, orls = self.outcome, self.outcome.orls
        rows = [(q, sum(len(t) for t in orl.tiers), len(orl.tiers)) for q, orl in orls.items()]
        frame = pd.DataFrame(rows, columns=["query", "items", "tiers"])
        pooled = pooled_risk(o.posterior for o in orls.values())
        if pooled is not None:  # every scored pairwise or listwise build
            frame["E"] = [
                None if o.posterior is None else o.posterior.expected_wrong for o in orls.values()
            ]
            frame["N"] = [
                None if o.posterior is None else o.posterior.stated for o in orls.values()
            ]
            frame["E/N"] = [
                None if o.posterior is None else o.posterior.wrong_share for o in orls.values()
            ]
        states = [d.state for orl in orls.values() for d in orl.decisions if d.state is not None]
        payload = {
            "build": self.id,
            "name": name,
            "new_version": self.new_version,
            "method": self.params.method,
            "tiering": self.params.tiering,
            "queries": len(orls),
            "tiers": {q: len(orl.tiers) for q, orl in orls.items()},
            "warnings": outcome.warnings,
            "failures": [{"query": f.query, "cause": f.cause} for f in outcome.failures],
            "under_judged": {q: o.under_judged for q, o in orls.items() if o.under_judged},
            "stated_orders": sum(o.stated_orders or 0 for o in orls.values()),
            "unbacked_orders": sum(o.unbacked_orders or 0 for o in orls.values()),
            "margin": self.params.margin,
            "decision_states": {s.value: states.count(s.value) for s in PairState},
            "reliabilities": [r.__dict__ for r in outcome.reliabilities],
            "fdr": self.params.fdr,
            **_posterior_payload(outcome, pooled),
            "note": self.note(name),
        }
        return frame, payload

    def risk_line(self) -> str | None:
        """The build's pooled posterior risk in one line (scored pairwise and listwise)."""
        pooled = pooled_risk(o.posterior for o in self.outcome.orls.values())
        if pooled is None:
            return None
        prior = self.outcome.prior_lambda, self.outcome.prior_tau
        return risk_line(
            *pooled,
            tiering=str(self.params.tiering),
            fdr=self.params.fdr,
            prior=None if prior[0] is None or prior[1] is None else (prior[0], prior[1]),
        )

    def note(self, name: str | None) -> str | None:
        """:func:`~orlbuild.services.posterior_audit.one_tier_note` of this build."""
        counts = {
            q: (sum(len(t) for t in o.tiers), len(o.tiers)) for q, o in self.outcome.orls.items()
        }
        return one_tier_note(counts, name or self.id)


def _posterior_payload(outcome: BuildOutcome, pooled: tuple[float, int] | None) -> dict[str, Any]:
    """The posterior evidence of ``build --format json``: the prior, pooled and per query."""
    if pooled is None:
        return {"posterior_prior": None, "posterior": None}
    expected, stated = pooled
    return {
        "posterior_prior": {"lambda": outcome.prior_lambda, "tau": outcome.prior_tau},
        "posterior": {
            "expected_wrong": expected,
            "stated_orders": stated,
            "wrong_share": expected / stated if stated else None,
            "queries": {
                q: {
                    "E": o.posterior.expected_wrong,
                    "N": o.posterior.stated,
                    "E/N": o.posterior.wrong_share,
                }
                for q, o in outcome.orls.items()
                if o.posterior is not None
            },
        },
    }


def build_and_store(
    engine: Engine,
    params: BuildParameters,
    *,
    collection: str = DEFAULT_COLLECTION,
    name: str | None = None,
    on_error: OnError = OnError.stop,
    progress: Progress | None = None,
    created_by: str | None = None,
    executor: Executor | None = None,
) -> NewBuild:
    """Read the collection's judgments of ``params.source``, build the ORLs, store the build.

    With ``on_error="stop"`` any failed query raises
    :class:`~orlbuild.errors.BuildError` before anything is written. The
    per-query work runs on ``executor``; workers get each query's judgments
    as plain data, and this process writes the whole build in one
    transaction, so the stored build is identical for any executor (each
    query draws from its own generator seeded with ``(seed, query)``).

    Parameters
    ----------
    engine
        The store.
    params
        Build options (resolved against the data).
    collection
        Collection to read.
    name
        Optional build name (:func:`check_build_name`). A name already taken
        gets a new version (``NAME@2``; :func:`version_note` says so).
    on_error
        ``"stop"`` or ``"skip"`` (:class:`~orlbuild.vocabulary.OnError`).
    progress
        Called with the number of queries; returns a context manager yielding
        the ``advance(n)`` callable of a progress bar, which is called as
        queries finish.
    created_by
        Who ran it (default: :func:`~orlbuild.store.users.current_user`).
    executor
        Where the per-query work runs
        (:func:`~orlbuild.executor.resolve_executor`; default serial).

    Returns
    -------
    NewBuild
        The build's id, resolved parameters and outcome, and the note on its name.

    Raises
    ------
    BuildError
        No judgments of that source, or a failed query with ``on_error="stop"``.
    ConfigError
        An unknown source or invalid options.
    """
    given = name  # the note names the build as it was asked for
    if name is not None:
        name = check_build_name(name)
    check_source(params.source)
    # Limits first: nothing is read or computed for a build that could not be stored.
    check_option_ranges(vars(params))
    # Imported here: the builders pull in pandas' heavier parts, and the estimators
    # choix/scipy/networkx, which the commands that only read builds should not pay for.
    from orlbuild.builders.build import ESTIMATOR_MODULES, build_orls

    # Local workers are forked once this process has imported the estimators (it runs
    # chunks too); a cluster's workers are connected to and import them in the
    # background while this process reads the store, and this process does not import
    # them at all (docs/parallel.md, "Running on many cores or a cluster").
    start_workers(
        executor, ["orlbuild.builders.build", *ESTIMATOR_MODULES.get(str(params.source), ())]
    )
    frame = JUDGMENT_LOADERS[Source(params.source)](engine, collection)
    if frame.empty:
        raise BuildError(
            f"collection {collection!r} has no {params.source} judgments; ingest some first"
        )
    check_pairwise_size(frame, params)
    bar = progress(int(frame["query"].nunique())) if progress is not None else nullcontext(None)
    rows = BuildRows()
    with bar as advance:
        mapper: QueryMapper = partial(_rows_as_collected, rows, executor, advance)
        resolved, outcome = build_orls(frame, params, on_error=on_error, mapper=mapper)
    if outcome.prior_lambda is not None:
        # the posterior pass ran after the rows were made (it tiers posterior queries and
        # adds every scored query's evidence): made again from the final ORLs
        rows = BuildRows.of(outcome.orls.values())
    try:
        fingerprints = batch_fingerprints(engine, frame["batch_id"].unique().tolist())
        build_id = store_build(
            engine,
            collection=collection,
            parameters=resolved.to_json(),
            outcome=outcome,
            batches=[fingerprints[k] for k in sorted(fingerprints)],
            name=name,
            created_by=created_by or current_user(),
            rows=rows,
        )
    except StoreError as error:  # retried once already on a lost connection
        raise _kept_computation(error, resolved, outcome) from error
    note = None if given is None else version_note(engine, given, build_id)
    return NewBuild(build_id, resolved, outcome, note)


def _rows_as_collected(
    rows: BuildRows,
    executor: Executor | None,
    advance: Callable[[int], None] | None,
    function: Callable[[Any], Any],
    tasks: Iterable[Any],
) -> Iterator[Any]:
    """:func:`~orlbuild.executor.map_ordered`, making each ORL's store rows as it arrives.

    With ``--jobs`` this process makes them between its own chunks while the
    workers compute, instead of after the last query, when it alone writes
    the build and the other cores have nothing to do (docs/parallel.md).
    """
    for result in map_ordered(function, tasks, executor=executor, advance=advance):
        if isinstance(result, QueryORL):
            rows.add(result)
        yield result


def _kept_computation(
    error: StoreError,
    params: BuildParameters,
    outcome: BuildOutcome,
    *,
    what: str = "build",
    about: Mapping[str, Any] | None = None,
) -> StoreError:
    """Save a computed build (or override) that could not be stored as an ORL JSON file;
    the error names it.

    The file is the ``orl export --format json`` document (``"stored": false``,
    and ``about``: the parent and the overrides of a derived build), which
    ``orlbuild eval`` reads as the ORL file (docs/reliability.md, "When the database fails").
    """
    from orlbuild.orl_io.writing import export_orls
    from orlbuild.output_files import keep_unstored
    from orlbuild.vocabulary import ExportFormat

    def document() -> str:
        rows = [
            (query, item, rank)
            for query, orl in outcome.orls.items()
            for rank, tier in enumerate(orl.tiers, start=1)
            for item in tier
        ]
        entries = pd.DataFrame(rows, columns=["query", "item", "rank"])
        build = {"stored": False, "parameters": params.to_json(), **(about or {})}
        return export_orls(entries, ExportFormat.json, build=build)

    return keep_unstored(
        error,
        what,
        document,
        "its ORLs are saved in {path} (an ORL file for `orlbuild eval`)",
    )


def check_pairwise_size(frame: pd.DataFrame, params: BuildParameters) -> None:
    """Refuse a pairwise-route build whose largest query would need too much memory.

    Checked on the judgments read, before the builders allocate anything
    (:func:`orlbuild.limits.check_items_per_query`, docs/reliability.md, "Limits").
    """
    from orlbuild.builders.build import resolve_for_frame

    resolved = resolve_for_frame(frame, params)
    if str(resolved.method) not in PAIRWISE_ROUTES:
        return
    columns = ["winner", "loser"] if "winner" in frame.columns else ["item"]
    items = pd.concat(
        [frame[["query", c]].rename(columns={c: "item"}) for c in columns], ignore_index=True
    )
    counts = items.groupby("query", sort=False)["item"].nunique()
    check_items_per_query(
        {str(q): int(n) for q, n in counts.items()},
        method=str(resolved.method),
        tiering=str(resolved.tiering),
        uncertainty=str(resolved.uncertainty),
        mc_draws=int(resolved.mc_draws),
        bootstrap=int(resolved.bootstrap),
    )


def reusable_build(
    engine: Engine,
    name: str,
    params: BuildParameters,
    *,
    collection: str = DEFAULT_COLLECTION,
    failures_allowed: bool = False,
) -> BuildRecord | None:
    """The newest build named ``name`` if it equals what building now would give.

    Equal means: the same collection, the same ingest batches (by content
    hash) and the same parameters once resolved against today's judgments. A
    build derived by an auditor's override keeps its parent's parameters and
    batches, so it is reused like its parent: re-running the pipeline keeps
    the audited ORLs instead of silently building an unaudited copy over them.

    Parameters
    ----------
    engine
        The store.
    name
        Build name.
    params
        The options a new build would get.
    collection
        The collection it must have read.
    failures_allowed
        Whether a build with failed queries may be reused (``on_error =
        "skip"``); otherwise it is built again so that the failures stop the
        caller.

    Returns
    -------
    BuildRecord or None
        The build to reuse, or None when a new one must be made.
    """
    from orlbuild.builders.build import resolve_for_frame  # choix/scipy: load late

    try:
        record = get_build(engine, name)
    except StoreError:
        return None
    if record.collection != collection:
        return None
    if record.n_failed and not failures_allowed:
        return None
    frame = JUDGMENT_LOADERS[Source(params.source)](engine, collection)
    if frame.empty:
        return None
    current = batch_fingerprints(engine, frame["batch_id"].unique().tolist())
    same_batches = {b.sha256 for b in record.batches} == {b.sha256 for b in current.values()}
    same_params = record.parameters == resolve_for_frame(frame, params).to_json()
    return record if same_batches and same_params else None


def built_orls(bind: Bind, build_id: int) -> tuple[dict[str, QueryORL], list[str]]:
    """A stored build read back: its per-query records and its failures as ``query: cause``.

    Parameters
    ----------
    bind
        Engine, connection or session.
    build_id
        The build.

    Returns
    -------
    orls : dict of str to QueryORL
        Query -> record, sorted by query.
    failures : list of str
        ``query: cause`` of the queries the build skipped.
    """
    failures = [f"{f.query}: {f.cause}" for f in load_query_failures(bind, build_id)]
    return load_query_orls(bind, build_id), failures


def override_build(engine: Engine, build: str | int, request: OverrideRequest) -> int:
    """Derive a new build from ``build`` with one query's tiers merged or split.

    The original build is never modified: every ORL, decision and message is
    copied into the new build, the override is applied to ``query``, and the
    override (who, why) is recorded with the new build, whose parent is the
    original (after the parent's own overrides, so a build lists its whole
    override history).

    Parameters
    ----------
    engine
        The store.
    build
        Build id or name.
    request
        The query, the override (exactly one of ``merge_tier`` and
        ``split_at``), why (mandatory, stored) and who (default:
        :func:`~orlbuild.store.users.current_user`).

    Returns
    -------
    int
        The new build's id.

    Raises
    ------
    ConfigError
        Neither or both of ``merge_tier``/``split_at``, an empty reason, or an
        override that does not fit the ORL.
    StoreError
        Unknown build or query; or, for a build given by id, a build derived from
        it meanwhile (:class:`~orlbuild.store.builds.BuildChangedError`, "build
        changed since you read it; rerun").
    """
    if (request.merge_tier is None) == (request.split_at is None):
        raise ConfigError("give exactly one of --merge-tiers T or --split-at ITEM")
    if not request.reason.strip():
        raise ConfigError("--reason must not be empty: say why the ORL is overridden")
    request = replace(request, by=check_name(request.by, "--by"))
    # A name follows the newest build of that name: when another override of the build
    # lands first (on another query), this one is derived from it, so both are kept.
    # An id names one version: a concurrent derivation is refused
    # (docs/tiers-and-audit.md, "Audit").
    text = str(build).strip()
    by_name = not text.isdigit() and VERSIONED_NAME.fullmatch(text) is None  # not NAME@N
    for _ in range(_OVERRIDE_ATTEMPTS):
        try:
            return _override_once(engine, build, request)
        except BuildChangedError as changed:
            if not by_name or _touches(engine, changed.children, request.query):
                raise
    raise StoreError(
        f"build {build!r} kept changing while the override was written "
        f"({_OVERRIDE_ATTEMPTS} attempts); rerun"
    )


#: How often an override by build name is re-derived from a build that changed meanwhile.
_OVERRIDE_ATTEMPTS = 5


def _touches(engine: Engine, builds: tuple[int, ...], query: str) -> bool:
    """Whether the newest override of any of ``builds`` concerns ``query``."""
    return any(get_build(engine, b).overrides[-1]["query"] == query for b in builds)


def _override_once(engine: Engine, build: str | int, request: OverrideRequest) -> int:
    """One attempt of :func:`override_build`, refused if the build changes meanwhile."""
    record = get_build(engine, build)
    known = derived_builds(engine, record.id)
    orls = load_query_orls(engine, record.id)
    query = request.query
    if query not in orls:
        raise StoreError(f"build {record.id} has no ORL for query {query!r}")
    if request.merge_tier is not None:
        orls[query] = merge_adjacent_tiers(orls[query], request.merge_tier)
    else:
        orls[query] = split_tier_at(orls[query], str(request.split_at))
    # E and N need the build's w_ij, which are not stored: the overridden query has none
    orls[query] = replace(orls[query], posterior=None)
    failures = load_query_failures(engine, record.id)
    params = BuildParameters.from_json(record.parameters)
    who = request.by or current_user()
    outcome = BuildOutcome(
        orls=orls,
        failures=failures,
        prior_lambda=record.posterior_lambda,
        prior_tau=record.posterior_tau,
    )
    overrides = [
        *record.overrides,
        {
            "query": query,
            "action": request.action,
            "argument": str(request.argument),
            "reason": request.reason.strip(),
            "created_by": who,
        },
    ]
    try:
        return store_build(
            engine,
            collection=record.collection,
            parameters=params.to_json(),
            outcome=outcome,
            batches=record.batches,
            name=record.name,
            created_by=who,
            parent_id=record.id,
            overrides=overrides,
            known_children=known,
        )
    except BuildChangedError:
        raise  # another override landed first: derived again or refused by the caller
    except StoreError as error:  # retried once already on a lost connection
        about = {"parent": record.id, "name": record.name, "overrides": overrides}
        raise _kept_computation(error, params, outcome, what="override", about=about) from error


@dataclass(frozen=True)
class BuildQuality:
    """How well a stored build agrees with the judgments it read (``orlbuild quality``).

    Attributes
    ----------
    record
        The build.
    preferences
        Number of raw preferences its judgments imply.
    report
        Comparisons per item and pair, agreement overall and per annotator,
        majority-preference cycles.
    """

    record: BuildRecord
    preferences: int
    report: QualityReport
    judges: pd.DataFrame | None = None


def assess_build(engine: Engine, build: str | int, *, min_comparisons: int = 5) -> BuildQuality:
    """Check a stored build against the judgments it read.

    Parameters
    ----------
    engine
        The store.
    build
        Build id or name.
    min_comparisons
        Items compared fewer times than this are flagged.

    Returns
    -------
    BuildQuality

    Raises
    ------
    StoreError
        Unknown build.
    """
    from orlbuild.builders.audit.quality import (  # networkx: load late
        build_quality,
        raw_preferences,
    )

    record = get_build(engine, build)
    judgments = load_build_judgments(engine, record)
    orls = load_build_orls(engine, record.id)
    prefs = raw_preferences(judgments, record.source)
    report = build_quality(
        prefs, {q: dict(orl.items()) for q, orl in orls.items()}, min_comparisons=min_comparisons
    )
    from orlbuild.builders.audit.judge_quality import judge_figures

    judges = judge_figures(prefs) if record.source == "pairwise" else None
    return BuildQuality(record=record, preferences=len(prefs), report=report, judges=judges)


TIERING_COLUMNS = [
    "build",
    "query",
    "procedure",
    "family_size",
    "critical",
    "bic_penalty",
    "variance",
    "sig",
    "mc_draws",
    "seed",
    "decisions",
    "separated",
]


def tiering_by_query(
    decisions: pd.DataFrame, parameters: dict[int, dict[str, Any]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-query summary of how tiers were decided, and the decisions with gaps filled.

    Decisions stored before ``--tiering`` existed have no procedure: those of a
    test (a p-value) read as their build's ``tiering``, which is ``leader`` for
    such builds (:meth:`BuildParameters.from_json`).

    Parameters
    ----------
    decisions
        :func:`orlbuild.store.builds.load_tie_decisions` output.
    parameters
        Build id -> stored parameters.

    Returns
    -------
    summary : pandas.DataFrame
        One row per (build, query), columns :data:`TIERING_COLUMNS`: the
        procedure, its family size, the largest critical value a decision was
        compared with (``simultaneous``: the single-step ``c`` when the first
        step was used; ``leader``: the normal quantile) or BIC penalty
        (``model``), the variance, ``sig``, and the Monte Carlo draws and seed
        of the critical values (the build seed; the draws depend on it and on
        the number of items,
        :func:`orlbuild.builders.tiering.critical_values.standard_normal_draws`).
    decisions : pandas.DataFrame
        The input with ``procedure`` filled for older builds.
    """
    filled = decisions.copy()
    legacy = {b: BuildParameters.from_json(p).tiering or "none" for b, p in parameters.items()}
    tested = filled["procedure"].isna() & filled["p_value"].notna()
    filled.loc[tested, "procedure"] = filled.loc[tested, "build"].map(legacy)
    rows = []
    for (build, query), part in filled.groupby(["build", "query"], sort=False):
        decided = part[part["procedure"].notna()]  # override decisions have none
        first = (decided if len(decided) else part).iloc[0]
        params = parameters.get(int(build), {})
        procedure = first["procedure"] if pd.notna(first["procedure"]) else "rule"
        rows.append(
            {
                "build": int(build),
                "query": str(query),
                "procedure": procedure,
                "family_size": int_or_none(first["family_size"]),
                "critical": float_or_none(decided["critical"].max()) if len(decided) else None,
                "bic_penalty": float_or_none(first["bic_penalty"]),
                "variance": str(first["variance"]),
                "sig": params.get("sig"),
                "mc_draws": params.get("mc_draws") if procedure == "simultaneous" else None,
                "seed": params.get("seed") if procedure == "simultaneous" else None,
                "decisions": len(part),
                "separated": int((part["decision"] == "separated").sum()),
            }
        )
    return pd.DataFrame(rows, columns=TIERING_COLUMNS), filled


def build_or_reuse(
    engine: Engine,
    params: BuildParameters,
    *,
    name: str,
    collection: str = DEFAULT_COLLECTION,
    on_error: OnError = OnError.stop,
    progress: Progress | None = None,
    executor: Executor | None = None,
) -> tuple[BuildRecord, bool]:
    """The newest build named ``name`` when :func:`reusable_build` allows, else a new one.

    A new build is made by :func:`build_and_store` (what ``orlbuild build``
    runs); parameters as there. A build with failed queries is reused only
    with ``on_error="skip"``.

    Returns
    -------
    record : BuildRecord
        The build reused or made.
    reused : bool
        Whether it was reused.
    """
    record = reusable_build(
        engine, name, params, collection=collection, failures_allowed=on_error is OnError.skip
    )
    if record is not None:
        return record, True
    new = build_and_store(
        engine,
        params,
        collection=collection,
        name=name,
        on_error=on_error,
        progress=progress,
        executor=executor,
    )
    return get_build(engine, new.id), False
