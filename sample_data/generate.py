"""Generate the sample collection shipped in ``sample_data/`` (seeded, byte-for-byte reproducible).

The collection imitates a small annotation project: 40 queries of varied
breadth (single-answer look-ups up to broad category queries with 40
relevant items), each with a latent *true* tiered relevance. From that truth
the script simulates what a team would really collect:

* ``pairwise.tsv``  - pairwise preferences (``query annotator winner loser tie``)
  from six annotators of different reliability; ``ann06`` is careless and
  answers almost at random. Every query with two or more relevant items gets a
  connected comparison graph in which every item is compared.
* ``listwise.tsv``  - tiered rankings (``query annotator item rank``) by three
  annotators for a subset of 12 queries with at least two true tiers.
* ``graded.qrels``  - graded labels 0-3 by one assessor (TREC qrels) for another,
  disjoint subset of 14 queries, including the four single-answer look-ups and
  some judged non-relevant (grade 0) items.
* ``runs/<system>.trec`` - TREC runs of four systems of different quality
  (``hybrid`` > ``dense`` > ``bm25`` > ``tfidf``), 50 results per query, mixing
  reference items with non-reference ones; ``bm25`` scores are rounded to two
  decimals, so it contains tied scores, and ``tfidf`` returns nothing for one query.
* ``orl.qrels`` and ``run.trec`` - the true ORLs as TREC qrels (grade =
  T - tier + 1, docs/input-formats.md, "Input formats") and a copy of the ``bm25`` run, for the
  file-based ``orlbuild eval`` quick check.

Run ``python sample_data/generate.py`` to rewrite the files next to this
script, or ``--out DIR`` to write them elsewhere. The same seed always gives the
same bytes (a test checks it).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SEED = 20240611
N_QUERIES = 40
RUN_DEPTH = 50
TIER_GAP = 1.6  # latent Bradley-Terry strength between adjacent tiers
NONRELEVANT_GAP = 0.6  # non-relevant items' latent relevance, in tier gaps below the last tier
ANNOTATORS: dict[str, float] = {
    # name -> reliability (multiplies the strength difference in the BT model)
    "ann01": 2.0,
    "ann02": 1.6,
    "ann03": 1.3,
    "ann04": 1.0,
    "ann05": 0.8,
    "ann06": 0.05,  # careless: near-random answers
}
LISTWISE_NOISE: dict[str, float] = {  # sd of the tier an annotator perceives
    "ann01": 0.3,
    "ann02": 0.4,
    "ann03": 0.5,
    "ann04": 0.6,
    "ann05": 0.7,
    "ann06": 3.0,
}


@dataclass(frozen=True)
class System:
    """A simulated retrieval system: how well its scores follow the truth."""

    name: str
    signal: float
    noise: float
    decimals: int
    offset: float
    scale: float


SYSTEMS = (
    System("hybrid", signal=1.0, noise=0.9, decimals=4, offset=0.0, scale=1.0),
    System("dense", signal=1.0, noise=1.2, decimals=5, offset=0.0, scale=0.1),
    System("bm25", signal=1.0, noise=1.6, decimals=2, offset=14.0, scale=2.5),
    System("tfidf", signal=0.7, noise=2.2, decimals=4, offset=3.0, scale=0.8),
)
TFIDF_EMPTY_QUERY = "q23"  # tfidf returns nothing here (a run missing one query)


@dataclass(frozen=True)
class Query:
    """One query's latent truth: its relevant items, their tiers and strengths."""

    qid: str
    items: tuple[str, ...]
    tiers: tuple[int, ...]
    strengths: tuple[float, ...]
    nonrelevant: tuple[str, ...]

    @property
    def n_tiers(self) -> int:
        """Number of true tiers."""
        return max(self.tiers)


def _breadths(rng: np.random.Generator) -> list[int]:
    """Number of relevant items per query: look-ups, narrow, medium and broad queries."""
    sizes = [1] * 4
    sizes += [int(v) for v in rng.integers(2, 5, size=6)]
    sizes += [int(v) for v in rng.integers(5, 16, size=18)]
    sizes += [int(v) for v in rng.integers(16, 40, size=11)] + [40]
    order = rng.permutation(len(sizes))
    return [sizes[i] for i in order]


def _tiers_for(n: int, rng: np.random.Generator) -> list[int]:
    """Tier of every relevant item: few top items, more lower down, every tier used."""
    if n == 1:
        return [1]
    if n <= 4:
        n_tiers = int(rng.integers(1, 3))
    elif n <= 15:
        n_tiers = int(rng.integers(2, 5))
    else:
        n_tiers = int(rng.integers(3, 7))
    n_tiers = min(n_tiers, n)
    weights = np.arange(1, n_tiers + 1, dtype=float)
    tiers = list(range(1, n_tiers + 1))  # every tier non-empty
    tiers += [int(t) + 1 for t in rng.choice(n_tiers, size=n - n_tiers, p=weights / weights.sum())]
    return sorted(tiers)


def make_queries(rng: np.random.Generator) -> list[Query]:
    """Draw the latent truth of every query (item ids are unique across the collection)."""
    sizes = _breadths(rng)
    n_nonrel = [30 + s for s in sizes]
    doc_numbers = rng.choice(
        np.arange(10000, 100000), size=sum(sizes) + sum(n_nonrel), replace=False
    )
    ids = [f"D{int(v):05d}" for v in doc_numbers]
    queries, cursor = [], 0
    for index, (n, m) in enumerate(zip(sizes, n_nonrel, strict=True)):
        items = ids[cursor : cursor + n]
        nonrel = ids[cursor + n : cursor + n + m]
        cursor += n + m
        tiers = _tiers_for(n, rng)
        n_tiers = max(tiers)
        jitter = rng.normal(0.0, 0.12, size=n)
        strengths = [
            (n_tiers - t) * TIER_GAP + float(j) for t, j in zip(tiers, jitter, strict=True)
        ]
        queries.append(
            Query(
                qid=f"q{index + 1:02d}",
                items=tuple(items),
                tiers=tuple(tiers),
                strengths=tuple(round(s, 6) for s in strengths),
                nonrelevant=tuple(nonrel),
            )
        )
    return queries


def _comparison_pairs(n: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Pairs of item indices: a random spanning tree (connected, all compared) plus random pairs."""
    order = rng.permutation(n)
    pairs = [(int(order[i]), int(order[rng.integers(0, i)])) for i in range(1, n)]
    extra = 12 * n - len(pairs)
    first = rng.integers(0, n, size=extra)
    shift = rng.integers(1, n, size=extra)  # never pairs an item with itself
    pairs += [(int(a), int((a + s) % n)) for a, s in zip(first, shift, strict=True)]
    return pairs


def pairwise_rows(queries: Sequence[Query], rng: np.random.Generator) -> list[tuple[str, ...]]:
    """Simulate pairwise preferences (Bradley-Terry with annotator reliability, plus ties)."""
    names = list(ANNOTATORS)
    rows: list[tuple[str, ...]] = []
    for query in queries:
        n = len(query.items)
        if n < 2:
            continue
        for a, b in _comparison_pairs(n, rng):
            annotator = names[int(rng.integers(0, len(names)))]
            reliability = ANNOTATORS[annotator]
            same_tier = query.tiers[a] == query.tiers[b]
            p_tie = (0.3 if same_tier else 0.03) * min(1.0, reliability)
            if rng.random() < p_tie:
                first, second = (a, b) if rng.random() < 0.5 else (b, a)
                rows.append((query.qid, annotator, query.items[first], query.items[second], "1"))
                continue
            diff = reliability * (query.strengths[a] - query.strengths[b])
            a_wins = rng.random() < 1.0 / (1.0 + np.exp(-diff))
            winner, loser = (a, b) if a_wins else (b, a)
            rows.append((query.qid, annotator, query.items[winner], query.items[loser], "0"))
    return rows


def listwise_rows(queries: Sequence[Query], rng: np.random.Generator) -> list[tuple[str, ...]]:
    """Simulate tiered rankings by three annotators per query (tiers renumbered from 1).

    Items an annotator puts in one tier imply no preference, so a query's lists
    are drawn again until their implied comparisons connect every item (the
    ORL builder fails a query otherwise).
    """
    rows: list[tuple[str, ...]] = []
    for query in queries:
        lists = _connected_lists(query, rng)
        for annotator, seen in lists:
            dense = {t: r + 1 for r, t in enumerate(sorted(set(seen)))}
            ranked = sorted(zip(seen, query.items, strict=True))
            rows += [(query.qid, annotator, item, str(dense[t])) for t, item in ranked]
    return rows


def _connected_lists(query: Query, rng: np.random.Generator) -> list[tuple[str, list[int]]]:
    """Three annotators' perceived tiers of the query's items, with connected implied pairs."""
    names = list(ANNOTATORS)
    while True:
        lists = []
        for pick in sorted(rng.choice(len(names), size=3, replace=False)):
            annotator = names[int(pick)]
            noise = rng.normal(0.0, LISTWISE_NOISE[annotator], size=len(query.items))
            seen = np.clip(np.rint(np.asarray(query.tiers) + noise), 1, query.n_tiers)
            lists.append((annotator, [int(t) for t in seen]))
        if _implied_pairs_connect(len(query.items), [seen for _, seen in lists]):
            return lists


def _implied_pairs_connect(n: int, lists: Sequence[Sequence[int]]) -> bool:
    """Whether items in different tiers of some list link all ``n`` items (union-find)."""
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for tiers in lists:
        for a in range(n):
            for b in range(a + 1, n):
                if tiers[a] != tiers[b]:
                    parent[root(a)] = root(b)
    return len({root(i) for i in range(n)}) == 1


def graded_rows(queries: Sequence[Query], rng: np.random.Generator) -> list[tuple[str, ...]]:
    """Simulate one assessor's 0-3 grades (top tier 3, bottom tier 1, some slips, some zeros)."""
    rows: list[tuple[str, ...]] = []
    for query in queries:
        span = max(query.n_tiers - 1, 1)
        judged: list[tuple[str, int]] = []
        for item, tier in zip(query.items, query.tiers, strict=True):
            grade = 3 - round((tier - 1) * 2 / span)
            if rng.random() < 0.08:
                grade = int(np.clip(grade + rng.choice([-1, 1]), 1, 3))
            judged.append((item, grade))
        zeros = rng.choice(len(query.nonrelevant), size=5, replace=False)
        judged += [(query.nonrelevant[int(i)], 0) for i in sorted(zeros)]
        rows += [(query.qid, "0", item, str(grade)) for item, grade in sorted(judged)]
    return rows


def truth_rows(queries: Sequence[Query]) -> list[tuple[str, ...]]:
    """The true ORLs as TREC qrels, grade = T - tier + 1 (docs/input-formats.md, "Input
    formats")."""
    rows: list[tuple[str, ...]] = []
    for query in queries:
        pairs = sorted(zip(query.items, query.tiers, strict=True))
        rows += [(query.qid, "0", item, str(query.n_tiers - tier + 1)) for item, tier in pairs]
    return rows


def run_rows(
    system: System, queries: Sequence[Query], rng: np.random.Generator
) -> list[tuple[str, ...]]:
    """Simulate one system's TREC run: noisy scores around the latent strengths, top 50."""
    rows: list[tuple[str, ...]] = []
    for query in queries:
        bottom = min(query.strengths) - NONRELEVANT_GAP * TIER_GAP  # below every tier
        items = list(query.items) + list(query.nonrelevant)
        truth = np.array(list(query.strengths) + [bottom] * len(query.nonrelevant))
        difficulty = rng.uniform(0.7, 1.5)  # some queries are harder for this system
        raw = system.signal * truth + rng.normal(0.0, system.noise * difficulty, size=len(items))
        scores = np.round(system.offset + system.scale * raw, system.decimals)
        if system.name == "tfidf" and query.qid == TFIDF_EMPTY_QUERY:
            continue
        # trec_eval order: score descending, ties broken by document id descending
        ranked = sorted(
            zip(scores.tolist(), items, strict=True), key=lambda p: (-p[0], _desc(p[1]))
        )
        for rank, (score, item) in enumerate(ranked[:RUN_DEPTH], start=1):
            rows.append(
                (query.qid, "Q0", item, str(rank), f"{score:.{system.decimals}f}", system.name)
            )
    return rows


def _desc(text: str) -> tuple[int, ...]:
    """Sort key that orders strings descending."""
    return tuple(-ord(c) for c in text)


def _write(
    path: Path,
    rows: Iterable[Sequence[str]],
    *,
    header: Sequence[str] | None = None,
    sep: str = "\t",
) -> None:
    """Write rows with ``\\n`` line endings (byte-stable across platforms)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [sep.join(header)] if header else []
    lines += [sep.join(row) for row in rows]
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))


def generate(out: Path, seed: int = SEED) -> list[Path]:
    """Write every sample file under ``out`` and return their paths.

    Parameters
    ----------
    out
        Target directory (created if needed).
    seed
        Seed of the ``numpy.random.Generator``; the default reproduces the
        committed files byte for byte.
    """
    rng = np.random.default_rng(seed)
    queries = make_queries(rng)
    multi = [q for q in queries if len(q.items) >= 2]
    subset = [multi[int(i)] for i in rng.permutation(len(multi))]
    eligible = [q for q in subset if 3 <= len(q.items) <= 15 and q.n_tiers >= 2]
    listwise = sorted(eligible[:12], key=lambda q: q.qid)
    taken = {q.qid for q in listwise}
    singles = [q for q in queries if len(q.items) == 1]
    others = [q for q in subset if q.qid not in taken][:10]
    graded = sorted(singles + others, key=lambda q: q.qid)

    written = {
        "pairwise.tsv": (
            pairwise_rows(queries, rng),
            ("query", "annotator", "winner", "loser", "tie"),
            "\t",
        ),
        "listwise.tsv": (
            listwise_rows(listwise, rng),
            ("query", "annotator", "item", "rank"),
            "\t",
        ),
        "graded.qrels": (graded_rows(graded, rng), None, " "),
        "orl.qrels": (truth_rows(queries), None, " "),
    }
    for system in SYSTEMS:
        written[f"runs/{system.name}.trec"] = (run_rows(system, queries, rng), None, " ")
    written["run.trec"] = written["runs/bm25.trec"]
    paths = []
    for name, (rows, header, sep) in written.items():
        _write(out / name, rows, header=header, sep=sep)
        paths.append(out / name)
    return paths


def main(argv: Sequence[str] | None = None) -> None:
    """Command line: ``python sample_data/generate.py [--out DIR] [--seed N]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    for path in generate(args.out, args.seed):
        print(path)


if __name__ == "__main__":
    main()
