"""The words orlbuild understands: one :class:`~enum.Enum` per option.

The input kinds, the build options, the output and export formats: the Typer
options, the pipeline TOML validator (:mod:`orlbuild.pipeline.config`) and
:func:`~orlbuild.builders.parameters.resolve_parameters` all take their
allowed values from here, so they cannot drift (docs/development.md, "Development"). The
scoring words live in :mod:`scoring.vocabulary`. Members are ``str`` enums:
``Uncertainty.ep == "ep"``, and the stored build parameters stay plain strings.
"""

from __future__ import annotations

from enum import Enum

from scoring.vocabulary import Word

__all__ = [
    "DEFAULT_COLLECTION",
    "AnnotatorWeighting",
    "Cluster",
    "CompareFormat",
    "CompareTable",
    "Disconnected",
    "ExecutorKind",
    "ExportFormat",
    "GradeAggregate",
    "InputFormat",
    "InputKind",
    "Method",
    "NotApplicable",
    "OnError",
    "OpenDecision",
    "OutputFormat",
    "PairState",
    "PlanDesign",
    "PlanFormat",
    "PlanObjective",
    "QueryStatus",
    "Resample",
    "ScoresFileFormat",
    "SimulatedMethod",
    "Solver",
    "Source",
    "SystemNameSource",
    "SystemOrder",
    "TextFormat",
    "TextOf",
    "TieModel",
    "TieringProcedure",
    "Uncertainty",
    "UndefinedPanels",
    "values",
]


#: The collection judgments, runs and builds belong to when none is named.
DEFAULT_COLLECTION = "default"


class InputKind(Word):
    """What an input file holds (``orlbuild ingest KIND``, the pipeline's ``[[inputs]] kind``)."""

    listwise = "listwise"
    pairwise = "pairwise"
    graded = "graded"
    run = "run"


class TextOf(Word):
    """``orlbuild ingest text --of``: whose text a file holds (docs/input-formats.md, "Query and
    item text")."""

    queries = "queries"
    items = "items"


class TextFormat(Word):
    """``orlbuild ingest text --format``: the shapes of a text file, sniffed when not given
    (docs/input-formats.md, "Query and item text")."""

    tsv = "tsv"
    title_tsv = "title-tsv"
    jsonl = "jsonl"
    trec_topics = "trec-topics"


class SystemNameSource(Word):
    """``orlbuild ingest run --system-from`` (the pipeline's ``system_from``): where a run's
    system name comes from when ``--system`` does not give it (docs/input-formats.md,
    "System names of runs")."""

    tag = "tag"
    stem = "stem"


class OutputFormat(Word):
    """``--format`` of every command that prints a table."""

    table = "table"
    csv = "csv"
    json = "json"


class CompareFormat(Word):
    """``orlbuild compare --format``: the shared formats, and the leaderboard as a Markdown
    or LaTeX table to paste into a paper."""

    table = "table"
    csv = "csv"
    json = "json"
    markdown = "markdown"
    latex = "latex"


class CompareTable(Word):
    """``orlbuild compare --table``: the table ``--format csv`` writes to standard output."""

    pairs = "pairs"
    leaderboard = "leaderboard"


class SystemOrder(Word):
    """``--sort`` of ``eval`` and ``compare``: systems by the first measure's mean, best first
    (the default), or as given (``name``: the order of the files or ``--system`` options)."""

    mean = "mean"
    given = "name"


class ScoresFileFormat(Word):
    """``orlbuild results export --format``: per-query values (csv) or the full document."""

    csv = "csv"
    json = "json"


class ExportFormat(Word):
    """``orlbuild orl export --format`` (docs/input-formats.md, "Input formats": ORL exports)."""

    json = "json"
    tsv = "tsv"
    qrels = "qrels"
    trec_prefs = "trec-prefs"


class UndefinedPanels(Word):
    """A measure no query defines for every system: an error, or left out (the report)."""

    error = "error"
    drop = "drop"


class Source(Word):
    """``--source``: which judgments a build reads."""

    graded = "graded"
    listwise = "listwise"
    pairwise = "pairwise"


class Method(Word):
    """``--method``: how a build orders items; which apply to which source is ``METHODS`` in
    :mod:`orlbuild.builders.parameters`."""

    graded = "graded"
    direct = "direct"
    bt = "bt"
    plackett_luce = "plackett-luce"
    borda = "borda"
    rank_centrality = "rank-centrality"


class SimulatedMethod(Word):
    """``orlbuild calibrate --method``: the pairwise methods the tiering simulation builds with."""

    bt = "bt"
    rank_centrality = "rank-centrality"


class GradeAggregate(Word):
    """``--grade-agg``: how the graded route combines annotators' grades (median first: default)."""

    median = "median"
    mean = "mean"
    max = "max"
    majority = "majority"


class Uncertainty(Word):
    """``--uncertainty``: how item-score uncertainty is estimated (``none``: direct and graded)."""

    fisher = "fisher"
    bootstrap = "bootstrap"
    ep = "ep"
    none = "none"


class TieringProcedure(Word):
    """``--tiering``: how tiers are decided from scored items (docs/tiers-and-audit.md, "How
    tiers are decided and audited"); ``posterior`` is the default of ``bt``, ``simultaneous``
    of the other scored methods."""

    posterior = "posterior"
    simultaneous = "simultaneous"
    model = "model"
    leader = "leader"


class TieModel(Word):
    """``--ties``: a recorded pairwise tie is half a win each way (default), or Davidson's tie
    model with its parameter estimated per query (docs/tiers-and-audit.md, "Build routes")."""

    half = "half"
    davidson = "davidson"
    none = "none"


class AnnotatorWeighting(Word):
    """``--annotators``: every annotator counts the same (default), or each gets a reliability
    fitted with the strengths (Crowd-BT; docs/tiers-and-audit.md, "Build routes")."""

    equal = "equal"
    reliability = "reliability"
    none = "none"


class Cluster(Word):
    """``--cluster``: clustered sandwich covariance by annotator, or none."""

    none = "none"
    annotators = "annotators"


class Resample(Word):
    """``--resample``: the bootstrap unit."""

    comparisons = "comparisons"
    annotators = "annotators"


class Solver(Word):
    """``--solver``: Bradley-Terry / Plackett-Luce solver (``ilsr`` first: default)."""

    ilsr = "ilsr"
    opt = "opt"
    mm = "mm"


class Disconnected(Word):
    """``--disconnected``: a query whose comparison graph is disconnected fails, or is tiered
    per component."""

    fail = "fail"
    tiers = "tiers"


class OnError(Word):
    """``--on-error``: a query that cannot be ordered stops the build (nothing is stored), or is
    skipped and listed."""

    stop = "stop"
    skip = "skip"


class NotApplicable(Word):
    """The word a resolved build stores for an option its method does not take (``--solver`` of
    a Rank Centrality build, ``--tiering`` of a graded one), so that every option is named.
    Vocabularies whose users choose ``none`` (``Uncertainty``, ``Cluster``) say it themselves."""

    none = "none"


class PairState(str, Enum):
    """What the evidence says about a pair of items (docs/planning.md, "Planning the next
    judgments"): shown to differ, shown equivalent within ``--margin``, or neither."""

    separated = "separated"
    equivalent = "equivalent"
    undecided = "undecided"


class OpenDecision(str, Enum):
    """What a planned judgment serves: a boundary not yet backed by a separated test, a tie
    not yet shown equivalent (or settled), an item too poorly measured to place."""

    boundary = "boundary"
    tie = "tie"
    item = "item"


class PlanObjective(str, Enum):
    """``orlbuild plan --objective``: decide every tier, or the top tier first."""

    tiers = "tiers"
    top = "top"


class QueryStatus(str, Enum):
    """A query's planning status: no open decision worth a judgment, or open ones left."""

    settled = "settled"
    open = "open"


class PlanFormat(str, Enum):
    """``orlbuild plan --format``: the arena shape as TSV, CSV or JSONL, or one JSON document."""

    tsv = "tsv"
    csv = "csv"
    jsonl = "jsonl"
    json = "json"


class PlanDesign(str, Enum):
    """How simulated judgments are spent (``orlbuild calibrate --design``)."""

    complete = "complete"
    uniform = "uniform"
    planned = "planned"


class SimulatedScenario(Word):
    """``orlbuild calibrate --design --scenario``: what the simulated queries are."""

    mixed = "mixed"
    equal = "equal"
    sparse = "sparse"


class InputFormat(str, Enum):
    """File formats of docs/input-formats.md, "Input formats" (``--format`` values)."""

    tsv = "tsv"
    csv = "csv"
    jsonl = "jsonl"
    # A JSON array of objects (LMArena's clean_battle_*.json); read as a stream.
    json = "json"
    qrels = "qrels"
    trec = "trec"
    # Pairwise shapes (docs/input-formats.md, "Input formats"): arena is tabular (syntax from the
    # extension), the other two are headerless and whitespace-separated.
    arena = "arena"
    prefs_release = "prefs-release"
    trec_prefs = "trec-prefs"


class ExecutorKind(str, Enum):
    """Where the work runs: in this process, in worker processes or on a Dask cluster."""

    SERIAL = "serial"
    PROCESSES = "processes"
    DASK = "dask"


def values(vocabulary: type[Enum]) -> tuple[str, ...]:
    """The allowed words of ``vocabulary``, in declaration order."""
    return tuple(str(member.value) for member in vocabulary)


class JudgeOrders(str, Enum):
    """``orlbuild judge --orders``: ask each pair in both presentation orders, or in one at random.

    docs/llm-judges.md, "Both orders".
    """

    both = "both"
    random = "random"


class Verdict(str, Enum):
    """What an LLM judge's answer is parsed to (docs/llm-judges.md, "Parsing the answer")."""

    a = "a"
    b = "b"
    tie = "tie"
    unparseable = "unparseable"


class Disagreement(str, Enum):
    """``orlbuild judge --disagreement``: how a pair whose two orders disagree is written.

    ``keep``: both judgments as answered; ``tie``: one tie in their place
    (docs/llm-judges.md, "Both orders in the likelihood").
    """

    keep = "keep"
    tie = "tie"
