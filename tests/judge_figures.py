"""Judge figures from an answered file; tiered plans, people and the build's adjusted Rand.

Shared by tests/judging (the reliability and both-orders simulations) and the benchmark.
"""

from __future__ import annotations

import csv
import math
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from fake_judge import answer_text, request_rng

from orlbuild.builders.audit.judge_quality import judge_figures
from orlbuild.builders.build import build_orls
from orlbuild.builders.calibration.simulation import (
    adjusted_rand_index,
    random_composition,
    tiered_strengths,
)
from orlbuild.builders.parameters import BuildParameters
from orlbuild.judging.answer_cache import AnswerCache, cache_key
from orlbuild.judging.prompts import DEFAULT_PROMPT, parse_verdict, prompt_hash
from orlbuild.services.judging import JudgeOptions, read_plan_rows


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


@dataclass(frozen=True)
class TieredPlan:
    """A plan over queries with true tiers, and people's answers to some of its pairs."""

    truth: dict[str, np.ndarray]  # query -> true tier rank of d00, d01, ...
    people: pd.DataFrame  # query, annotator, winner, loser, tie


def write_tiered_plan(
    path: Path,
    seed: int,
    *,
    queries: int = 5,
    items: int = 30,
    pairs: int = 2000,
    gap: float = 1.5,
    people_share: float = 0.5,
) -> TieredPlan:
    """A plan of ``pairs`` distinct pairs over ``queries`` queries whose items sit in 2-4 true tiers
    ``gap`` apart (strengths in the texts, as the fake judge reads them); people (``ann``,
    ``bob``) answer a ``people_share`` of the planned pairs once each, by Bradley-Terry."""
    rng = np.random.default_rng(seed)
    picks = random.Random(seed)
    truth, people = {}, []
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(
            ["query", "query_text", "item_a", "item_a_text", "item_b", "item_b_text", "winner"]
        )
        for q in range(queries):
            query = f"q{q}"
            parts = int(rng.integers(2, 5))
            strengths, truth[query] = tiered_strengths(random_composition(rng, items, parts), gap)
            cycle = [(i, (i + 1) % items) for i in range(items)]  # every graph connects
            rest = [
                (i, j) for i in range(items) for j in range(i + 2, items) if (j + 1) % items != i
            ]
            chosen = cycle + picks.sample(rest, pairs // queries - items)  # distinct pairs
            for k, (a, b) in enumerate(chosen):
                ids = (f"d{a:02d}", f"d{b:02d}")
                texts = [f"[id {i}] strength={strengths[int(i[1:])]:.4f}" for i in ids]
                writer.writerow([query, f"query {query}", ids[0], texts[0], ids[1], texts[1], ""])
                if picks.random() < people_share:
                    a_wins = picks.random() < 1 / (1 + math.exp(strengths[b] - strengths[a]))
                    winner, loser = ids if a_wins else ids[::-1]
                    people.append((query, ("ann", "bob")[k % 2], winner, loser, 0))
    frame = pd.DataFrame(people, columns=["query", "annotator", "winner", "loser", "tie"])
    return TieredPlan(truth, frame)


def build_ari(frame: pd.DataFrame, truth: dict[str, np.ndarray]) -> float:
    """Mean adjusted Rand index against the true tiers of a pairwise build with
    ``--annotators reliability`` (a query that fails to build counts as one tier)."""
    params = BuildParameters(source="pairwise", annotators="reliability", seed=1)
    _, outcome = build_orls(frame, params, on_error="skip")
    values = []
    for query, true in truth.items():
        orl = outcome.orls.get(query)
        rank = {} if orl is None else {i: t for t, tier in enumerate(orl.tiers) for i in tier}
        got = [rank.get(f"d{i:02d}", 0) for i in range(len(true))]
        values.append(adjusted_rand_index(true, got))
    return float(np.mean(values))


def fill_cache(path: Path, plan: Path, options: JudgeOptions, *, seed: int, rho: float) -> None:
    """Answer every question of ``plan`` in both orders into the answer cache at ``path``, as
    the fake judge (:mod:`fake_judge`) would over HTTP, so a judge run asks nothing."""
    digest = prompt_hash(DEFAULT_PROMPT)
    with AnswerCache(path) as cache:
        for row in read_plan_rows(plan):
            shown = ((row.item_a, row.item_a_text), (row.item_b, row.item_b_text))
            for (first, first_text), (second, second_text) in (shown, shown[::-1]):
                strengths = [float(t.rsplit("=", 1)[1]) for t in (first_text, second_text)]
                rng = request_rng(seed, row.query_text, first, second, 0)
                text = answer_text(*strengths, rho=rho, unparseable=0.05, rng=rng)
                key = cache_key(
                    options.chat.base_url, options.chat.model, digest, row.query, first, second
                )
                cache.put(key, text, parse_verdict(text).value, 7)
