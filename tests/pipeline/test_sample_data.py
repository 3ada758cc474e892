"""The committed sample collection: reproducible from its generator and fit for the pipeline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import networkx as nx
import pandas as pd
import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
GENERATED = [
    "pairwise.tsv",
    "listwise.tsv",
    "graded.qrels",
    "orl.qrels",
    "run.trec",
    "runs/hybrid.trec",
    "runs/dense.trec",
    "runs/bm25.trec",
    "runs/tfidf.trec",
]
SYSTEMS = ("hybrid", "dense", "bm25", "tfidf")
TREC_RUN = ["query", "q0", "item", "rank", "score", "tag"]
QRELS = ["query", "iteration", "item", "grade"]


def read_ws(path: Path, names: list[str]) -> pd.DataFrame:
    return pd.read_csv(path, sep=" ", header=None, names=names, dtype={"query": str, "item": str})


@pytest.fixture(scope="module")
def truth() -> pd.DataFrame:
    return read_ws(SAMPLE / "orl.qrels", QRELS)


def test_generator_reproduces_committed_files_byte_for_byte(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(SAMPLE / "generate.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    written = sorted(Path(line).relative_to(tmp_path).as_posix() for line in result.stdout.split())
    assert written == sorted(GENERATED)
    for name in GENERATED:
        assert (tmp_path / name).read_bytes() == (SAMPLE / name).read_bytes(), name


def test_another_seed_gives_other_data(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(SAMPLE / "generate.py"), "--out", str(tmp_path), "--seed", "1"],
        capture_output=True,
        check=True,
    )
    assert (tmp_path / "pairwise.tsv").read_bytes() != (SAMPLE / "pairwise.tsv").read_bytes()


def test_sample_data_is_small() -> None:
    total = sum(p.stat().st_size for p in SAMPLE.rglob("*") if p.is_file() and p.suffix != ".db")
    assert total < 2 * 1024 * 1024


def test_queries_have_varied_breadth(truth: pd.DataFrame) -> None:
    sizes = truth.groupby("query").size()
    assert len(sizes) == 40
    assert sizes.min() == 1 and sizes.max() == 40
    assert (sizes == 1).sum() >= 3  # narrow look-ups
    assert (sizes >= 20).sum() >= 5  # broad category queries
    tiers = truth.groupby("query")["grade"].max()
    assert tiers.max() >= 5


def test_every_pairwise_graph_is_connected_and_covers_the_orl(truth: pd.DataFrame) -> None:
    pairs = pd.read_csv(SAMPLE / "pairwise.tsv", sep="\t", dtype=str)
    assert list(pairs.columns) == ["query", "annotator", "winner", "loser", "tie"]
    assert set(pairs["tie"]) == {"0", "1"}
    assert (pairs["winner"] != pairs["loser"]).all()
    assert pairs["annotator"].nunique() == 6
    for query, rows in truth.groupby("query"):
        judged = pairs[pairs["query"] == query]
        if len(rows) == 1:
            assert judged.empty  # a single item cannot be compared
            continue
        graph = nx.Graph(list(zip(judged["winner"], judged["loser"], strict=True)))
        assert set(graph.nodes) == set(rows["item"]), query
        assert nx.is_connected(graph), query


def test_careless_annotator_disagrees_with_the_truth(truth: pd.DataFrame) -> None:
    pairs = pd.read_csv(SAMPLE / "pairwise.tsv", sep="\t", dtype=str)
    grade = truth.set_index(["query", "item"])["grade"]
    decided = pairs[pairs["tie"] == "0"]
    win = grade.loc[list(zip(decided["query"], decided["winner"], strict=True))].to_numpy()
    lose = grade.loc[list(zip(decided["query"], decided["loser"], strict=True))].to_numpy()
    informative = win != lose
    correct = pd.Series(win > lose)[informative].groupby(
        decided["annotator"].to_numpy()[informative]
    )
    agreement = correct.mean()
    assert agreement["ann06"] < 0.65
    assert (agreement.drop("ann06") > 0.8).all()


def test_listwise_and_graded_cover_disjoint_subsets(truth: pd.DataFrame) -> None:
    lists = pd.read_csv(SAMPLE / "listwise.tsv", sep="\t", dtype={"query": str, "item": str})
    graded = read_ws(SAMPLE / "graded.qrels", QRELS)
    assert set(lists["query"]).isdisjoint(set(graded["query"]))
    assert 8 <= lists["query"].nunique() < 40 and 8 <= graded["query"].nunique() < 40
    for _, ranks in lists.groupby(["query", "annotator"]):
        assert sorted(set(ranks["rank"])) == list(range(1, ranks["rank"].max() + 1))
    assert (lists.groupby("query")["annotator"].nunique() == 3).all()
    assert set(graded["grade"]) <= {0, 1, 2, 3} and (graded["grade"] == 0).any()
    singles = truth.groupby("query").size().loc[lambda s: s == 1].index
    assert set(singles) <= set(graded["query"])


def test_runs_mix_reference_items_ties_and_a_missing_query(truth: pd.DataFrame) -> None:
    reference = set(zip(truth["query"], truth["item"], strict=True))
    for system in SYSTEMS:
        run = read_ws(SAMPLE / "runs" / f"{system}.trec", TREC_RUN)
        assert set(run["tag"]) == {system}
        assert not run.duplicated(["query", "item"]).any()
        in_orl = [pair in reference for pair in zip(run["query"], run["item"], strict=True)]
        assert 0 < sum(in_orl) < len(run)
        ordered = run.sort_values(["query", "rank"])
        assert (ordered.groupby("query")["score"].diff().dropna() <= 0).all()
    bm25 = read_ws(SAMPLE / "runs" / "bm25.trec", TREC_RUN)
    assert bm25.duplicated(["query", "score"]).any()  # tied scores
    tfidf = read_ws(SAMPLE / "runs" / "tfidf.trec", TREC_RUN)
    assert tfidf["query"].nunique() == 39
    assert (SAMPLE / "run.trec").read_bytes() == (SAMPLE / "runs" / "bm25.trec").read_bytes()


def test_listwise_lists_imply_a_connected_comparison_graph() -> None:
    lists = pd.read_csv(SAMPLE / "listwise.tsv", sep="\t", dtype={"query": str, "item": str})
    for query, rows in lists.groupby("query"):
        graph = nx.Graph()
        graph.add_nodes_from(rows["item"])
        for _, one in rows.groupby("annotator"):
            items, ranks = one["item"].tolist(), one["rank"].tolist()
            graph.add_edges_from(
                (items[i], items[j])
                for i in range(len(items))
                for j in range(i + 1, len(items))
                if ranks[i] != ranks[j]
            )
        assert nx.is_connected(graph), query


def test_every_query_of_every_sample_build_succeeds() -> None:
    from orlbuild.builders import BuildParameters, build_orls
    from orlbuild.pipeline.config import load_config

    frames = {
        "pairwise": pd.read_csv(SAMPLE / "pairwise.tsv", sep="\t", dtype=str).astype({"tie": int}),
        "listwise": pd.read_csv(
            SAMPLE / "listwise.tsv", sep="\t", dtype={"query": str, "item": str}
        ),
        "graded": read_ws(SAMPLE / "graded.qrels", QRELS).rename(
            columns={"iteration": "annotator"}
        ),
    }
    expected = {"pairwise": 36, "listwise": 12, "graded": 14}
    for spec in load_config(SAMPLE / "pipeline.toml").builds:
        options = {k: v for k, v in spec.parameters.items() if k != "on_error"}
        params = BuildParameters(source=spec.source, method=spec.method, **options)
        _, outcome = build_orls(frames[spec.source], params)  # raises if any query fails
        assert len(outcome.orls) == expected[spec.source]
