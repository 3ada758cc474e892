"""Read an answered arena file into raw preferences and compute the judge figures."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pandas as pd

from orlbuild.builders.audit.judge_quality import judge_figures


def answered_preferences(path: Path) -> pd.DataFrame:
    rows = []
    for r in csv.DictReader(path.open(), delimiter="\t"):
        first, second, word = r["item_a"], r["item_b"], r["winner"]
        winner, loser = (second, first) if word == "b" else (first, second)
        rows.append((r["query"], r["annotator"], winner, loser, int(word == "tie"), first))
    return pd.DataFrame(rows, columns=["query", "annotator", "winner", "loser", "tie", "first"])


def judge_figures_from_files(
    answered: Path, plan: Path, strengths: dict[str, float], *, rho: float
) -> tuple[dict, float]:
    """The judge's figures, and the flip rate the injection predicts on the pairs both parsed."""
    prefs = answered_preferences(answered)
    figures = judge_figures(prefs).iloc[0].to_dict()
    counted = prefs.groupby(
        ["query", prefs[["winner", "loser"]].min(axis=1), prefs[["winner", "loser"]].max(axis=1)]
    ).size()
    expected = []
    for (_, lo, hi), n in counted.items():
        if n != 2:
            continue
        p = 1 / (1 + math.exp(strengths[hi] - strengths[lo]))
        q1, q2 = rho + (1 - rho) * p, rho + (1 - rho) * (1 - p)
        expected.append(q1 * q2 + (1 - q1) * (1 - q2))
    return figures, sum(expected) / len(expected)
