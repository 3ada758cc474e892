"""The relational schema of the judgment store (SQLAlchemy 2 declarative models).

The Alembic migrations under ``migrations/`` are the source of the schema that
databases actually get; these models describe the same schema for queries and
for ``alembic revision --autogenerate``. A test compares the two and fails
when they disagree.

Every judgment row points at the :class:`IngestBatch` (one input file) it came
from, so that a build can record exactly which batches it read and a batch can
be deleted as a whole. Names (queries, items, annotators, systems) are unique
within a :class:`Collection`; facts refer to them by integer id.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, declared_attr, mapped_column

__all__ = [
    "BATCH_KINDS",
    "JUDGMENT_MODELS",
    "NAME_LENGTH",
    "NAME_MODELS",
    "TEXT_OF",
    "Annotator",
    "AnnotatorReliabilityRow",
    "Base",
    "Build",
    "BuildBatch",
    "BuildMessage",
    "BuildOverride",
    "Collection",
    "Evaluation",
    "EvaluationValue",
    "GradedJudgment",
    "IngestBatch",
    "Item",
    "ItemText",
    "ListwiseJudgment",
    "OrlEntry",
    "PairwiseJudgment",
    "PosteriorBoundaryRow",
    "Query",
    "QueryPosteriorRow",
    "QueryText",
    "RunEntry",
    "System",
    "TextBatch",
    "TieDecisionRow",
]

#: Longest identifier (query, item, annotator, system, collection) the store accepts.
NAME_LENGTH = 512

#: The kinds of ingest batch, one per input format family.
BATCH_KINDS = ("listwise", "pairwise", "graded", "run")

# Deterministic constraint names, so that migrations can refer to them on every dialect.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Declarative base of every orlbuild table (shared by later issues' models)."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Collection(Base):
    """A namespace of queries, items, annotators and systems (default ``default``)."""

    __tablename__ = "collections"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False, unique=True)


#: The type of a query, item, annotator or system name: compared byte by byte on
#: PostgreSQL too (``COLLATE "C"``, migration 0011_c_collation_names), as SQLite's
#: ``BINARY`` collation does, so that ordering names gives the same order on both
#: backends and the unique name indexes build fast.
NAME_TYPE = String(NAME_LENGTH).with_variant(String(NAME_LENGTH, collation="C"), "postgresql")


class _NamedInCollection:
    """Columns of a name table: an id, the owning collection, a name unique within it.

    The uniqueness is the named unique index ``uq_<table>_collection_id_name``
    rather than a table constraint (migration 0010_bulk_load_keys), so that
    the first ingest into an empty name table can build it once after its
    inserts (:mod:`orlbuild.store.bulk`); ``collection_id`` is not a declared
    foreign key, for the reason given in :func:`_ref` (collections are never
    deleted).
    """

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    collection_id: Mapped[int] = mapped_column(Integer, nullable=False)
    name: Mapped[str] = mapped_column(NAME_TYPE, nullable=False)

    @declared_attr.directive
    def __table_args__(cls) -> tuple[Index]:
        """A fresh index per table (an index object belongs to one table)."""
        return (
            Index(
                f"uq_{cls.__tablename__}_collection_id_name",  # type: ignore[attr-defined]
                "collection_id",
                "name",
                unique=True,
            ),
        )


class Query(_NamedInCollection, Base):
    """A query (topic) of a collection."""

    __tablename__ = "queries"


class Item(_NamedInCollection, Base):
    """A judged or retrieved item (document, passage, product...) of a collection."""

    __tablename__ = "items"


class Annotator(_NamedInCollection, Base):
    """A person or process that produced judgments (``_`` when the file names none)."""

    __tablename__ = "annotators"


class System(_NamedInCollection, Base):
    """A ranking system whose runs are scored against ORLs."""

    __tablename__ = "systems"


class IngestBatch(Base):
    """One ingested file: its kind, name, content hash and size, who and when.

    Identical content (same ``sha256``) of the same kind is stored only once
    per collection; ingesting it again is a no-op when the reading keeps the
    same rows (same ``reading_sha256``), and refused otherwise.
    """

    __tablename__ = "ingest_batches"
    __table_args__ = (
        UniqueConstraint("collection_id", "kind", "sha256"),
        CheckConstraint("kind IN ('listwise', 'pairwise', 'graded', 'run')", name="kind"),
        CheckConstraint("row_count >= 0", name="row_count"),
        # ids are never reused after a delete (migration 0017_batch_ids_never_reused)
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    collection_id: Mapped[int] = mapped_column(
        ForeignKey("collections.id", ondelete="CASCADE"), nullable=False, index=True
    )
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    file_name: Mapped[str] = mapped_column(String(1024), nullable=False)
    sha256: Mapped[str] = mapped_column(String(64), nullable=False)
    row_count: Mapped[int] = mapped_column(Integer, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    created_by: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    system_id: Mapped[int | None] = mapped_column(
        ForeignKey("systems.id", ondelete="CASCADE"), nullable=True, index=True
    )
    # what the reading kept (migration 0005_batch_reading); NULL on older batches
    reading_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    reading: Mapped[str | None] = mapped_column(String(200), nullable=True)


def _batch_fk() -> Mapped[int]:
    """A non-null id of the batch a fact came from (indexed; not a declared foreign key).

    Like the name references (:func:`_ref`), it is written only by
    :func:`orlbuild.store.batches.store_batch` with the id of the batch row it
    inserted in the same transaction; PostgreSQL's per-row check of a foreign
    key was about half the time of a fact insert (migration
    0010_bulk_load_keys). :func:`orlbuild.store.batches.delete_batch` deletes a
    batch's facts with it.
    """
    return mapped_column(Integer, nullable=False, index=True)


def _ref(table: str, *, index: bool = False) -> Mapped[int]:
    """A non-null id of a row of the name table ``table`` (not a declared foreign key).

    Facts refer to queries, items and annotators by id without a FOREIGN KEY
    constraint: PostgreSQL checks each one with a trigger per inserted row,
    which made bulk ingestion four times slower (about 40 s instead of 8 s
    per million pairwise rows, five references each). The ids are written
    only by :func:`orlbuild.store.batches.store_batch`, which obtains them in
    the same transaction, and name rows are never deleted on their own (only
    with their collection, whose batches and facts go with it).
    """
    return mapped_column(Integer, nullable=False, index=index)


class ListwiseJudgment(Base):
    """An annotator's tier (1 = best) for one item of one query."""

    __tablename__ = "listwise_judgments"
    __table_args__ = (CheckConstraint("rank >= 1", name="rank"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    batch_id: Mapped[int] = _batch_fk()
    query_id: Mapped[int] = _ref("queries", index=True)
    annotator_id: Mapped[int] = _ref("annotators")
    item_id: Mapped[int] = _ref("items")
    rank: Mapped[int] = mapped_column(Integer, nullable=False)


class PairwiseJudgment(Base):
    """A preference ``winner > loser`` for one query, or a tie when ``tie`` is true.

    ``count`` is how many times the outcome happened (a count table's row;
    migration 0006_pairwise_count; 1 for every row stored before it).
    ``winner_first`` says which item was shown first, where the input's shape
    says it (arena, evalica, crowd-kit): true when the winner (for a tie, the
    item given first) was, false when the loser was; NULL when the shape does
    not say and for rows stored before migration 0009_presentation_order.
    """

    __tablename__ = "pairwise_judgments"
    __table_args__ = (
        CheckConstraint("winner_id <> loser_id", name="distinct_items"),
        CheckConstraint("count >= 1", name="count"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    batch_id: Mapped[int] = _batch_fk()
    query_id: Mapped[int] = _ref("queries", index=True)
    annotator_id: Mapped[int] = _ref("annotators")
    winner_id: Mapped[int] = _ref("items")
    loser_id: Mapped[int] = _ref("items")
    tie: Mapped[bool] = mapped_column(Boolean, nullable=False)
    count: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("1"))
    winner_first: Mapped[bool | None] = mapped_column(Boolean, nullable=True)


class GradedJudgment(Base):
    """A graded relevance label (0 = judged not relevant)."""

    __tablename__ = "graded_judgments"
    __table_args__ = (CheckConstraint("grade >= 0", name="grade"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    batch_id: Mapped[int] = _batch_fk()
    query_id: Mapped[int] = _ref("queries", index=True)
    annotator_id: Mapped[int] = _ref("annotators")
    item_id: Mapped[int] = _ref("items")
    grade: Mapped[int] = mapped_column(Integer, nullable=False)


class RunEntry(Base):
    """One retrieved item of a system's run: its rank (as in the file) and optional score."""

    __tablename__ = "run_entries"
    __table_args__ = (
        UniqueConstraint("system_id", "query_id", "item_id"),
        # TREC runs often count ranks from 0; the score decides the order anyway.
        CheckConstraint("rank >= 0", name="rank"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    batch_id: Mapped[int] = _batch_fk()
    system_id: Mapped[int] = mapped_column(
        ForeignKey("systems.id", ondelete="CASCADE"), nullable=False
    )
    query_id: Mapped[int] = _ref("queries", index=True)
    item_id: Mapped[int] = _ref("items")
    rank: Mapped[int] = mapped_column(Integer, nullable=False)
    score: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)


#: The table of each vocabulary of names (the ``names`` of a batch's chunks, and
#: ``orlbuild status``'s counts).
NAME_MODELS: dict[str, Any] = {"annotators": Annotator, "queries": Query, "items": Item}

#: The table of each judgment kind's rows (a run's are :class:`RunEntry`).
JUDGMENT_MODELS: dict[str, Any] = {
    "listwise": ListwiseJudgment,
    "pairwise": PairwiseJudgment,
    "graded": GradedJudgment,
}


# --- query and item text (migration 0012_item_texts) ---------------------------------------

#: Whose text a text batch holds (``orlbuild ingest text --of``).
TEXT_OF = ("queries", "items")


class TextBatch(Base):
    """One ingested text file (``orlbuild ingest text``): the texts it added or replaced.

    A text batch holds only the texts that were new to the collection or that
    replaced a stored one (``--replace``); the texts it found already stored
    are counted, not stored twice. The text of a query or an item is the one
    of its newest batch, so deleting a replacing batch brings the replaced
    text back (docs/input-formats.md, "Query and item text").
    """

    __tablename__ = "text_batches"
    __table_args__ = (
        CheckConstraint("of IN ('queries', 'items')", name="of"),
        CheckConstraint("row_count >= 0", name="row_count"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    collection_id: Mapped[int] = mapped_column(
        ForeignKey("collections.id", ondelete="CASCADE"), nullable=False, index=True
    )
    of: Mapped[str] = mapped_column(String(16), nullable=False)
    format: Mapped[str] = mapped_column(String(16), nullable=False)
    file_name: Mapped[str] = mapped_column(String(1024), nullable=False)
    sha256: Mapped[str] = mapped_column(String(64), nullable=False)
    row_count: Mapped[int] = mapped_column(Integer, nullable=False)
    replaced: Mapped[int] = mapped_column(Integer, nullable=False)
    lines_read: Mapped[int] = mapped_column(Integer, nullable=False)
    reading: Mapped[str] = mapped_column(String(200), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    created_by: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)


def _text_batch_fk() -> Mapped[int]:
    """The text batch a text came from (deleted with it)."""
    return mapped_column(
        ForeignKey("text_batches.id", ondelete="CASCADE"), nullable=False, index=True
    )


class QueryText(Base):
    """The text of a query (a TREC topic's title), with its description and narrative."""

    __tablename__ = "query_texts"
    __table_args__ = (UniqueConstraint("batch_id", "query_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    batch_id: Mapped[int] = _text_batch_fk()
    query_id: Mapped[int] = _ref("queries", index=True)
    text: Mapped[str] = mapped_column(Text, nullable=False)
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    narrative: Mapped[str | None] = mapped_column(Text, nullable=True)


class ItemText(Base):
    """The title, text and URL of an item (a passage, a document)."""

    __tablename__ = "item_texts"
    __table_args__ = (UniqueConstraint("batch_id", "item_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    batch_id: Mapped[int] = _text_batch_fk()
    item_id: Mapped[int] = _ref("items", index=True)
    title: Mapped[str | None] = mapped_column(Text, nullable=True)
    text: Mapped[str] = mapped_column(Text, nullable=False)
    url: Mapped[str | None] = mapped_column(Text, nullable=True)


# --- builds -------------------------------------------------------------------------------


class Build(Base):
    """One immutable ORL build."""

    __tablename__ = "builds"
    __table_args__ = (
        CheckConstraint("source IN ('graded', 'listwise', 'pairwise')", name="source"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    collection_id: Mapped[int] = mapped_column(
        ForeignKey("collections.id", ondelete="CASCADE"), nullable=False, index=True
    )
    name: Mapped[str | None] = mapped_column(String(NAME_LENGTH), nullable=True, index=True)
    source: Mapped[str] = mapped_column(String(16), nullable=False)
    method: Mapped[str] = mapped_column(String(32), nullable=False)
    parameters: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False)
    package_version: Mapped[str] = mapped_column(String(64), nullable=False)
    seed: Mapped[int] = mapped_column(Integer, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    created_by: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    parent_id: Mapped[int | None] = mapped_column(
        ForeignKey("builds.id", ondelete="SET NULL"), nullable=True, index=True
    )
    n_queries: Mapped[int] = mapped_column(Integer, nullable=False)
    n_failed: Mapped[int] = mapped_column(Integer, nullable=False)
    # the empirical-Bayes prior of the posterior pass (migration 0015_posterior_evidence)
    posterior_lambda: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    posterior_tau: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)


class BuildBatch(Base):
    """An ingest batch a build read (its hash is kept even if the batch is force-deleted)."""

    __tablename__ = "build_batches"
    __table_args__ = (UniqueConstraint("build_id", "sha256", "kind"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    build_id: Mapped[int] = mapped_column(
        ForeignKey("builds.id", ondelete="CASCADE"), nullable=False, index=True
    )
    batch_id: Mapped[int | None] = mapped_column(
        ForeignKey("ingest_batches.id"), nullable=True, index=True
    )
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    file_name: Mapped[str] = mapped_column(String(1024), nullable=False)
    sha256: Mapped[str] = mapped_column(String(64), nullable=False)
    row_count: Mapped[int] = mapped_column(Integer, nullable=False)


class OrlEntry(Base):
    """One item of one query's ORL in a build."""

    __tablename__ = "orl_entries"
    __table_args__ = (
        UniqueConstraint("build_id", "query", "item"),
        CheckConstraint("rank >= 1", name="rank"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    build_id: Mapped[int] = mapped_column(
        ForeignKey("builds.id", ondelete="CASCADE"), nullable=False, index=True
    )
    query: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    item: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    rank: Mapped[int] = mapped_column(Integer, nullable=False)
    score: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    low: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    high: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    native_grade: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    # placed by its estimate, its orders not backed (migration 0007_backed_orders)
    under_judged: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    # posterior probability of the top segment (migration 0015_posterior_evidence)
    top_probability: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)


class QueryPosteriorRow(Base):
    """One query's posterior risk in a build: ``E``, ``N`` and, for ``posterior``, ``K_feas``
    and ``K_post`` (docs/tiers-and-audit.md, "The posterior computation")."""

    __tablename__ = "query_posteriors"
    __table_args__ = (UniqueConstraint("build_id", "query"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    build_id: Mapped[int] = mapped_column(
        ForeignKey("builds.id", ondelete="CASCADE"), nullable=False, index=True
    )
    query: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    expected_wrong: Mapped[float] = mapped_column(Float(precision=53), nullable=False)
    stated_orders: Mapped[int] = mapped_column(Integer, nullable=False)
    k_feasible: Mapped[int | None] = mapped_column(Integer, nullable=True)
    k_posterior: Mapped[int | None] = mapped_column(Integer, nullable=True)


class QueryOrdersRow(Base):
    """One query's stated cross-tier orders and those no test backs, for a build whose
    tiering tested its boundaries (migration 0019_query_facts; docs/tiers-and-audit.md,
    "How tiers are decided and audited"). No row: no test ran, or the build was stored
    before the facts were columns and stated no unbacked order."""

    __tablename__ = "query_orders"
    __table_args__ = (UniqueConstraint("build_id", "query"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    build_id: Mapped[int] = mapped_column(
        ForeignKey("builds.id", ondelete="CASCADE"), nullable=False, index=True
    )
    query: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    stated_orders: Mapped[int] = mapped_column(Integer, nullable=False)
    unbacked_orders: Mapped[int] = mapped_column(Integer, nullable=False)


class PosteriorBoundaryRow(Base):
    """The posterior probability of a tier boundary at one gap of a component's score order."""

    __tablename__ = "posterior_boundaries"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    build_id: Mapped[int] = mapped_column(
        ForeignKey("builds.id", ondelete="CASCADE"), nullable=False, index=True
    )
    query: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    component: Mapped[int] = mapped_column(Integer, nullable=False)
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    above: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    below: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    probability: Mapped[float] = mapped_column(Float(precision=53), nullable=False)
    stated: Mapped[bool] = mapped_column(Boolean, nullable=False)


class TieDecisionRow(Base):
    """One stored tie-or-separate decision (docs/tiers-and-audit.md, "Audit")."""

    __tablename__ = "tie_decisions"
    __table_args__ = (CheckConstraint("decision IN ('tied', 'separated')", name="decision"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    build_id: Mapped[int] = mapped_column(
        ForeignKey("builds.id", ondelete="CASCADE"), nullable=False, index=True
    )
    query: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    leader: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    item: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    score_leader: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    score_item: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    diff: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    se: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    p_value: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    decision: Mapped[str] = mapped_column(String(16), nullable=False)
    rule: Mapped[str] = mapped_column(String(256), nullable=False)
    variance: Mapped[str] = mapped_column(String(64), nullable=False)
    # the --tiering evidence (migration 0004_tiering); NULL on older builds
    procedure: Mapped[str | None] = mapped_column(String(16), nullable=True)
    family_size: Mapped[int | None] = mapped_column(Integer, nullable=True)
    critical: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    z: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    bic_penalty: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    loglik_gain: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    bic_change: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    # a boundary's weakest crossing pair and unbacked orders (migration 0007_backed_orders)
    weakest_above: Mapped[str | None] = mapped_column(String(NAME_LENGTH), nullable=True)
    weakest_below: Mapped[str | None] = mapped_column(String(NAME_LENGTH), nullable=True)
    weakest_z: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    weakest_critical: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    crossing_pairs: Mapped[int | None] = mapped_column(Integer, nullable=True)
    unbacked_pairs: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # separated / equivalent / undecided (migration 0008_pair_states); NULL: no test, older builds
    state: Mapped[str | None] = mapped_column(String(16), nullable=True)


class AnnotatorReliabilityRow(Base):
    """One annotator's fitted reliability in a build (``--annotators reliability``)."""

    __tablename__ = "annotator_reliabilities"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    build_id: Mapped[int] = mapped_column(
        ForeignKey("builds.id", ondelete="CASCADE"), nullable=False, index=True
    )
    annotator: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    reliability: Mapped[float] = mapped_column(Float(precision=53), nullable=False)
    low: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    high: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)
    comparisons: Mapped[float] = mapped_column(Float(precision=53), nullable=False)
    flips: Mapped[int | None] = mapped_column(Integer, nullable=True)


class BuildOverride(Base):
    """An auditor's override that derived this build from its parent."""

    __tablename__ = "build_overrides"
    __table_args__ = (CheckConstraint("action IN ('merge-tiers', 'split-at')", name="action"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    build_id: Mapped[int] = mapped_column(
        ForeignKey("builds.id", ondelete="CASCADE"), nullable=False, index=True
    )
    parent_id: Mapped[int | None] = mapped_column(
        ForeignKey("builds.id", ondelete="SET NULL"), nullable=True
    )
    query: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    action: Mapped[str] = mapped_column(String(16), nullable=False)
    argument: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    reason: Mapped[str] = mapped_column(Text, nullable=False)
    created_by: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


class BuildMessage(Base):
    """A per-query failure or warning of a build (``query`` empty for build-level notes)."""

    __tablename__ = "build_messages"
    __table_args__ = (CheckConstraint("kind IN ('failure', 'warning')", name="kind"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    build_id: Mapped[int] = mapped_column(
        ForeignKey("builds.id", ondelete="CASCADE"), nullable=False, index=True
    )
    query: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    message: Mapped[str] = mapped_column(Text, nullable=False)


# --- saved evaluations ----------------------------------------------------------------------


class Evaluation(Base):
    """One saved evaluation: a system's run scored against one build."""

    __tablename__ = "evaluations"
    __table_args__ = (CheckConstraint("missing IN ('zero', 'skip')", name="missing"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    build_id: Mapped[int] = mapped_column(
        ForeignKey("builds.id", ondelete="CASCADE"), nullable=False, index=True
    )
    system: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False, index=True)
    run_file: Mapped[str | None] = mapped_column(String(1024), nullable=True)
    measures: Mapped[list[str]] = mapped_column(JSON, nullable=False)
    means: Mapped[dict[str, float | None]] = mapped_column(JSON, nullable=False)
    missing: Mapped[str] = mapped_column(String(8), nullable=False)
    conventions: Mapped[dict[str, str]] = mapped_column(JSON, nullable=False)
    n_queries: Mapped[int] = mapped_column(Integer, nullable=False)
    package_version: Mapped[str] = mapped_column(String(64), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    created_by: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)


class EvaluationValue(Base):
    """One per-query value of one measure in a saved evaluation (NULL: undefined)."""

    __tablename__ = "evaluation_values"
    __table_args__ = (UniqueConstraint("evaluation_id", "query", "measure"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    evaluation_id: Mapped[int] = mapped_column(
        ForeignKey("evaluations.id", ondelete="CASCADE"), nullable=False, index=True
    )
    query: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    measure: Mapped[str] = mapped_column(String(NAME_LENGTH), nullable=False)
    value: Mapped[float | None] = mapped_column(Float(precision=53), nullable=True)


# The tables of ``orlbuild serve`` share this Base (migration 0018_web_rounds).
from orlbuild.store import web_models as _web_models  # noqa: E402, F401
