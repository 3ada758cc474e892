"""A store of graded and listwise judgments of 30 queries and four systems' runs.

``ideal`` (by grade), ``twin`` (the same lists), ``reversed`` (each list
backwards) and ``partial`` (answers only the first 20 queries, noisy order);
builds ``graded`` and ``lists``. Shared by the CLI tests of score, compare,
power and report, and by the services' power tests.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from orlbuild.builders.parameters import BuildParameters
from orlbuild.services.builds import build_and_store
from orlbuild.services.ingests import ingest_file
from tests.stores import store_engine

N_QUERIES = 30


def _trec(lists: dict[str, list[str]], tag: str) -> str:
    return "".join(
        f"{q} Q0 {item} {rank} {100 - rank} {tag}\n"
        for q, items in lists.items()
        for rank, item in enumerate(items, start=1)
    )


def evaluation_store(migrated_db_url: str, tmp_path: Path) -> str:
    """Fill a migrated store with the judgments and runs above; return its URL."""
    rng = np.random.default_rng(5)
    qrels, listwise, ideal = [], ["query\tannotator\titem\trank"], {}
    for q in range(N_QUERIES):
        query = f"q{q:02d}"
        grades = rng.permutation([3, 2, 2, 1, 1, 1, 0, 0])
        items = [f"{query}d{i}" for i in range(len(grades))]
        qrels += [f"{query} 0 {item} {grade}" for item, grade in zip(items, grades, strict=True)]
        order = [items[i] for i in np.argsort(-grades, kind="stable")]
        listwise += [f"{query}\tann\t{item}\t{r}" for r, item in enumerate(order[:5], start=1)]
        ideal[query] = order
    noisy = {q: list(rng.permutation(v)) for q, v in list(ideal.items())[:20]}
    files = {
        "graded.qrels": "\n".join(qrels) + "\n",
        "listwise.tsv": "\n".join(listwise) + "\n",
        "ideal.trec": _trec(ideal, "ideal"),
        "twin.trec": _trec(ideal, "twin"),
        "reversed.trec": _trec({q: v[::-1] for q, v in ideal.items()}, "rev"),
        "partial.trec": _trec(noisy, "partial"),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with store_engine(migrated_db_url) as engine:
        ingest_file(engine, "graded", tmp_path / "graded.qrels")
        ingest_file(engine, "listwise", tmp_path / "listwise.tsv")
        for system in ("ideal", "twin", "reversed", "partial"):
            ingest_file(engine, "run", tmp_path / f"{system}.trec", system=system)
        build_and_store(engine, BuildParameters(source="graded"), name="graded")
        build_and_store(engine, BuildParameters(source="listwise"), name="lists")
    return migrated_db_url
