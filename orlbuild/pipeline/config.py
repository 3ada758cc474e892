"""The pipeline configuration file: a TOML schema validated into frozen dataclasses
(:mod:`orlbuild.pipeline.specs`, read table by table with :mod:`orlbuild.pipeline.toml_tables`).

One file lists the inputs to ingest, the ORL builds to make, the measures, the
systems to score and compare, an optional power analysis and the report. Every
problem in the file is reported at once, as one :class:`~orlbuild.errors.ConfigError`
naming the key (``inputs[2].kind``) and what is allowed, before anything is
stored. Relative paths are resolved against the directory of the config file.

Example (``sample_data/pipeline.toml`` is a complete one)::

    collection = "sample"
    measures = ["RDQm2-a1@10", "nDCG@10"]

    [[inputs]]
    kind = "pairwise"
    path = "pairwise.tsv"

    [[inputs]]
    kind = "run"
    path = "runs/bm25.trec"
    system = "bm25"

    [[builds]]
    name = "pairwise-bt"
    source = "pairwise"
    method = "bt"

    [scoring]
    build = "pairwise-bt"
"""

from __future__ import annotations

import contextlib
import glob
import sys
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar, cast

from orlbuild.builders.parameter_specs import BUILD_OPTIONS
from orlbuild.builders.parameters import METHODS, PlanSettings, resolve_parameters
from orlbuild.errors import ConfigError, OrlbuildError
from orlbuild.executor import resolve_executor
from orlbuild.ingest.column_names import parse_column_map
from orlbuild.ingest.kinds import KINDS
from orlbuild.ingest.reading import kind_formats
from orlbuild.nesting import checked_toml_text
from orlbuild.output_files import check_output, sqlite_store_files
from orlbuild.pipeline.specs import (
    BuildSpec,
    ExecutionSpec,
    InputSpec,
    PipelineConfig,
    PlanSpec,
    ReportSpec,
    ScoringSpec,
    builder_parameters,
)
from orlbuild.pipeline.toml_tables import (
    Problems,
    Table,
    count_rule,
    name_rule,
    non_empty,
    probability_rule,
    seed_rule,
)
from orlbuild.services.build_evaluation import PowerSpec
from orlbuild.vocabulary import (
    InputFormat,
    InputKind,
    Method,
    Source,
    SystemNameSource,
    values,
)
from scoring import UnknownMeasureError, parse_measures
from scoring.settings import TestSettings
from scoring.statistics.procedures import default_test
from scoring.vocabulary import (
    CorrectionName,
    MissingPolicy,
    ScorePrecisionName,
    SignificanceTest,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "BUILD_METHODS",
    "INPUT_FORMATS",
    "load_config",
    "parse_config",
    "pipeline_inputs",
]


INPUT_FORMATS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {kind: tuple(f.value for f in kind_formats(kind)) for kind in KINDS}
)
"""Allowed ``format`` values per input kind (docs/input-formats.md, "Input formats"); omitted: by
extension."""

BUILD_METHODS: Mapping[Source, tuple[Method, ...]] = METHODS
"""Allowed ``method`` values per build source (docs/tiers-and-audit.md, "Build routes"); omitted:
its default."""

#: The ``[builds.parameters]`` keys each source accepts: the user options of
#: :data:`~orlbuild.builders.parameter_specs.BUILD_OPTIONS` that apply to it (``source``
#: and ``method`` are keys of ``[[builds]]`` itself). Which word applies to which method
#: is left to :func:`resolve_parameters`, as for ``orlbuild build``.
_PARAMETERS_BY_SOURCE: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        str(source): frozenset(
            name
            for name, spec in BUILD_OPTIONS.items()
            if spec.option and source in spec.applies_to and name not in ("source", "method")
        )
        for source in Source
    }
)


def load_config(path: str | Path) -> PipelineConfig:
    """Read and validate a pipeline config file.

    Parameters
    ----------
    path
        The TOML file. Relative paths inside it are resolved against its directory.

    Returns
    -------
    PipelineConfig
        The validated configuration.

    Raises
    ------
    ConfigError
        The file is missing, is not valid TOML, or breaks the schema; the message
        names every offending key and what is allowed there.
    """
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"{source}: config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{source}: cannot read the config file ({exc})") from None
    try:
        data = tomllib.loads(checked_toml_text(text, str(source)))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from None
    return parse_config(data, source=source)


def parse_config(data: Mapping[str, Any], *, source: str | Path) -> PipelineConfig:
    """Validate an already parsed TOML document (see :func:`load_config`).

    Parameters
    ----------
    data
        The parsed document.
    source
        The config file's path; relative paths are resolved against its directory.
    """
    source = Path(source).resolve()
    base = source.parent
    problems = Problems(source)
    root = Table(dict(data), "", problems)

    collection = root.get("collection", str, "default", check=non_empty).strip()
    measures = root.strings("measures", required=True)
    if not measures and isinstance(root.data.get("measures"), list):
        problems.add("measures", "must list at least one measure, e.g. ['RDQm2-a1@10', 'nDCG@10']")
    try:
        parse_measures(measures)
    except UnknownMeasureError as exc:
        problems.add("measures", str(exc))
        root.used.add("rel_level")
    else:
        measures = _at_rel_level(root, measures)
    database_url = _database(root.table("database"), base)
    inputs = tuple(spec for t in root.tables("inputs") for spec in _input(t, base, collection))
    if not root.data.get("inputs"):
        problems.add("inputs", "at least one [[inputs]] table is required")
    builds = tuple(_build(t, collection) for t in root.tables("builds"))
    if not root.data.get("builds"):
        problems.add("builds", "at least one [[builds]] table is required")
    scoring_table = root.table("scoring")
    if scoring_table is None:
        problems.add("scoring", "a [scoring] table is required (build = NAME of one of [[builds]])")
        scoring_table = Table({}, "scoring", problems)
    scoring = _scoring(scoring_table, builds, inputs)
    compare_table = root.table("compare") or Table({}, "compare", problems)
    compare, reference_resamples = _compare(compare_table, len(scoring.systems))
    power_table = root.table("power")
    rel_level = root.data.get("rel_level")
    power = None if power_table is None else _power(power_table, measures, rel_level)
    report_table = root.table("report")
    report = None if report_table is None else _report(report_table, base)
    execution_table = root.table("execution")
    execution = ExecutionSpec() if execution_table is None else _execution(execution_table)
    plan_table = root.table("plan")
    plan = None if plan_table is None else _plan(plan_table, base, builds, scoring.build)
    root.finish()
    _cross_checks(problems, inputs, builds)
    protected = pipeline_inputs(source, database_url, inputs)
    if report is not None:
        _check_output_path(problems, "report.path", report.path, protected)
    if plan is not None:
        _check_output_path(problems, "plan.output", plan.output, protected)
    problems.raise_if_any()
    return PipelineConfig(
        source=source,
        database_url=database_url,
        inputs=inputs,
        builds=builds,
        measures=measures,
        scoring=scoring,
        compare=compare,
        reference_resamples=reference_resamples,
        power=power,
        report=report,
        collection=collection,
        execution=execution,
        plan=plan,
    )


def _database(table: Table | None, base: Path) -> str:
    if table is None:
        return f"sqlite:///{base / 'orlbuild.db'}"
    url = table.get("url", str, None, check=non_empty)
    path = table.get("path", str, None, check=non_empty)
    table.finish(("url", "path"))
    if url is not None and path is not None:
        table.problems.add("database", "give either url or path, not both")
    if url is not None:
        return url.strip()
    return f"sqlite:///{(base / (path or 'orlbuild.db')).resolve()}"


def _input(table: Table, base: Path, collection: str) -> tuple[InputSpec, ...]:
    """One ``[[inputs]]`` table: one file, or every run file its glob matches, sorted."""
    kind = table.get("kind", str, choices=tuple(INPUT_FORMATS))
    raw_path = table.get("path", str, check=non_empty)
    pattern = bool(raw_path) and glob.has_magic(raw_path)
    path = (base / raw_path).resolve() if raw_path else base
    paths = _run_glob(table, kind, base, raw_path) if pattern else [path]
    if raw_path and not pattern and not path.is_file():
        table.problems.add(table.key("path"), f"file not found: {path}")
    formats = INPUT_FORMATS.get(kind or "", ())
    fmt = table.get("format", str, None, choices=formats or None)
    system = table.get("system", str, None, check=non_empty)
    system_from = table.get("system_from", str, None, choices=values(SystemNameSource))
    if kind == "run" and system is None and system_from is None and "system" not in table.data:
        table.problems.add(
            table.key("system"),
            "is required for kind = 'run' (the system's name), or system_from = 'tag'|'stem'",
        )
    if kind is not None and kind != "run" and system is not None:
        table.problems.add(table.key("system"), f"only allowed for kind = 'run' (this is {kind!r})")
    if kind is not None and kind != "run" and system_from is not None:
        table.problems.add(
            table.key("system_from"), f"only allowed for kind = 'run' (this is {kind!r})"
        )
    if system is not None and (system_from is not None or pattern):
        table.problems.add(
            table.key("system"),
            "names one run: give system_from = 'tag'|'stem' instead, for a glob or not at all",
        )
    query = table.get("query", str, None, check=non_empty)
    if kind is not None and kind != "pairwise" and query is not None:
        table.problems.add(
            table.key("query"), f"only allowed for kind = 'pairwise' (this is {kind!r})"
        )
    columns = _column_map(table, kind)
    coll = table.get("collection", str, collection, check=non_empty).strip()
    table.finish(
        ("kind", "path", "format", "system", "system_from", "collection", "query", "columns")
    )
    systems = [None if system is None else system.strip()] * len(paths)
    if kind == "run" and system_from is not None and system is None and paths:
        systems = _run_systems(table, paths, SystemNameSource(system_from), fmt, dict(columns))
    return tuple(
        InputSpec(
            kind=_word(InputKind, kind),
            path=one_path,
            collection=coll,
            system=one_system,
            format=fmt,
            query=None if query is None else query.strip(),
            columns=columns,
            key=table.where,
        )
        for one_path, one_system in zip(paths, systems, strict=True)
    )


def _column_map(table: Table, kind: str | None) -> tuple[tuple[str, str], ...]:
    """``columns``: a table or ``"a=b,c=d"`` (docs/pipeline.md), checked as ``--columns`` is."""
    given: str | dict[str, Any] | None = table.get("columns", (str, dict), None)
    if given is None or kind is None:
        return ()
    if isinstance(given, dict) and not all(isinstance(v, str) for v in given.values()):
        table.problems.add(table.key("columns"), "each value must be a column name (a string)")
        return ()
    try:
        return tuple(parse_column_map(kind, given).items())
    except ConfigError as exc:
        table.problems.add(table.key("columns"), str(exc).removeprefix("--columns"))
        return ()


def _run_glob(table: Table, kind: str | None, base: Path, pattern: str) -> list[Path]:
    """The files a run ``path`` glob matches, sorted (docs/pipeline.md, "Many runs: a glob")."""
    if kind is not None and kind != "run":
        table.problems.add(table.key("path"), f"a glob is for kind = 'run' (this is {kind!r})")
        return []
    matches = sorted(
        Path(match).resolve()
        for match in glob.glob(str(base / pattern), recursive=True)
        if Path(match).is_file()
    )
    if not matches:
        table.problems.add(table.key("path"), f"the glob {pattern!r} matches no file in {base}")
    return matches


def _run_systems(
    table: Table,
    paths: list[Path],
    system_from: SystemNameSource,
    fmt: str | None,
    columns: dict[str, str] | None = None,
) -> list[str | None]:
    """Each run's system from its tag (read through ``columns``) or file stem, as
    ``ingest run --system-from``."""
    from orlbuild.services.run_ingests import run_system_names

    try:
        runs = run_system_names(
            paths,
            system_from=system_from,
            fmt=None if fmt is None else InputFormat(fmt),
            columns=columns,
        )
    except OrlbuildError as error:
        table.problems.add(table.key("system_from"), str(error))
        return [None] * len(paths)
    return [run.system for run in runs]


def _build_name(value: str) -> str | None:
    """The problem with a build name, as ``orlbuild build --name`` sees it (or ``None``)."""
    from orlbuild.services.builds import check_build_name

    try:
        check_build_name(value)
    except ConfigError as exc:
        return str(exc)
    return None


W = TypeVar("W", bound=Enum)


def _word(vocabulary: type[W], word: str | None) -> W:
    """``word`` as a member of ``vocabulary``, the one coercion of the TOML's words.

    A missing or unknown word has been reported as a problem already (the
    config is refused), so it is passed on as it is.
    """
    return vocabulary(word) if word in values(vocabulary) else cast(W, word)


def _build(table: Table, collection: str) -> BuildSpec:
    name = table.get("name", str, check=lambda v: name_rule(v) or _build_name(v))
    source = _word(Source, table.get("source", str, choices=values(Source)))
    methods = BUILD_METHODS.get(source, ())
    word = table.get("method", str, None, choices=methods or None)
    method = None if word is None else _word(Method, word)
    coll = table.get("collection", str, collection, check=non_empty).strip()
    params_table = table.table("parameters") or Table({}, table.key("parameters"), table.problems)
    parameters = _parameters(params_table, source)
    table.finish(("name", "source", "method", "collection", "parameters"))
    if source in BUILD_METHODS and (method is None or method in BUILD_METHODS[source]):
        _check_with_builder(table, source, method, parameters)
    return BuildSpec(
        name=(name or "").strip(),
        source=source,
        method=method,
        collection=coll,
        parameters=MappingProxyType(parameters),
    )


def _parameters(table: Table, source: str | None) -> dict[str, Any]:
    allowed = sorted(_PARAMETERS_BY_SOURCE.get(source or "", frozenset()))
    chosen: dict[str, Any] = {}
    for name in allowed:
        if name not in table.data:
            continue
        spec = BUILD_OPTIONS[name]
        if spec.choices:
            vocabulary = spec.choices[0]
            word = table.get(name, str, None, choices=values(vocabulary))
            chosen[name] = None if word is None else _word(vocabulary, word)
        elif spec.type is bool:
            chosen[name] = table.get(name, bool, None)
        else:  # one check per value: its range and limit, from the table
            chosen[name] = table.get(name, spec.type, None, check=spec.problem)
    table.finish(allowed)
    return {k: v for k, v in chosen.items() if v is not None}


def _check_with_builder(
    table: Table, source: Source, method: Method | None, parameters: Mapping[str, Any]
) -> None:
    """Let the builder resolve the options: catches combinations that do not apply."""
    try:
        # an unspecified listwise method may resolve to bt on the data: validate permissively
        resolve_parameters(
            builder_parameters(source, method, parameters), single_list_per_query=False
        )
    except ConfigError as exc:
        table.problems.add(table.key("parameters"), str(exc))


def _scoring(table: Table, builds: Sequence[BuildSpec], inputs: Sequence[InputSpec]) -> ScoringSpec:
    names = tuple(b.name for b in builds if b.name)
    build = table.get("build", str, choices=names or None)
    # the runs are read from the scored build's collection
    collection = next((b.collection for b in builds if b.name == build), None)
    run_systems = tuple(
        dict.fromkeys(
            i.system
            for i in inputs
            if i.kind == "run" and i.system and collection in (None, i.collection)
        )
    )
    systems = table.strings("systems") or run_systems
    unknown = [s for s in systems if s not in run_systems]
    if unknown:
        where = "" if collection is None else f" in collection {collection!r}"
        allowed = ", ".join(run_systems) or "none (add [[inputs]] with kind = 'run')"
        table.problems.add(
            table.key("systems"),
            f"{unknown[0]!r} is not a run input{where}; allowed: {allowed}",
        )
    elif not systems:
        table.problems.add(
            table.key("systems"), "no systems to score: add [[inputs]] with kind = 'run'"
        )
    missing = table.get("missing", str, "zero", choices=values(MissingPolicy))
    precision = table.get("score_precision", str, "float32", choices=values(ScorePrecisionName))
    table.finish(("build", "systems", "missing", "score_precision"))
    return ScoringSpec(
        build=build or "",
        systems=systems,
        missing=_word(MissingPolicy, missing),
        score_precision=_word(ScorePrecisionName, precision),
    )


def _compare(table: Table, n_systems: int) -> tuple[TestSettings, int]:
    tests = [t.value for t in SignificanceTest]
    test = SignificanceTest(table.get("test", str, default_test(n_systems).value, choices=tests))
    family_wise = test.family_wise
    corrections = [c.value for c in CorrectionName]
    correction = table.get("correction", str, None if family_wise else "holm", choices=corrections)
    if family_wise and correction not in (None, CorrectionName.none.value):
        because = "" if "test" in table.data else " (the default test for more than two systems)"
        table.problems.add(
            table.key("correction"),
            f"does not apply to test '{test.value}'{because}, whose p-values are adjusted over all "
            f"pairs already; drop it, or set test = 'randomization' (got {correction!r})",
        )
    spec = TestSettings(
        test=test,
        permutations=table.get(
            "permutations", int, TestSettings.permutations, check=count_rule("permutations")
        ),
        correction=None if family_wise or correction is None else CorrectionName(correction),
        alpha=table.get("alpha", float, TestSettings.alpha, check=probability_rule),
        seed=table.get("seed", int, TestSettings.seed, check=seed_rule),
    )
    resamples = table.get("reference_resamples", int, 0, check=count_rule("reference_resamples"))
    table.finish()
    return spec, resamples


def _at_rel_level(root: Table, measures: tuple[str, ...]) -> tuple[str, ...]:
    """``rel_level = N`` (trec_eval's ``-l N``, the CLI's ``--rel-level``): ``rel=N`` on every
    binary measure of ``measures`` that sets no level of its own (docs/pipeline.md)."""
    level = root.get("rel_level", (int, float), None, check=_positive_level)
    if level is None or isinstance(level, bool):
        return measures
    from scoring.measures import with_rel_level

    return tuple(with_rel_level(measures, float(level)))


def _positive_level(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        return "must be a number > 0, e.g. 2 (trec_eval -l 2)"
    return None


def _power(table: Table, measures: Sequence[str], rel_level: Any = None) -> PowerSpec:
    budgets = table.get("budgets", list)
    clean: tuple[int, ...] = ()
    if isinstance(budgets, list):
        if not budgets or not all(
            isinstance(b, int) and not isinstance(b, bool) and b >= 1 for b in budgets
        ):
            table.problems.add(
                table.key("budgets"), f"must be a non-empty list of integers >= 1 (got {budgets!r})"
            )
        else:
            clean = tuple(sorted(set(budgets)))
    chosen = table.strings("measures")
    if _positive_level(rel_level) is None and chosen:  # as the top-level list reads them
        from scoring.measures import with_rel_level

        with contextlib.suppress(UnknownMeasureError):
            chosen = tuple(with_rel_level(chosen, float(rel_level)))
    unknown = [m for m in chosen if m not in measures]
    if unknown:
        table.problems.add(
            table.key("measures"), f"{unknown[0]!r} is not in the top-level measures list"
        )
    spec = PowerSpec(
        budgets=clean,
        subsamples=table.get(
            "subsamples", int, PowerSpec.subsamples, check=count_rule("subsamples")
        ),
        permutations=table.get(
            "permutations", int, PowerSpec.permutations, check=count_rule("permutations")
        ),
        alpha=table.get("alpha", float, PowerSpec.alpha, check=probability_rule),
        seed=table.get("seed", int, PowerSpec.seed, check=seed_rule),
        measures=chosen or tuple(measures),
    )
    table.finish()
    return spec


def _execution(table: Table) -> ExecutionSpec:
    jobs = table.get("jobs", int, 1)
    scheduler = table.get("scheduler", str, None, check=non_empty)
    table.finish(("jobs", "scheduler"))
    # The same checks as ``orlbuild build --jobs/--scheduler``, one problem per key.
    for key, jobs_scheduler in (("jobs", (jobs, None)), ("scheduler", (1, scheduler))):
        try:
            resolve_executor(*jobs_scheduler, environ={})
        except ConfigError as error:
            table.problems.add(table.key(key), str(error))
    return ExecutionSpec(jobs=jobs, scheduler=None if scheduler is None else scheduler.strip())


def _report(table: Table, base: Path) -> ReportSpec:
    path = table.get("path", str, "report.html", check=non_empty)
    title = table.get("title", str, "orlbuild report", check=non_empty)
    table.finish()
    return ReportSpec(path=(base / path).resolve(), title=title)


def _plan(table: Table, base: Path, builds: Sequence[BuildSpec], scored: str) -> PlanSpec:
    from orlbuild.builders.planning.plan_options import check_plan_options
    from orlbuild.builders.tiering.equivalence import check_margin
    from orlbuild.vocabulary import PlanFormat, PlanObjective

    names = tuple(b.name for b in builds if b.source == "pairwise")
    budget = table.get("budget", int)
    output = table.get("output", str, "plan.tsv", check=non_empty)
    build = table.get("build", str, scored, choices=names or None)
    if build and build not in names and "build" not in table.data:
        table.problems.add(
            table.key("build"),
            f"the scored build {build!r} is not pairwise; name a pairwise build to plan for "
            f"({', '.join(names) or 'none: add a [[builds]] with source = pairwise'})",
        )
    max_per_query = table.get("max_per_query", int, None)
    repeat_limit = table.get("repeat_limit", int, PlanSettings.repeat_limit)
    seed = table.get("seed", int, PlanSettings.seed)
    objective = table.get("objective", str, "tiers", choices=values(PlanObjective))
    margin: float | None = table.get("margin", (int, float), None)
    table.finish()
    path = (base / output).resolve()
    if path.suffix.lstrip(".").lower() not in values(PlanFormat):
        table.problems.add(
            table.key("output"), f"must end in .{', .'.join(values(PlanFormat))} (got {output!r})"
        )
    # the same checks as `orlbuild plan`, one problem per key
    checks: list[tuple[str, Callable[[], object]]] = [
        ("max_per_query", lambda: check_plan_options(0, max_per_query, 1)),
        ("repeat_limit", lambda: check_plan_options(0, None, repeat_limit)),
        ("margin", lambda: check_margin(None if margin is None else float(margin))),
    ]
    if isinstance(budget, int):
        checks.append(("budget", lambda: check_plan_options(budget, None, 1)))
    for key, check in checks:
        try:
            check()
        except ConfigError as exc:
            table.problems.add(table.key(key), str(exc))
    settings = PlanSettings(
        budget=budget if isinstance(budget, int) else 0,
        max_per_query=max_per_query,
        repeat_limit=repeat_limit if isinstance(repeat_limit, int) else PlanSettings.repeat_limit,
        seed=seed if isinstance(seed, int) else PlanSettings.seed,
        objective=objective or PlanSettings.objective,
        margin=None if margin is None else float(margin),
    )
    return PlanSpec(settings=settings, output=path, build=build or "")


def pipeline_inputs(
    source: Path, database_url: str, inputs: Sequence[InputSpec]
) -> list[tuple[str, Path]]:
    """What the pipeline reads or stores, which its report must never overwrite.

    Parameters
    ----------
    source
        The config file.
    database_url
        The database the pipeline uses (its SQLite files are protected).
    inputs
        The ``[[inputs]]``.
    """
    protected = [("the pipeline config", source)]
    protected += [("the store", path) for path in sqlite_store_files(database_url)]
    protected += [(f"an input ({spec.kind})", spec.path) for spec in inputs]
    return protected


def _check_output_path(
    problems: Problems, key: str, path: Path, protected: list[tuple[str, Path]]
) -> None:
    try:
        check_output(path, protected=protected)
    except ConfigError as error:
        problems.add(key, str(error))


def _cross_checks(
    problems: Problems, inputs: Sequence[InputSpec], builds: Sequence[BuildSpec]
) -> None:
    seen: set[str] = set()
    for index, build in enumerate(builds):
        if build.name in seen:
            problems.add(f"builds[{index}].name", f"{build.name!r} is used by another build")
        seen.add(build.name)
        have = {(i.kind, i.collection) for i in inputs}
        if build.source and (build.source, build.collection) not in have:
            problems.add(
                f"builds[{index}].source",
                f"no [[inputs]] of kind {build.source!r} in collection {build.collection!r}",
            )
    systems: dict[tuple[str, str], InputSpec] = {}
    for spec in inputs:
        if spec.kind != "run" or spec.system is None:
            continue
        key = (spec.collection, spec.system)
        if key in systems:
            other = systems[key]
            problems.add(
                f"{spec.key}.system",
                f"{spec.system!r} already has a run in {other.key} ({other.path.name}): "
                f"{spec.path.name} would be a second one (one run per system)",
            )
        systems[key] = spec
