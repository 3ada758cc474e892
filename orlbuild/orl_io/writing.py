"""ORL export formats (docs/input-formats.md, "Input formats") and the diff of two builds.

Inputs are the entry frames of the store (``query, item, rank, ...``).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from orlbuild.errors import ConfigError
from orlbuild.vocabulary import ExportFormat

__all__ = ["backed_entries", "diff_orl_entries", "export_orls", "trec_prefs_preferences"]

#: Judgment group and sub-group of a trec-prefs export: one group per query holding the ORL.
TREC_PREFS_GROUP = ("orl", "1")


def _orl_json(entries: pd.DataFrame, build: dict[str, Any]) -> str:
    queries: dict[str, dict[str, int]] = {}
    for row in entries[["query", "item", "rank"]].itertuples(index=False):
        queries.setdefault(str(row.query), {})[str(row.item)] = int(row.rank)
    return json.dumps({"build": build, "queries": queries}, indent=2, ensure_ascii=False) + "\n"


def _orl_tsv(entries: pd.DataFrame, *, raw_cells: bool = False) -> str:
    from orlbuild.orl_io.cells import safe_frame

    frame = entries[["query", "item", "rank"]]
    frame = frame if raw_cells else safe_frame(frame)
    return str(frame.to_csv(sep="\t", index=False, lineterminator="\n"))


#: What each text export cannot hold inside an id: the formats split lines on it.
_SEPARATORS = {
    "qrels": ("whitespace", r"\s"),
    "trec-prefs": ("whitespace", r"\s"),
    "tsv": ("a tab or line break", r"[\t\r\n]"),
}


def _check_ids(entries: pd.DataFrame, fmt: ExportFormat | str) -> None:
    """Refuse ids the format cannot hold (docs/input-formats.md, "Input formats": ORL exports).

    A query or item id with a space would be split into more columns by every
    reader of a whitespace-separated file, so the export would not read back.

    Raises
    ------
    ConfigError
        Naming the first such id and the formats that hold it (json).
    """
    if str(fmt) not in _SEPARATORS:
        return
    what, pattern = _SEPARATORS[str(fmt)]
    for column in ("query", "item"):
        values = entries[column].astype(str)
        bad = values[values.str.contains(pattern, regex=True) | (values == "")]
        if len(bad):
            raise ConfigError(
                f"cannot export as {fmt}: {column} id {bad.iloc[0]!r} contains {what}, which "
                f"{fmt} uses to separate columns ({len(bad)} such row(s)); use --format json"
            )


def _orl_qrels(entries: pd.DataFrame) -> str:
    tiers = entries.groupby("query")["rank"].transform("max")
    grade = (tiers - entries["rank"] + 1).astype(int)
    lines = [
        f"{q} 0 {i} {g}"
        for q, i, g in zip(entries["query"], entries["item"], grade.tolist(), strict=True)
    ]
    return "".join(line + "\n" for line in lines)


def _orl_trec_prefs(entries: pd.DataFrame) -> str:
    """trec_eval ``-R prefs`` lines ``qid jg jsg docno rel_level``: one sub-group per query.

    ``rel_level = T - rank + 1`` as for qrels: within the sub-group every item
    is preferred to the items of later tiers, and items of one tier (equal
    levels) carry no preference, which is exactly an ORL's order.
    """
    tiers = entries.groupby("query")["rank"].transform("max")
    level = (tiers - entries["rank"] + 1).astype(int)
    group, sub = TREC_PREFS_GROUP
    lines = [
        f"{q} {group} {sub} {i} {g}"
        for q, i, g in zip(entries["query"], entries["item"], level.tolist(), strict=True)
    ]
    return "".join(line + "\n" for line in lines)


def trec_prefs_preferences(text: str) -> int:
    """How many preferences (item pairs at different levels of one query) a trec-prefs text states.

    Parameters
    ----------
    text
        Lines ``qid jg jsg docno rel_level`` as :func:`export_orls` writes them.

    Returns
    -------
    int
        Summed over the queries, the pairs of items whose levels differ: 0 when every
        query's items share one level (nothing for ``trec_eval -R prefs`` to score).
    """
    from collections import Counter

    levels: dict[str, Counter[str]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 5:
            levels.setdefault(parts[0], Counter())[parts[4]] += 1
    total = 0
    for counts in levels.values():
        n = sum(counts.values())
        total += (n * n - sum(c * c for c in counts.values())) // 2
    return total


def backed_entries(
    entries: pd.DataFrame,
    unbacked_boundaries: dict[str, set[int]],
    under_judged: dict[str, set[str]],
) -> pd.DataFrame:
    """The entries restricted to the orders a test backs.

    See docs/tiers-and-audit.md, "How tiers are decided and audited".

    Tiers joined by a boundary that some crossing pair does not back are
    merged (their items keep no order), and under-judged items, whose orders
    are never backed, are left out; every order the result states is backed.

    Parameters
    ----------
    entries
        ``query, item, rank`` (sorted by query, rank).
    unbacked_boundaries
        Query -> ranks ``k`` whose boundary above tier ``k`` is not backed.
    under_judged
        Query -> under-judged items.
    """
    parts = []
    for query, part in entries.groupby("query", sort=False):
        q = str(query)
        part = part[~part["item"].isin(under_judged.get(q, set()))].copy()
        merged = unbacked_boundaries.get(q, set())
        ranks = part["rank"].to_numpy()
        # a new block starts at every tier whose boundary above is backed
        tiers = np.unique(ranks)
        starts = np.array([k not in merged for k in tiers])
        starts[:1] = True
        block = dict(zip(tiers.tolist(), np.cumsum(starts).tolist(), strict=True))
        part["rank"] = [block[int(r)] for r in ranks]
        parts.append(part)
    return pd.concat(parts, ignore_index=True) if parts else entries


def export_orls(
    entries: pd.DataFrame, fmt: ExportFormat, *, build: dict[str, Any], raw_cells: bool = False
) -> str:
    """Render a build's ORLs.

    Parameters
    ----------
    entries
        Columns ``query, item, rank`` (sorted by query, rank).
    fmt
        ``json`` (``{"build": {...}, "queries": {q: {item: rank}}}``), ``tsv``
        (``query item rank`` with a header), ``qrels`` (TREC qrels with
        ``grade = T - rank + 1``, so other tools can read an ORL) or
        ``trec-prefs`` (trec_eval's ``-R prefs`` format, docs/input-formats.md, "Input formats").
    build
        Build metadata for the JSON form.
    raw_cells
        ``tsv`` is meant for people and spreadsheets: a query or item id a spreadsheet
        would run as a formula (``=...``, ``+...``, ``-...``, ``@...``) is written with a
        leading ``'`` (:mod:`orlbuild.orl_io.cells`) unless ``raw_cells``. ``json``,
        ``qrels`` and ``trec-prefs`` are for tools and always byte-exact.

    Returns
    -------
    str
        The document.

    Raises
    ------
    ConfigError
        An id the format cannot hold (whitespace in qrels or trec-prefs, a tab
        or line break in tsv): the export would not read back.
    """
    _check_ids(entries, fmt)
    if fmt is ExportFormat.json:
        return _orl_json(entries, build)
    if fmt is ExportFormat.tsv:
        return _orl_tsv(entries, raw_cells=raw_cells)
    return _WRITERS[fmt](entries)


def diff_orl_entries(entries_a: pd.DataFrame, entries_b: pd.DataFrame) -> pd.DataFrame:
    """Per query, the items whose tier differs between two builds.

    Parameters
    ----------
    entries_a, entries_b
        Entry frames (``query, item, rank``) of builds A and B.

    Returns
    -------
    pandas.DataFrame
        Columns ``query, item, rank_a, rank_b, tiers_a, tiers_b, change`` where
        ``change`` is ``up``/``down`` (rank in B better/worse than in A),
        ``added`` (only in B) or ``removed`` (only in A); items whose rank did
        not change are left out. Sorted by query and item.
    """
    keys = ["query", "item"]
    a = entries_a[[*keys, "rank"]].rename(columns={"rank": "rank_a"})
    b = entries_b[[*keys, "rank"]].rename(columns={"rank": "rank_b"})
    both = a.merge(b, on=keys, how="outer")
    tiers_a = entries_a.groupby("query")["rank"].max().rename("tiers_a")
    tiers_b = entries_b.groupby("query")["rank"].max().rename("tiers_b")
    both = both.join(tiers_a, on="query").join(tiers_b, on="query")
    ra, rb = both["rank_a"].to_numpy(dtype=float), both["rank_b"].to_numpy(dtype=float)
    change = np.select(
        [np.isnan(ra), np.isnan(rb), rb < ra, rb > ra],
        ["added", "removed", "up", "down"],
        default="",
    )
    both["change"] = change
    out = both[both["change"] != ""].sort_values(keys, ignore_index=True)
    for column in ("rank_a", "rank_b", "tiers_a", "tiers_b"):
        out[column] = out[column].astype("Int64")
    return out[[*keys, "rank_a", "rank_b", "tiers_a", "tiers_b", "change"]]


#: The export formats without build metadata, by format.
_WRITERS = {
    ExportFormat.tsv: _orl_tsv,
    ExportFormat.qrels: _orl_qrels,
    ExportFormat.trec_prefs: _orl_trec_prefs,
}
