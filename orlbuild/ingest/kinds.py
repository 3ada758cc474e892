"""The four kinds of input: their columns, per-chunk conversion and whole-file checks.

Per chunk, string columns become typed arrays and names become integer codes
of per-file vocabularies (so a million rows cost a few arrays, not a million
objects). After the whole file is read, checks that span rows run on those
arrays: consecutive listwise ranks, an item twice in one list, conflicting
grades, a repeated (query, item) in a run. Each names the line and value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NoReturn

import numpy as np
import pandas as pd

from orlbuild.errors import InputError
from orlbuild.ingest.fields import (
    finite_floats,
    flags,
    identifier_codes,
    identifier_pair_codes,
    integers,
)
from orlbuild.ingest.name_codes import Vocabularies
from orlbuild.ingest.rows import Column, ColumnChunk, RecordLayout
from orlbuild.ingest.run_order import rank_order_note
from orlbuild.vocabulary import InputFormat, InputKind
from scoring.run import comparable_scores
from scoring.vocabulary import (  # the run vocabulary is the scoring core's
    DuplicatePolicy,
    ScorePrecisionName,
)

__all__ = [
    "DEFAULT_ANNOTATOR",
    "DEFAULT_QUERY",
    "KINDS",
    "NAME_COLUMNS",
    "Facts",
    "FileCheck",
    "IngestKind",
]

#: Annotator of rows whose file names none.
DEFAULT_ANNOTATOR = "_"

#: Query of the rows of a pairwise shape without a query column (evalica,
#: crowd-kit) when no ``--query`` names one.
DEFAULT_QUERY = "_"

#: Column name -> aligned array (names as vocabulary codes).
Facts = dict[str, np.ndarray]

#: Fact columns that refer to names, and the vocabulary (name table) each indexes.
NAME_COLUMNS = {
    "query_id": "queries",
    "annotator_id": "annotators",
    "item_id": "items",
    "winner_id": "items",
    "loser_id": "items",
}


@dataclass(frozen=True)
class FileCheck:
    """What a whole-file check reads besides the facts: their line numbers, the file's label
    and vocabularies, the duplicate policy and score precision (runs only), and the list that
    receives notes."""

    lines: np.ndarray
    label: str
    vocab: Vocabularies
    policy: DuplicatePolicy
    precision: ScorePrecisionName
    notes: list[str]

    def fail(self, reason: str, line: int, value: object, hint: str) -> NoReturn:
        """Raise the :class:`InputError` of a problem on ``line`` of the file."""
        raise InputError(reason, file=self.label, line=line, value=value, hint=hint)

    def frame(self, facts: Facts) -> pd.DataFrame:
        """The facts and line numbers as one DataFrame (in file order)."""
        return pd.DataFrame({**facts, "line": self.lines})


#: A chunk parser: the chunk, the file's label, the vocabularies.
Parser = Callable[[ColumnChunk, str, Vocabularies], Facts]


@dataclass(frozen=True)
class IngestKind:
    """One kind of input: layout (and other shapes), chunk parser and whole-file check.

    ``checker`` returns the facts to store and how many rows it dropped.
    ``alternatives`` are further shapes of the same kind (pairwise: arena,
    prefs-release, trec-prefs); the chunk's ``shape`` tells ``parse`` which.
    """

    name: str
    layout: RecordLayout
    parse: Parser
    checker: Callable[[Facts, FileCheck], tuple[Facts, int]]
    alternatives: tuple[RecordLayout, ...] = ()

    @property
    def layouts(self) -> tuple[RecordLayout, ...]:
        """Every shape of the kind, the native one first."""
        return (self.layout, *self.alternatives)

    def check(
        self,
        facts: Facts,
        lines: np.ndarray,
        label: str,
        vocab: Vocabularies,
        policy: DuplicatePolicy,
        precision: ScorePrecisionName,
        notes: list[str],
    ) -> tuple[Facts, int]:
        """The whole-file check of the facts read from ``label`` (see :class:`FileCheck`)."""
        return self.checker(facts, FileCheck(lines, label, vocab, policy, precision, notes))


def _query_annotator(chunk: ColumnChunk, label: str, vocab: Vocabularies) -> Facts:
    """Codes of the query and annotator columns."""
    return {
        "query_id": identifier_codes(chunk, "query", label, vocab.queries),
        "annotator_id": identifier_codes(
            chunk, "annotator", label, vocab.annotators, default=DEFAULT_ANNOTATOR
        ),
    }


def _refuse(
    bad: np.ndarray, chunk: ColumnChunk, label: str, said: pd.Series, reason: str, hint: str
) -> None:
    """Raise the :class:`InputError` of the chunk's first row where ``bad`` holds, naming
    what its outcome column ``said``."""
    rows = np.flatnonzero(bad)
    if rows.size:
        i = int(rows[0])
        raise InputError(
            reason, file=label, line=int(chunk.lines[i]), value=said.iloc[i], hint=hint
        )


def _is_number(text: str) -> bool:
    """Whether ``text`` is a finite number (a trec_eval ``rel_level``)."""
    try:
        return bool(np.isfinite(float(text)))
    except ValueError:
        return False


def _first(mask: np.ndarray | pd.Series) -> int | None:
    """Position of the first true entry, or ``None``."""
    hits = np.flatnonzero(np.asarray(mask))
    return int(hits[0]) if hits.size else None


# --- pairwise -------------------------------------------------------------------------


#: Arena ``winner`` values (lower case) meaning the first item, the second, or a tie.
ARENA_FIRST = frozenset({"a", "model_a"})
ARENA_SECOND = frozenset({"b", "model_b"})
ARENA_TIE = frozenset({"tie", "tie (bothbad)", "both_bad"})


def _with_count(chunk: ColumnChunk, label: str, facts: Facts) -> Facts:
    """``facts`` plus the ``count`` column when the file has one (an empty cell counts 1)."""
    if "count" in chunk.columns:
        facts["count"] = integers(
            chunk,
            "count",
            label,
            minimum=0,
            hint="count is how many times the outcome happened: an integer >= 0",
            empty=1,
        )
    return facts


def _parse_native_pairwise(chunk: ColumnChunk, label: str, vocab: Vocabularies) -> Facts:
    """Query, annotator, winner, loser, tie (``winner == loser`` is checked per file)."""
    winner, loser = identifier_pair_codes(chunk, ("winner", "loser"), label, vocab.items)
    facts = {
        **_query_annotator(chunk, label, vocab),
        "winner_id": winner,
        "loser_id": loser,
        "tie": flags(chunk, "tie", label),
    }
    return _with_count(chunk, label, facts)


def _stripped(values: object) -> pd.Series:
    """A string column with surrounding whitespace removed."""
    return pd.Series(np.asarray(values, dtype=object), dtype=object).str.strip()


def _parse_item_pair(
    chunk: ColumnChunk, label: str, vocab: Vocabularies, *, keywords: bool
) -> Facts:
    """``item_a, item_b, winner`` rows (arena or prefs-release) as winner, loser and tie.

    ``winner`` names one of the two items; with ``keywords`` (arena) it may
    also be ``a``/``b``/``tie`` and their LMArena spellings (:data:`ARENA_TIE`).
    """
    first, second = identifier_pair_codes(chunk, ("item_a", "item_b"), label, vocab.items)
    said = _stripped(chunk.columns["winner"])
    is_a = (said == _stripped(chunk.columns["item_a"])).to_numpy()
    is_b = (said == _stripped(chunk.columns["item_b"])).to_numpy()
    tie = np.zeros(len(chunk), dtype=bool)
    if keywords:
        word = said.str.lower()
        kw_a, kw_b = word.isin(ARENA_FIRST).to_numpy(), word.isin(ARENA_SECOND).to_numpy()
        tie = word.isin(ARENA_TIE).to_numpy()
        ambiguous = (kw_a & is_b & ~is_a) | (kw_b & is_a & ~is_b)
        _refuse(
            ambiguous,
            chunk,
            label,
            said,
            "winner is ambiguous: it is a keyword for one item and the id of the other",
            "use the winning item's id",
        )
        is_a, is_b = is_a | kw_a, is_b | kw_b
    allowed = "a, b, tie (or model_a, model_b, tie (bothbad), both_bad) or " if keywords else ""
    _refuse(
        ~(is_a | is_b | tie),
        chunk,
        label,
        said,
        "winner is not one of the two items",
        f"winner must be {allowed}the id of item_a or item_b",
    )
    second_wins = is_b & ~is_a & ~tie
    facts = {
        **_query_annotator(chunk, label, vocab),
        "winner_id": np.where(second_wins, second, first),
        "loser_id": np.where(second_wins, first, second),
        "tie": tie,
    }
    if keywords:  # arena: item_a (model_a) is the one shown first; prefs-release does not say
        facts["winner_first"] = ~second_wins
    return _with_count(chunk, label, facts)


#: evalica ``winner`` values (lower case): the left item, the right item, a tie.
EVALICA_WINNERS = {"left": 0, "right": 1, "tie": 2}


def _parse_left_right(chunk: ColumnChunk, label: str, vocab: Vocabularies) -> Facts:
    """``left, right`` rows with evalica's ``winner`` or crowd-kit's ``label`` (the winner's id)."""
    left, right = identifier_pair_codes(chunk, ("left", "right"), label, vocab.items)
    if chunk.shape == "evalica":
        said = _stripped(chunk.columns["winner"])
        outcome = said.str.lower().map(EVALICA_WINNERS)
        _refuse(
            outcome.isna().to_numpy(),
            chunk,
            label,
            said,
            "winner must be left, right or tie",
            "evalica's shape names the winning side: left, right or tie",
        )
        code = outcome.to_numpy(dtype=np.int64)
        right_wins, tie = code == 1, code == 2
    else:  # crowd-kit: the label is the winning item's id
        said = _stripped(chunk.columns["label"])
        is_left = (said == _stripped(chunk.columns["left"])).to_numpy()
        right_wins = (said == _stripped(chunk.columns["right"])).to_numpy() & ~is_left
        _refuse(
            ~(is_left | right_wins),
            chunk,
            label,
            said,
            "label is not one of the two items",
            "crowd-kit's label is the id of the winning item (left or right)",
        )
        tie = np.zeros(len(chunk), dtype=bool)
    facts = {
        "query_id": identifier_codes(chunk, "query", label, vocab.queries, default=DEFAULT_QUERY),
        "annotator_id": identifier_codes(
            chunk, "annotator", label, vocab.annotators, default=DEFAULT_ANNOTATOR
        ),
        "winner_id": np.where(right_wins, right, left),
        "loser_id": np.where(right_wins, left, right),
        "tie": tie,
        "winner_first": ~right_wins,  # left is the item shown first
    }
    return _with_count(chunk, label, facts)


def _parse_trec_prefs(chunk: ColumnChunk, label: str, vocab: Vocabularies) -> Facts:
    """trec_eval ``-R prefs`` lines: query, judgment group, sub-group, item, rel_level."""
    return {
        "query_id": identifier_codes(chunk, "query", label, vocab.queries),
        "annotator_id": identifier_codes(chunk, "annotator", label, vocab.annotators),
        "item_id": identifier_codes(chunk, "item", label, vocab.items),
        "subgroup": np.asarray(chunk.columns["subgroup"], dtype=object),
        "level": finite_floats(chunk, "rel_level", label, hint="rel_level is a number"),
    }


_PAIRWISE_PARSERS: Mapping[str, Callable[[ColumnChunk, str, Vocabularies], Facts]] = {
    "native": _parse_native_pairwise,
    "arena": lambda chunk, label, vocab: _parse_item_pair(chunk, label, vocab, keywords=True),
    "prefs-release": lambda chunk, label, vocab: _parse_item_pair(
        chunk, label, vocab, keywords=False
    ),
    "trec-prefs": _parse_trec_prefs,
    "evalica": _parse_left_right,
    "crowd-kit": _parse_left_right,
}


def _parse_pairwise(chunk: ColumnChunk, label: str, vocab: Vocabularies) -> Facts:
    """Pairwise facts from a chunk of any pairwise shape."""
    return _PAIRWISE_PARSERS[chunk.shape](chunk, label, vocab)


def _expand_trec_prefs(facts: Facts, file: FileCheck) -> Facts:
    """Every pair with different ``rel_level`` in a (qid, jg, jsg) sub-group, larger level winning.

    Equal levels express no preference (trec_eval's ``-R prefs`` semantics);
    a document listed twice in one sub-group is an error.
    """
    frame = pd.DataFrame(
        {
            "query_id": facts["query_id"],
            "annotator_id": facts["annotator_id"],
            "subgroup": pd.factorize(facts["subgroup"])[0],
            "item_id": facts["item_id"],
            "level": facts["level"],
            "line": file.lines,
        }
    )
    keys = ["query_id", "annotator_id", "subgroup"]
    frame["group"] = frame.groupby(keys, sort=False).ngroup()
    twice = _first(frame.duplicated(["group", "item_id"]))
    if twice is not None:
        row = frame.iloc[twice]
        file.fail(
            "document listed twice in one judgment sub-group (qid, jg, jsg)",
            int(row.line),
            file.vocab.items.names[int(row.item_id)],
            "give each document one rel_level per sub-group",
        )
    pairs = frame.merge(frame[["group", "item_id", "level", "line"]], on="group")
    pairs = pairs[pairs["level_x"] > pairs["level_y"]].sort_values(["line_x", "line_y"])
    if pairs.empty:
        file.fail(
            "the file expresses no preference: every sub-group has equal rel_levels",
            int(file.lines[0]),
            None,
            "a preference needs two documents with different rel_level in one (qid, jg, jsg)",
        )
    return {
        "query_id": pairs["query_id"].to_numpy(np.int64),
        "annotator_id": pairs["annotator_id"].to_numpy(np.int64),
        "winner_id": pairs["item_id_x"].to_numpy(np.int64),
        "loser_id": pairs["item_id_y"].to_numpy(np.int64),
        "tie": np.zeros(len(pairs), dtype=bool),
    }


def _check_pairwise(facts: Facts, file: FileCheck) -> tuple[Facts, int]:
    """``winner == loser`` is an error; repeated comparisons are kept (real evidence).

    Rows whose ``count`` is 0 are dropped, with one note.
    """
    if "level" in facts:
        return _expand_trec_prefs(facts, file), 0
    same = _first(facts["winner_id"] == facts["loser_id"])
    if same is not None:
        file.fail(
            "winner and loser are the same item",
            int(file.lines[same]),
            file.vocab.items.names[int(facts["winner_id"][same])],
            "a preference needs two different items",
        )
    if "count" in facts:
        zero = facts["count"] == 0
        if zero.all():
            raise no_comparison_error(file.label, int(file.lines[0]))
        if zero.any():
            file.notes.append(zero_count_note(file.label, int(zero.sum())))
            facts = {name: values[~zero] for name, values in facts.items()}
    return facts, 0


def no_comparison_error(label: str, line: int) -> InputError:
    """The error of a pairwise file whose every row has count 0 (``line``: the first)."""
    return InputError(
        "every row has count 0: the file holds no comparison",
        file=label,
        line=line,
        value=0,
        hint="count is how many times the outcome happened (a positive integer)",
    )


def zero_count_note(label: str, rows: int) -> str:
    """The note about the ``rows`` rows of count 0 that were skipped."""
    return f"{label}: skipped {rows} row(s) with count 0"


# --- listwise -------------------------------------------------------------------------


def _item_labels(column: str, minimum: int, hint: str) -> Parser:
    """The parser of query, annotator, item and an integer ``column`` >= ``minimum`` (a list's
    rank, an item's grade)."""

    def parse(chunk: ColumnChunk, label: str, vocab: Vocabularies) -> Facts:
        return {
            **_query_annotator(chunk, label, vocab),
            "item_id": identifier_codes(chunk, "item", label, vocab.items),
            column: integers(chunk, column, label, minimum=minimum, hint=hint),
        }

    return parse


_parse_listwise = _item_labels("rank", 1, "ranks are tiers 1, 2, 3, ... (1 = best)")


def _list_name(file: FileCheck, query: int, annotator: int) -> str:
    """``query 'q1', annotator 'a1'`` for messages."""
    names = file.vocab
    return f"query {names.queries.names[query]!r}, annotator {names.annotators.names[annotator]!r}"


def _check_listwise(facts: Facts, file: FileCheck) -> tuple[Facts, int]:
    """No item twice in one list; ranks consecutive from 1 within each list."""
    frame = file.frame(facts)
    keys = ["query_id", "annotator_id"]
    twice = _first(frame.duplicated([*keys, "item_id"]))
    if twice is not None:
        row = frame.iloc[twice]
        where = _list_name(file, int(row.query_id), int(row.annotator_id))
        file.fail(
            f"item listed twice in the list of {where}",
            int(row.line),
            file.vocab.items.names[int(row.item_id)],
            "give each item one rank per list (tied items share a rank)",
        )
    ranks = frame.drop_duplicates([*keys, "rank"]).groupby(keys)["rank"].agg(["max", "size"])
    gaps = ranks[ranks["max"] != ranks["size"]]
    if not gaps.empty:
        in_gap = frame.set_index(keys).index.isin(gaps.index)
        first = frame[in_gap].iloc[0]
        query, annotator = int(first.query_id), int(first.annotator_id)
        members = frame[(frame.query_id == query) & (frame.annotator_id == annotator)]
        present = set(members["rank"].tolist())
        missing = next(r for r in range(1, len(present) + 2) if r not in present)
        culprit = members[members["rank"] > missing].iloc[0]
        file.fail(
            f"ranks are not consecutive from 1 in the list of {_list_name(file, query, annotator)}"
            f": rank {missing} is missing",
            int(culprit.line),
            int(culprit["rank"]),
            "number the tiers 1, 2, 3, ... without gaps (tied items share a rank)",
        )
    return facts, 0


# --- graded ---------------------------------------------------------------------------


_parse_graded = _item_labels("grade", 0, "grades are integers >= 0 (0 = not relevant)")


def _check_graded(facts: Facts, file: FileCheck) -> tuple[Facts, int]:
    """One grade per (query, annotator, item): repeats must agree and are stored once."""
    frame = file.frame(facts)
    keys = ["query_id", "annotator_id", "item_id"]
    first_grade = frame.groupby(keys)["grade"].transform("first")
    conflict = _first(frame["grade"] != first_grade)
    if conflict is not None:
        row = frame.iloc[conflict]
        item = file.vocab.items.names[int(row.item_id)]
        file.fail(
            f"conflicting grades for item {item!r} in the labels of "
            f"{_list_name(file, int(row.query_id), int(row.annotator_id))} (first graded "
            f"{int(first_grade.iloc[conflict])})",
            int(row.line),
            int(row.grade),
            "keep one grade per query, annotator and item",
        )
    repeated = frame.duplicated(keys).to_numpy()
    kept = {name: values[~repeated] for name, values in facts.items()}
    return kept, int(repeated.sum())


# --- runs -----------------------------------------------------------------------------


def _parse_run(chunk: ColumnChunk, label: str, vocab: Vocabularies) -> Facts:
    """Query, item, integer rank >= 0 and an optional finite score."""
    return {
        "query_id": identifier_codes(chunk, "query", label, vocab.queries),
        "item_id": identifier_codes(chunk, "item", label, vocab.items),
        "rank": integers(chunk, "rank", label, minimum=0, hint="ranks are integers >= 0"),
        "score": finite_floats(chunk, "score", label, hint="scores are finite numbers"),
    }


def _check_run(facts: Facts, file: FileCheck) -> tuple[Facts, int]:
    """A (query, item) may appear once, unless ``keep-first`` keeps its best-ordered line.

    "First" follows the run ordering of docs/conventions.md, "Conventions and caveats":
    highest score first (lowest rank when the run has no scores), earlier line
    on ties. Scores are compared at ``precision`` (docs/evaluating-files.md, "Score precision"):
    two scores equal as float32 tie under ``float32`` (trec_eval <= 9.0.8), so
    the earlier line survives; the stored scores keep their full precision.
    """
    note = rank_order_note(file.label, facts["query_id"], facts["rank"], facts["score"])
    if note is not None:
        file.notes.append(note)
    frame = file.frame(facts)
    keys = ["query_id", "item_id"]
    repeated = frame.duplicated(keys)
    if not repeated.any():
        return facts, 0
    if file.policy is DuplicatePolicy.error:
        row = frame[repeated].iloc[0]
        earlier = frame[(frame.query_id == row.query_id) & (frame.item_id == row.item_id)]
        file.fail(
            f"item repeated in the run for query {file.vocab.queries.names[int(row.query_id)]!r} "
            f"(first on line {int(earlier.line.iloc[0])})",
            int(row.line),
            file.vocab.items.names[int(row.item_id)],
            "remove the repeated line, or pass --duplicates keep-first",
        )
    has_scores = bool(np.isfinite(facts["score"]).any())
    order = ["score", "line"] if has_scores else ["rank", "line"]
    ascending = [False, True] if has_scores else [True, True]
    if has_scores:
        frame["score"] = comparable_scores(
            frame["score"].to_numpy(dtype=np.float64), ScorePrecisionName(file.precision)
        )
    survivors = frame.sort_values(order, ascending=ascending, kind="stable").drop_duplicates(keys)
    positions = np.sort(survivors.index.to_numpy())
    kept = {name: values[positions] for name, values in facts.items()}
    return kept, len(frame) - len(positions)


_JUDGE = ("judge", "worker")
_LEFT_RIGHT = (Column("left"), Column("right"))


def _tabular_pairs(
    shape: str,
    query: Column,
    annotator: Column,
    items: tuple[Column, Column],
    signature: tuple[str, ...],
) -> RecordLayout:
    """A tabular pairwise shape: query, annotator, the two items, the column that says the
    outcome (the last of ``signature``), and an optional count."""
    outcome = Column(signature[-1])
    columns = (query, annotator, *items, outcome, Column("count", False))
    return RecordLayout(columns, shape=shape, signature=signature)


KINDS: Mapping[InputKind, IngestKind] = {
    InputKind.listwise: IngestKind(
        "listwise",
        RecordLayout(
            (Column("query"), Column("annotator", False), Column("item"), Column("rank")),
            tier_list_key="ranking",
        ),
        _parse_listwise,
        _check_listwise,
    ),
    InputKind.pairwise: IngestKind(
        "pairwise",
        RecordLayout(
            (
                Column("query"),
                Column("annotator", False),
                Column("winner"),
                Column("loser"),
                Column("tie", False),
                Column("count", False),
            ),
            signature=("winner", "loser"),
        ),
        _parse_pairwise,
        _check_pairwise,
        alternatives=(
            _tabular_pairs(
                "arena",
                Column("query", aliases=("question_id", "qid", "topic")),
                Column("annotator", False, aliases=_JUDGE),
                (Column("item_a", aliases=("model_a",)), Column("item_b", aliases=("model_b",))),
                ("item_a", "item_b", "winner"),
            ),
            _tabular_pairs(
                "evalica",
                Column("query", False),
                Column("annotator", False, aliases=_JUDGE),
                _LEFT_RIGHT,
                ("left", "right", "winner"),
            ),
            _tabular_pairs(
                "crowd-kit",
                Column("query", False),
                Column("annotator", aliases=("worker",)),
                _LEFT_RIGHT,
                ("annotator", "left", "right", "label"),
            ),
            RecordLayout(
                (Column("query"), Column("item_a"), Column("item_b"), Column("winner")),
                headerless=InputFormat.prefs_release,
                headerless_columns=("query", "item_a", "item_b", "winner"),
                shape="prefs-release",
                headerless_test=lambda fields: fields[3] in (fields[1], fields[2]),
            ),
            RecordLayout(
                (
                    Column("query"),
                    Column("annotator"),
                    Column("subgroup"),
                    Column("item"),
                    Column("rel_level"),
                ),
                headerless=InputFormat.trec_prefs,
                headerless_columns=("query", "annotator", "subgroup", "item", "rel_level"),
                shape="trec-prefs",
                headerless_test=lambda fields: _is_number(fields[4]),
            ),
        ),
    ),
    InputKind.graded: IngestKind(
        "graded",
        RecordLayout(
            (Column("query"), Column("annotator", False), Column("item"), Column("grade")),
            headerless=InputFormat.qrels,
            headerless_columns=("query", "iteration", "item", "grade"),
        ),
        _parse_graded,
        _check_graded,
    ),
    InputKind.run: IngestKind(
        "run",
        RecordLayout(
            (Column("query"), Column("item"), Column("rank"), Column("score", False)),
            headerless=InputFormat.trec,
            headerless_columns=("query", "q0", "item", "rank", "score", "tag"),
        ),
        _parse_run,
        _check_run,
    ),
}
