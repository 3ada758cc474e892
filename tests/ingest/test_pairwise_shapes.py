"""The pairwise shapes other tools publish (docs/input-formats.md, "Input formats"), golden files
and refusals."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orlbuild.ingest import read_input
from orlbuild.store import load_pairwise
from orlbuild.vocabulary import InputFormat
from tests.files import Write
from tests.ingest.conftest import (
    counted_pairwise_tuples,
    ingested,
    pairwise_tuples,
    run_cli,
    store_counts,
)
from tests.stores import store_engine

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "pairwise_shapes"
EXPECTED = json.loads((GOLDEN / "expected.json").read_text())


def _pairs(url: str, collection: str = "default") -> list[tuple[str, str, str, str, bool]]:
    with store_engine(url) as engine:
        return pairwise_tuples(load_pairwise(engine, collection))


@pytest.mark.parametrize(
    "name", ["arena.csv", "prefs_release.txt", "trec_prefs.txt", "evalica.csv", "crowd_kit.csv"]
)
def test_golden_shape_is_detected_and_stored_as_meant(
    name: str, migrated_db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / name
    shutil.copy(GOLDEN / name, path)
    result = ingested(migrated_db_url, "pairwise", path)
    expected = [tuple(row) for row in EXPECTED[name]]
    assert _pairs(migrated_db_url) == expected
    assert f"stored {len(expected)} pairwise rows" in result.output
    if name in ("evalica.csv", "crowd_kit.csv"):  # no query column: said, never silent
        assert "no query column: every row is in query '_'" in result.output


def test_golden_counts_in_a_json_array_with_one_query(migrated_db_url: str, tmp_path: Path) -> None:
    """LMArena's clean_battle_*.json is a JSON array; counts weight rows; --query names
    the leaderboard (its question_id is a per-battle id)."""
    path = tmp_path / "arena_counts.json"
    shutil.copy(GOLDEN / "arena_counts.json", path)
    result = ingested(migrated_db_url, "pairwise", path, "--query", "arena")
    assert "skipped 1 row(s) with count 0" in result.output
    assert "--query 'arena' puts every row into one query" in result.output
    with store_engine(migrated_db_url) as engine:
        stored = counted_pairwise_tuples(load_pairwise(engine))
    assert stored == [tuple(row) for row in EXPECTED["arena_counts.json"]]


@pytest.mark.parametrize(
    ("name", "fmt", "renamed"),
    [
        ("arena.csv", "arena", "judgments.csv"),
        ("prefs_release.txt", "prefs-release", "prefs.tsv"),
        ("trec_prefs.txt", "trec-prefs", "prefs.qrels"),
    ],
)
def test_shape_named_with_format(
    name: str, fmt: str, renamed: str, migrated_db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / renamed
    shutil.copy(GOLDEN / name, path)
    ingested(migrated_db_url, "pairwise", path, "--format", fmt)
    assert _pairs(migrated_db_url) == [tuple(row) for row in EXPECTED[name]]


def test_arena_from_stdin_and_jsonl(migrated_db_url: str, write_file: Write) -> None:
    jsonl = write_file(
        "a.jsonl",
        '{"qid": "q1", "model_a": "x", "model_b": "y", "winner": "model_b", "worker": "w"}\n',
    )
    ingested(migrated_db_url, "pairwise", jsonl)
    stdin = b"topic\titem_a\titem_b\twinner\nq2\tx\ty\tx\n"
    result = run_cli(migrated_db_url, "ingest", "pairwise", "-", stdin=stdin)
    assert result.exit_code == 0, result.output
    assert _pairs(migrated_db_url) == [("q1", "w", "y", "x", False), ("q2", "_", "x", "y", False)]


def test_arena_columns_are_never_read_as_winner_and_loser(
    migrated_db_url: str, write_file: Write
) -> None:
    """Regression (issue 12, item 1): ``item_a`` used to be stored as the winner, and the
    literal ``model_b``/``tie`` as items."""
    path = write_file(
        "a.csv", "query,annotator,item_a,item_b,winner\nq1,u1,d1,d2,model_b\nq1,u1,d1,d3,tie\n"
    )
    ingested(migrated_db_url, "pairwise", path)
    assert _pairs(migrated_db_url) == [
        ("q1", "u1", "d1", "d3", True),
        ("q1", "u1", "d2", "d1", False),
    ]
    with store_engine(migrated_db_url) as engine:
        items = set(load_pairwise(engine)[["winner", "loser"]].stack())
    assert items == {"d1", "d2", "d3"}


def test_arena_winner_holding_an_item_id(migrated_db_url: str, write_file: Write) -> None:
    """Regression (issue 12): used to fail with "winner and loser are the same item"."""
    path = write_file("a.csv", "query,item_a,item_b,winner\nq1,d1,d2,d2\n")
    ingested(migrated_db_url, "pairwise", path)
    assert _pairs(migrated_db_url) == [("q1", "_", "d2", "d1", False)]


MIXED = "mix the native and arena shapes"
NONE = "match none of the accepted shapes"


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ("query,item_a,item_b,winner,loser", MIXED),  # arena next to native
        ("query,winner", NONE),  # winner without loser or item_a/item_b
        ("query,item_a,item_b,tie", MIXED),  # the old aliases, no winner
        ("query,model_a,model_b,winner,tie", MIXED),  # arena with a native tie column
        ("qid,winner,loser", MIXED),  # an arena alias in a native header
        # A listwise file is named as one (issue 40): tests/cli/test_first_hour.py.
    ],
)
def test_header_mixing_shapes_is_refused_and_stores_nothing(
    header: str, reason: str, seeded_db_url: str, write_file: Write
) -> None:
    width = header.count(",") + 1
    path = write_file(
        "p.csv", f"{header}\n" + ",".join(["q1", "d1", "d2", "d1", "d2"][:width]) + "\n"
    )
    before = store_counts(seeded_db_url)
    result = run_cli(seeded_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 1
    message = result.output.strip().splitlines()[-1]
    assert f"{path}, line 1:" in message
    assert reason in message
    assert header.replace(",", ", ") in message  # the columns found
    assert "native (query" in message and "arena (query" in message  # the shapes accepted
    assert store_counts(seeded_db_url) == before


def test_trec_prefs_round_trip_of_an_orl_export(migrated_db_url: str, write_file: Write) -> None:
    """``orl export --format trec-prefs`` read back gives exactly the ORL's cross-tier pairs."""
    qrels = write_file(
        "g.qrels", "q1 0 d1 3\nq1 0 d2 3\nq1 0 d3 1\nq1 0 d4 0\nq2 0 e1 2\nq2 0 e2 1\n"
    )
    ingested(migrated_db_url, "graded", qrels)
    built = run_cli(migrated_db_url, "build", "--source", "graded", "--name", "g")
    assert built.exit_code == 0, built.output
    out = qrels.parent / "orl.prefs"
    exported = run_cli(
        migrated_db_url, "orl", "export", "g", "--format", "trec-prefs", "-o", str(out)
    )
    assert exported.exit_code == 0, exported.output
    assert out.read_text().splitlines()[0].split()[1:3] == ["orl", "1"]
    ingested(migrated_db_url, "pairwise", out, "--collection", "back")
    # ORL: q1 {d1, d2} > {d3} (d4 has grade 0: not in the ORL); q2 e1 > e2.
    assert _pairs(migrated_db_url, "back") == [
        ("q1", "orl", "d1", "d3", False),
        ("q1", "orl", "d2", "d3", False),
        ("q2", "orl", "e1", "e2", False),
    ]


def test_jsonl_object_of_another_shape_is_refused(seeded_db_url: str, write_file: Write) -> None:
    path = write_file(
        "p.jsonl",
        '{"query": "q1", "winner": "d1", "loser": "d2"}\n'
        '{"query": "q1", "item_a": "d1", "item_b": "d2", "winner": "a"}\n',
    )
    before = store_counts(seeded_db_url)
    result = run_cli(seeded_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 1
    message = result.output.strip().splitlines()[-1]
    assert f"{path}, line 2:" in message and "another shape than the first object" in message
    assert store_counts(seeded_db_url) == before


def test_jsonl_extra_key_next_to_its_near_miss_is_only_reported(
    migrated_db_url: str, write_file: Write
) -> None:
    """``annotators`` beside a present ``annotator`` is no typo: reported, not refused."""
    path = write_file(
        "p.jsonl",
        '{"query": "q1", "annotator": "a", "annotators": 3, "winner": "d1", "loser": "d2"}\n',
    )
    result = ingested(migrated_db_url, "pairwise", path)
    assert "ignored column(s) 'annotators'" in result.stderr


# --- property: every shape stores what the native shape stores ----------------------------

_KEYWORDS = {"a", "b", "model_a", "model_b", "tie", "tie (bothbad)", "both_bad"}
_ids = st.text(alphabet="abcdexyz019_-.", min_size=1, max_size=6).filter(
    lambda s: s.lower() not in _KEYWORDS
)
_comparisons = st.lists(
    st.tuples(_ids, _ids, _ids, _ids, st.sampled_from(["first", "second", "tie"])).filter(
        lambda row: row[2] != row[3]
    ),
    min_size=1,
    max_size=25,
)


def _decoded(name: str, text: str) -> list[tuple[str, str, str, str, bool]]:
    """``(query, annotator, winner, loser, tie)`` rows read from ``text`` (no store).

    A name ending in ``.prefs-release`` is read with ``--format prefs-release``.
    """
    fmt = InputFormat.prefs_release if name.endswith(".prefs-release") else None
    parsed = read_input("pairwise", name, stream=io.BytesIO(text.encode()), fmt=fmt)
    return pairwise_tuples(parsed.decoded())


#: How an arena file says who won: keywords, LMArena's spellings, or the item id.
_SPELLINGS = {
    "keyword": {"first": "a", "second": "B", "tie": "tie"},
    "lmarena": {"first": "model_a", "second": "model_b", "tie": "tie (bothbad)"},
    "id": {"tie": "both_bad"},
}


def _said(first: str, second: str, outcome: str, spelling: str) -> str:
    """The arena ``winner`` cell for one comparison."""
    ids = {"first": first, "second": second}
    return _SPELLINGS[spelling].get(outcome) or ids[outcome]


@settings(max_examples=40, deadline=None)
@given(
    rows=_comparisons,
    spelling=st.sampled_from(sorted(_SPELLINGS)),
    query=st.sampled_from(["query", "question_id", "qid", "topic"]),
)
def test_arena_and_release_shapes_store_what_the_native_shape_stores(
    rows: list[tuple[str, str, str, str, str]], spelling: str, query: str
) -> None:
    def native_row(q: str, u: str, a: str, b: str, o: str) -> str:
        winner, loser = (b, a) if o == "second" else (a, b)
        return f"{q},{u},{winner},{loser},{int(o == 'tie')}\n"

    native = "query,annotator,winner,loser,tie\n" + "".join(native_row(*r) for r in rows)
    arena = f"{query},judge,model_a,model_b,winner\n" + "".join(
        f"{q},{u},{a},{b},{_said(a, b, o, spelling)}\n" for q, u, a, b, o in rows
    )
    assert _decoded("a.csv", arena) == _decoded("n.csv", native)

    decided = [(q, a, b, o) for q, _u, a, b, o in rows if o != "tie"]
    if decided:
        release = "".join(f"{q} {a} {b} {a if o == 'first' else b}\n" for q, a, b, o in decided)
        expected = sorted(
            (q, "_", *((a, b) if o == "first" else (b, a)), False) for q, a, b, o in decided
        )
        # Item "0" winning everything is also all-zero TREC qrels: refused unless named
        # (test_all_zero_qrels_are_not_read_as_preferences).
        name = "r.txt" if {w for _q, _l, w, *_ in expected} != {"0"} else "r.prefs-release"
        assert _decoded(name, release) == expected


@settings(max_examples=40, deadline=None)
@given(rows=_comparisons, counted=st.booleans())
def test_evalica_and_crowd_kit_shapes_store_what_the_native_shape_stores(
    rows: list[tuple[str, str, str, str, str]], counted: bool
) -> None:
    """Same comparisons, three shapes, the same stored rows (crowd-kit has no ties)."""
    count = ",count" if counted else ""
    times = ",3" if counted else ""

    def native(subset: list[tuple[str, str, str, str, str]]) -> str:
        lines = "".join(
            f"{q},{u},{b if o == 'second' else a},{a if o == 'second' else b},"
            f"{int(o == 'tie')}{times}\n"
            for q, u, a, b, o in subset
        )
        return f"query,annotator,winner,loser,tie{count}\n" + lines

    side = {"first": "left", "second": "Right", "tie": "TIE"}
    evalica = f"query,judge,left,right,winner{count}\n" + "".join(
        f"{q},{u},{a},{b},{side[o]}{times}\n" for q, u, a, b, o in rows
    )
    assert _decoded_with_counts("e.csv", evalica) == _decoded_with_counts("n.csv", native(rows))
    decided = [r for r in rows if r[4] != "tie"]
    if decided:
        crowd = f"query,worker,left,right,label{count}\n" + "".join(
            f"{q},{u},{a},{b},{a if o == 'first' else b}{times}\n" for q, u, a, b, o in decided
        )
        assert _decoded_with_counts("c.csv", crowd) == _decoded_with_counts(
            "n.csv", native(decided)
        )


def _decoded_with_counts(name: str, text: str) -> list[tuple[object, ...]]:
    """Decoded rows with their count (1 where the file has no count column)."""
    frame = read_input("pairwise", name, stream=io.BytesIO(text.encode())).decoded()
    counts = frame["count"] if "count" in frame else [1] * len(frame)
    columns = ("query", "annotator", "winner", "loser", "tie")
    return sorted(zip(*(frame[c] for c in columns), counts, strict=True))


@pytest.mark.parametrize(
    ("header", "row", "reason"),
    [
        ("left,right,winner", "d1,d2,a", "winner must be left, right or tie"),
        ("left,right,winner", "d1,d1,left", "winner and loser are the same item"),
        ("worker,left,right,label", "w,d1,d2,d3", "label is not one of the two items"),
        ("worker,left,right,label", "w,d1,d2,tie", "label is not one of the two items"),
        ("left,right,winner,label", "d1,d2,left,d1", "match none of the accepted shapes"),
    ],
)
def test_evalica_and_crowd_kit_refusals(
    header: str, row: str, reason: str, migrated_db_url: str, write_file: Write
) -> None:
    path = write_file("p.csv", f"{header}\n{row}\n")
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 1
    assert reason in result.output and f"{path}, line " in result.output
