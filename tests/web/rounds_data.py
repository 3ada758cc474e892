"""A store with a pairwise build, texts (some with HTML), and users: the web tests' data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from tests.builders.simulation import simulate_pairwise, tiered_strengths
from tests.store_cli import cli

STRENGTHS, _ = tiered_strengths([3, 3], 1.5)

#: The text of every item: HTML and a script that the pages must show as text.
ITEM_TEXT = "Text of <b>{item}</b> <script>alert('{item}')</script>"
QUERY_TEXT = "which one is <i>better</i>?"


def built_store(url: str, tmp_path: Path) -> list[str]:
    """A pairwise build ``b`` of two queries in ``url``; every item and query has a text.

    Returns the items.
    """
    rng = np.random.default_rng(5)
    frame = pd.concat(
        [simulate_pairwise(rng, STRENGTHS, 10, query=f"q{k}") for k in range(2)],
        ignore_index=True,
    )
    path = tmp_path / "judgments.tsv"
    frame[["query", "annotator", "winner", "loser", "tie"]].astype({"tie": int}).to_csv(
        path, sep="\t", index=False
    )
    code, _, err = cli(url, "ingest", "pairwise", str(path))
    assert code == 0, err
    code, _, err = cli(url, "build", "--source", "pairwise", "--name", "b")
    assert code == 0, err
    items = sorted(set(frame["winner"]) | set(frame["loser"]))
    texts = tmp_path / "corpus.tsv"
    texts.write_text("".join(f"{i}\tTitle {i}\t{ITEM_TEXT.format(item=i)}\n" for i in items))
    assert cli(url, "ingest", "text", str(texts), "--of", "items", "--format", "title-tsv")[0] == 0
    queries = tmp_path / "queries.tsv"
    queries.write_text(f"q0\t{QUERY_TEXT}\nq1\t{QUERY_TEXT}\n")
    assert cli(url, "ingest", "text", str(queries), "--of", "queries")[0] == 0
    return items
