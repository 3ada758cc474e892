"""ORLs and runs coded against one id table (``orlbuild eval``'s fast path, issue 24).

:func:`scoring.orl.orls_from_coded_grades` builds ORLs that keep their items'
integer codes and build their dictionaries only when read; a run coded against
the same table is joined with them on integers (:func:`scoring.batch.prepare_batch`).
These tests check that every measure scores exactly as on the plain ORLs and
run tables, that a lazily built ORL equals the eager one, and that the file
path shares the table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from orlbuild.ingest.trec_reader import _factorize_ids
from orlbuild.orl_io.eval_files import read_eval_files
from scoring import batch, evaluate_run
from scoring.batch import FlatRun, IdTable
from scoring.evaluation import evaluate_runs
from scoring.orl import ORL, orls_from_coded_grades, orls_from_grade_table
from scoring.run import CodedRuns, trec_order

MEASURES = [
    "AP",
    "nDCG(grade=native,gain=linear)@10",
    "nDCG@5",
    "P@10",
    "RR",
    "Bpref",
    "infAP",
    "Judged@10",
    "ERR@10",
    "RBP(p=0.8)@10",
    "RDQ(penalty=m2,alpha=2)@10",
    "KendallTau",
]


def _collection(seed: int) -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """Qrels (grades 0-3, a query with only zeros) and two runs with tied scores."""
    rng = np.random.default_rng(seed)
    ids = np.array([f"doc_{i:05d}" for i in rng.permutation(400)], dtype=object)
    queries = [f"q{q}" for q in range(12)]
    qrels = []
    for q, query in enumerate(queries):
        judged = rng.choice(ids, size=15, replace=False)
        grades = rng.integers(0, 4, size=15) if q else np.zeros(15, dtype=np.int64)
        qrels += [(query, d, int(g)) for d, g in zip(judged, grades, strict=True)]
    runs = []
    for _ in range(2):
        rows = []
        for query in [*queries[1:], "only_in_run"]:
            docs = rng.choice(ids, size=25, replace=False)
            scores = np.round(rng.uniform(0, 1, size=25), 1)  # ties
            rows += [(query, d, float(s)) for d, s in zip(docs, scores, strict=True)]
        runs.append(pd.DataFrame(rows, columns=["query", "item", "score"]))
    return pd.DataFrame(qrels, columns=["query", "item", "grade"]), runs


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_coded_orls_and_runs_score_as_plain_ones(seed: int) -> None:
    qrels, runs = _collection(seed)
    plain, plain_without = orls_from_grade_table(
        qrels["query"].to_numpy(object), qrels["item"].to_numpy(object), qrels["grade"].to_numpy()
    )
    # One table for the qrels' and the runs' ids, as fast_trec_eval codes them.
    every = pd.concat([qrels[["query", "item"]], *(run[["query", "item"]] for run in runs)])
    query_codes, queries = pd.factorize(every["query"].to_numpy(object))
    item_codes, items = pd.factorize(every["item"].to_numpy(object))
    cut = len(qrels)
    coded_orls, without = orls_from_coded_grades(
        query_codes[:cut], queries, item_codes[:cut], items, qrels["grade"].to_numpy()
    )
    assert without == plain_without == ["q0"]  # not the run-only query of the shared table
    assert list(coded_orls) == list(plain)
    coded = CodedRuns(
        runs=np.repeat(np.arange(len(runs)), [len(run) for run in runs]),
        query_codes=query_codes[cut:].astype(np.int64),
        queries=np.asarray(queries, dtype=object),
        item_codes=item_codes[cut:].astype(np.int64),
        items=items,
        scores=np.concatenate([run["score"].to_numpy() for run in runs]),
        n_runs=len(runs),
    )
    got = evaluate_runs(coded_orls, coded, MEASURES)
    # The coded ORLs were scored without building their dictionaries (ERR reads the
    # ORLs, so it is scored apart here).
    fresh, _ = orls_from_coded_grades(
        query_codes[:cut], queries, item_codes[:cut], items, qrels["grade"].to_numpy()
    )
    evaluate_runs(fresh, coded, [m for m in MEASURES if not m.startswith("ERR")])
    assert not any(_is_set(orl, "_ranks") for orl in fresh.values())
    for run, result in zip(runs, got, strict=True):
        want = evaluate_run(plain, run, MEASURES)
        pd.testing.assert_frame_equal(result.per_query, want.per_query, rtol=0, atol=1e-15)


def _is_set(orl: ORL, slot: str) -> bool:
    """Whether a slot of the ORL holds a value, without triggering its lazy build."""
    try:
        object.__getattribute__(orl, slot)
    except AttributeError:
        return False
    return True


def test_a_lazily_built_orl_equals_the_eager_one() -> None:
    qrels, _ = _collection(3)
    queries, items = qrels["query"].to_numpy(object), qrels["item"].to_numpy(object)
    eager, _ = orls_from_grade_table(queries, items, qrels["grade"].to_numpy())
    query_codes, query_table = pd.factorize(queries)
    item_codes, item_table = pd.factorize(items)
    lazy, _ = orls_from_coded_grades(
        query_codes, query_table, item_codes, item_table, qrels["grade"].to_numpy()
    )
    for query, orl in lazy.items():
        assert len(orl) == orl.n_items == len(eager[query])
        assert not _is_set(orl, "_ranks")
        assert orl == eager[query]  # builds the dictionaries
        assert orl.tiers == eager[query].tiers
        assert orl.grades == eager[query].grades
        assert orl.nonrelevant == eager[query].nonrelevant
        assert list(orl.items()) == list(eager[query].items())
    with pytest.raises(AttributeError):
        _ = ORL({"d1": 1}).no_such_attribute


def test_eval_files_share_one_table(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 0\n")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d2 1 2.0 t\nq1 Q0 d1 2 1.0 t\nq3 Q0 d9 1 1.0 t\n")
    read = read_eval_files(qrels, [run])
    assert read is not None
    orls, notes, runs, comments = read
    assert notes == ["query 'q2' has no positive grade and gets no ORL"]
    assert comments == [0]
    codes = orls["q1"]._codes
    assert codes is not None and codes.table is runs.items
    assert runs.items[codes.items].tolist() == ["d1"]
    assert runs.items[codes.nonrelevant].tolist() == ["d2"]
    # Not TREC qrels (a rank table): the caller reads each file on its own.
    table = tmp_path / "orl.tsv"
    table.write_text("query\titem\trank\nq1\td1\t1\n")
    assert read_eval_files(table, [run]) is None


@pytest.mark.parametrize("collide", [False, True])
def test_ids_are_factorised_as_pandas_does(monkeypatch: pytest.MonkeyPatch, collide: bool) -> None:
    """The reader hashes mostly distinct ids in C first; same codes and order as
    ``pandas.factorize``, also when hashes collide (every hash made equal here)."""
    rng = np.random.default_rng(5)
    special = ["d1", "msmarco_passage_01_000000001", "é", "", "D1", "d1 ", "\x00"]
    distinct = np.array([*special, *(f"msmarco_passage_{i:09d}" for i in range(300))], object)
    # Mostly distinct, as a run's long ids (so the hashes are used), some repeated.
    values = np.concatenate([distinct, distinct[rng.integers(0, len(distinct), size=40)]])
    values = values[rng.permutation(len(values))]
    real = pd.util.hash_array
    if collide:
        real = lambda v, **_: np.zeros(len(v), dtype=np.uint64)  # noqa: E731
    hashed: list[int] = []

    def hash_array(v: np.ndarray, **kw: object) -> np.ndarray:
        hashed.append(len(v))
        return real(v, **kw)

    monkeypatch.setattr(pd.util, "hash_array", hash_array)
    codes, uniques = _factorize_ids(values)
    assert hashed == [len(values)]
    want_codes, want_uniques = pd.factorize(values)
    np.testing.assert_array_equal(codes, want_codes)
    assert uniques.tolist() == list(want_uniques)
    # Repeating ids (short ids shared by all queries) are factorised by pandas directly.
    hashed.clear()
    codes, uniques = _factorize_ids(values[np.arange(2000) % 20])
    assert hashed == []
    assert uniques.tolist() == values[:20].tolist()


@pytest.mark.parametrize("presorted", [False, True])
@pytest.mark.parametrize(
    "extra", [[], ["a\x00", "a", "a\x00b", "\x00"], ["x" * 300, "😀", "\ud800", "é", "e"]]
)
def test_tied_rows_are_ordered_by_id_strings(presorted: bool, extra: list[str]) -> None:
    """trec_order, sorting or not (a run already in order), with NULs and non-ASCII ids
    (sorted in C as fixed-width strings unless a NUL is present): Python's order on
    (group, primary, id descending)."""
    rng = np.random.default_rng(len(extra))
    items = np.asarray([f"msmarco_passage_{i % 7:02d}_{i:09d}" for i in range(300)] + extra)
    items = items.astype(object)[rng.permutation(len(items) if extra else 300)]
    n = 1500
    group = rng.integers(0, 20, size=n)
    primary = rng.integers(0, 3, size=n).astype(float)
    codes = rng.integers(0, len(items), size=n)
    if presorted:
        first = np.lexsort((primary, group))
        group, primary, codes = group[first], primary[first], codes[first]
    got = trec_order(group, primary, codes, items)
    ids = items[codes].tolist()
    by_id = sorted(range(n), key=lambda i: ids[i], reverse=True)
    expected = sorted(by_id, key=lambda i: (group[i], primary[i]))
    assert [(group[i], primary[i], ids[i]) for i in got] == [
        (group[i], primary[i], ids[i]) for i in expected
    ]


def _id_table(items: np.ndarray) -> IdTable:
    texts = [str(item) for item in items]
    width = max(map(len, texts))
    return IdTable(np.array([t.encode() for t in texts], dtype=f"S{-(-width // 8) * 8}"))


def test_an_id_table_indexes_as_the_strings_do() -> None:
    strings = np.array(["doc_2", "a", "doc_10", "Zz", "doc_1"], dtype=object)
    table = _id_table(strings)
    codes = np.array([4, 0, 0, 3, 2, 1])
    assert table[codes].tolist() == strings[codes].tolist()
    assert table[codes].dtype == object
    assert table[2] == "doc_10" and isinstance(table[2], str)
    assert table[1:3].tolist() == ["a", "doc_10"]
    assert table._strings is None  # nothing made whole yet
    assert np.asarray(table).tolist() == strings.tolist() == table.tolist()
    assert len(table) == 5
    # Bytes order is str order (strcmp's): what orders tied rows.
    assert np.argsort(table.bytes, kind="stable").tolist() == np.argsort(strings).tolist()


def _coded_collection(seed: int, as_table: bool) -> tuple[Any, CodedRuns, Any]:
    """The ORLs and coded runs of :func:`_collection`, items in an object array or an IdTable."""
    qrels, runs = _collection(seed)
    every = pd.concat([qrels[["query", "item"]], *(run[["query", "item"]] for run in runs)])
    query_codes, queries = pd.factorize(every["query"].to_numpy(object))
    item_codes, items = pd.factorize(every["item"].to_numpy(object))
    cut = len(qrels)
    table = _id_table(items) if as_table else np.asarray(items, dtype=object)
    orls, _ = orls_from_coded_grades(
        query_codes[:cut], queries, item_codes[:cut], table, qrels["grade"].to_numpy()
    )
    coded = CodedRuns(
        runs=np.repeat(np.arange(len(runs)), [len(run) for run in runs]),
        query_codes=query_codes[cut:].astype(np.int64),
        queries=np.asarray(queries, dtype=object),
        item_codes=item_codes[cut:].astype(np.int64),
        items=table,
        scores=np.concatenate([run["score"].to_numpy() for run in runs]),
        n_runs=len(runs),
    )
    return orls, coded, table


@pytest.mark.parametrize("seed", [0, 1])
def test_runs_coded_into_an_id_table_score_as_with_strings(seed: int) -> None:
    results = []
    for as_table in (False, True):
        orls, coded, table = _coded_collection(seed, as_table)
        results.append(evaluate_runs(orls, coded, ["AP", "nDCG@10", "P@5"]))
        if isinstance(table, IdTable):
            assert table._strings is None  # scored without making the ids' strings
        results.append(evaluate_runs(orls, coded, MEASURES))  # some read the ids
    for mine, theirs in zip(results[3], results[1], strict=True):
        pd.testing.assert_frame_equal(mine.per_query, theirs.per_query, rtol=0, atol=0)
    for mine, theirs in zip(results[2], results[0], strict=True):
        pd.testing.assert_frame_equal(mine.per_query, theirs.per_query, rtol=0, atol=0)


def test_a_flat_run_needs_items_or_codes_and_table() -> None:
    with pytest.raises(TypeError):
        FlatRun(np.empty(0, dtype=object), np.zeros(1, dtype=np.int64))
    table = np.array(["a", "b"], dtype=object)
    flat = FlatRun(
        np.array(["q"], dtype=object), np.array([0, 3]), codes=np.array([1, 0, 1]), table=table
    )
    assert flat.items.tolist() == ["b", "a", "b"]
    assert flat.to_dict() == {"q": ["b", "a", "b"]}


def test_several_runs_on_one_id_table_are_scored_without_its_strings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    orls, coded, _ = _coded_collection(4, as_table=True)
    runs = range(coded.n_runs)
    made: list[int] = []
    real = batch._fixed_strings
    monkeypatch.setattr(batch, "_fixed_strings", lambda ids: made.append(len(ids)) or real(ids))
    assert len(evaluate_runs(orls, coded, ["AP", "nDCG@10"])) == len(runs) == 2
    assert made == []  # no id made a string
    assert len(evaluate_runs(orls, coded, ["AP", "RBP(p=0.8)@10", "ERR@10"])) == 2
    assert made  # the check sees strings being made
