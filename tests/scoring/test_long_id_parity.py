"""Parity with trec_eval on MS MARCO-like ids (long, nearly all distinct) and tied scores.

``orlbuild eval`` reads TREC files into integer id codes and orders the ties
of a query by document id only among the tied rows (``scoring.run.trec_order``);
these tests check that against pytrec_eval (trec_eval 9.0.8) through the
whole file path, ties in float32 included, and against a plain sort on the
id strings.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from orlbuild.services.file_evaluations import evaluate_files
from scoring.run import comparable_scores, trec_order

pytrec_eval = pytest.importorskip("pytrec_eval")

OURS = {
    "AP": "map",
    "nDCG(grade=native,gain=linear)@10": "ndcg_cut_10",
    "P@10": "P_10",
    "RR": "recip_rank",
    "nDCG(grade=native,gain=linear)": "ndcg",
}


def _msmarco_ids(rng: np.random.Generator, size: int) -> list[str]:
    """Distinct ids shaped as ``msmarco_passage_NN_NNNNNNNNN`` (some sharing long prefixes)."""
    numbers = rng.choice(10**9, size=size, replace=False)
    return [f"msmarco_passage_{n % 70:02d}_{n:09d}" for n in numbers.tolist()]


def _write_collection(folder: Path, seed: int, runs: int) -> tuple[Path, list[Path], dict, list]:
    """Qrels and ``runs`` TREC runs on distinct long ids, with ties in float64 and float32 only."""
    rng = np.random.default_rng(seed)
    n_queries, depth = 40, 60
    ids = _msmarco_ids(rng, n_queries * depth * 2)
    qrels: dict[str, dict[str, int]] = {}
    dicts: list[dict[str, dict[str, float]]] = [{} for _ in range(runs)]
    qrel_lines, run_lines = [], [[] for _ in range(runs)]
    for q in range(n_queries):
        query = str(1_000_000 + 37 * q)
        pool = ids[q * depth * 2 : (q + 1) * depth * 2]
        judged = rng.choice(pool, size=30, replace=False).tolist()
        grades = rng.integers(0, 4, size=len(judged))
        grades[0] = 3  # at least one relevant document
        qrels[query] = dict(zip(judged, grades.tolist(), strict=True))
        qrel_lines += [f"{query} 0 {d} {g}\n" for d, g in zip(judged, grades, strict=True)]
        for r in range(runs):
            docs = rng.choice(pool, size=depth, replace=False).tolist()
            # Two decimals over a narrow range: many exact ties; a 1e-9 jitter on some
            # makes ties that exist only in float32.
            scores = np.round(rng.uniform(5, 6, size=depth), 1)
            scores = scores + (rng.random(depth) < 0.3) * 1e-9 * rng.integers(1, 4, size=depth)
            order = rng.permutation(depth)  # file order is not the trec_eval order
            dicts[r][query] = {docs[i]: float(scores[i]) for i in order}
            run_lines[r] += [
                f"{query} Q0 {docs[i]} {k} {float(scores[i])!r} run{r}\n"
                for k, i in enumerate(order.tolist(), 1)
            ]
    dicts[0].pop(str(1_000_000))  # a query missing from one run
    run_lines[0] = [line for line in run_lines[0] if not line.startswith("1000000 ")]
    qrels_path = folder / "qrels.txt"
    qrels_path.write_text("".join(qrel_lines))
    paths = []
    for r, lines in enumerate(run_lines):
        path = folder / f"run{r}.trec"
        path.write_text("".join(lines))
        paths.append(path)
    return qrels_path, paths, qrels, dicts


@pytest.mark.parametrize("runs", [1, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_eval_files_match_trec_eval_on_long_ids_with_ties(
    tmp_path: Path, seed: int, runs: int
) -> None:
    qrels_path, paths, qrels, dicts = _write_collection(tmp_path, seed, runs)
    result = evaluate_files(qrels_path, paths, list(OURS))
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(OURS.values()))
    for (name, evaluation), run in zip(result.evaluations.items(), dicts, strict=True):
        expected = evaluator.evaluate(run)
        frame = evaluation.per_query
        for query, values in expected.items():
            for ours, theirs in OURS.items():
                assert frame.loc[query, ours] == pytest.approx(values[theirs], abs=1e-12), (
                    name,
                    query,
                    ours,
                )


def test_float32_ties_change_the_order_here() -> None:
    """The generated runs do hold ties that only float32 sees (so the test above can fail)."""
    rng = np.random.default_rng(0)
    scores = np.round(rng.uniform(5, 6, size=200), 1) + (rng.random(200) < 0.3) * 1e-9
    assert len(np.unique(comparable_scores(scores, "float32"))) < len(np.unique(scores))


@pytest.mark.parametrize("seed", range(5))
def test_trec_order_equals_a_sort_on_the_id_strings(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 2000
    items = np.asarray([*_msmarco_ids(rng, 500), "a", "b", "ab", "é", "Z", "10", "9"], dtype=object)
    items = items[rng.permutation(len(items))]  # codes do not follow the strings
    group = rng.integers(0, 30, size=n)
    primary = rng.integers(0, 4, size=n).astype(float)  # many ties
    codes = rng.integers(0, len(items), size=n)
    got = trec_order(group, primary, codes, items)
    # Reference: Python's sort on (group, primary, id descending), stable.
    ids = items[codes]
    expected = sorted(range(n), key=lambda i: (group[i], primary[i]))
    expected = sorted(expected, key=lambda i: (group[i], primary[i], _desc(ids[i])))
    assert got.tolist() == expected
    no_ties = trec_order(np.zeros(3, dtype=np.int64), np.array([3.0, 1.0, 2.0]), codes[:3], items)
    assert no_ties.tolist() == [1, 2, 0]


class _desc(str):
    """A string that sorts in reverse (for the reference sort)."""

    __slots__ = ()

    def __lt__(self, other: str) -> bool:  # type: ignore[override]
        return str.__gt__(self, other)
