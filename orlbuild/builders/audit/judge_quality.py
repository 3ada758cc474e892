"""What ``quality`` says of an LLM judge (docs/llm-judges.md, "What the bias figures mean").

Per annotator named ``llm:<model>``, from its raw preferences with the item
shown ``first``:

* ``first_position_rate``: the share of its strict preferences won by the item
  shown first (0.5 is unbiased), with a 95% Wilson interval;
* ``flip_rate``: among pairs it answered strictly in both orders, the share
  whose winner changed with the order (a judge that only followed the
  position flips every pair), with a Wilson interval;
* ``inconsistent_share``: among pairs answered in both orders, the share
  whose two outcomes differ (a tie against a preference counts), as MT-Bench
  counts them;
* ``kappa_people``: Cohen's kappa between its judgments and the people's
  majority on the same pairs (outcomes: smaller id wins, larger wins, tie),
  with a 95% percentile bootstrap interval over pairs (seeded);
* ``majority_agreement``: the share of its judgments on pairs with a strict
  human majority that side with it, with a Wilson interval.

The first-position and majority intervals are Wilson's on the effective sample size of
judgments clustered by pair (:func:`clustered_wilson_interval`): the two orders of a pair
are not independent. Coverage of the nominal 95% intervals, seeded simulation of
tests/judging/test_judge_coverage.py (150 pairs a seed, 400 seeds; docs/llm-judges.md):
a position-biased judge (first-position rate 0.7): majority 0.968, kappa 0.960,
first-position 0.973, flip 0.945; an unbiased judge with easy and hard pairs: majority
0.948 (0.920 with plain Wilson), kappa 0.928, first-position 0.995, flip 0.950.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["JUDGE_PREFIX", "clustered_wilson_interval", "judge_figures", "wilson_interval"]

#: Annotators whose name starts with this are judges (``orlbuild judge`` writes ``llm:<model>``).
JUDGE_PREFIX = "llm:"

_Z = 1.959963984540054


def wilson_interval(successes: float, n: float) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion (NaN, NaN with ``n == 0``)."""
    if n <= 0:
        return (float("nan"), float("nan"))
    p = successes / n
    centre = (p + _Z**2 / (2 * n)) / (1 + _Z**2 / n)
    half = _Z * np.sqrt(p * (1 - p) / n + _Z**2 / (4 * n * n)) / (1 + _Z**2 / n)
    return (float(centre - half), float(centre + half))


def clustered_wilson_interval(hits: np.ndarray, clusters: np.ndarray) -> tuple[float, float]:
    """The 95% Wilson interval of a share of ``hits`` whose judgments come in ``clusters``
    (the two orders of a pair), on the effective sample size ``n / deff``.

    ``deff`` is the design effect (Kish 1965): the ratio estimator's variance over the
    clusters (with the ``c / (c - 1)`` correction) against the binomial variance, at least
    1, so positively correlated orders widen the interval and negatively correlated ones
    (position bias) leave it as Wilson's. NaN, NaN with no judgments.
    """
    n = len(hits)
    if n == 0:
        return (float("nan"), float("nan"))
    p = float(np.mean(hits))
    _, codes = np.unique(clusters, return_inverse=True)
    k = np.bincount(codes, weights=hits.astype(float))
    m = np.bincount(codes).astype(float)
    c = len(m)
    if c < 2 or p in (0.0, 1.0):
        return wilson_interval(p * n, n)
    variance = c / (c - 1) * float(np.sum((k - p * m) ** 2)) / n**2
    deff = max(1.0, variance / (p * (1 - p) / n))
    return wilson_interval(p * n / deff, n / deff)


def _outcomes(prefs: pd.DataFrame) -> pd.DataFrame:
    """``query, lo, hi, outcome, first_lo`` per judgment: 0 lo wins, 1 hi wins, 2 tie."""
    winner = prefs["winner"].astype(str).to_numpy()
    loser = prefs["loser"].astype(str).to_numpy()
    lo, hi = np.minimum(winner, loser), np.maximum(winner, loser)
    tie = prefs["tie"].to_numpy(dtype=bool)
    outcome = np.where(tie, 2, np.where(winner == lo, 0, 1))
    first = prefs["first"] if "first" in prefs.columns else pd.Series(None, index=prefs.index)
    return pd.DataFrame(
        {
            "query": prefs["query"].astype(str).to_numpy(),
            "lo": lo,
            "hi": hi,
            "outcome": outcome,
            "first_lo": (first.astype(object).to_numpy() == lo),
            "first_known": first.notna().to_numpy(),
            "won_first": (~tie) & (first.astype(object).to_numpy() == winner),
        }
    )


def _pair_codes(frame: pd.DataFrame) -> np.ndarray:
    """One code per (query, lo, hi): the cluster of a judgment."""
    return frame.groupby(["query", "lo", "hi"], sort=False).ngroup().to_numpy()


def _kappa(a: np.ndarray, b: np.ndarray) -> float:
    if len(a) == 0:
        return float("nan")
    observed = float(np.mean(a == b))
    pa = np.bincount(a, minlength=3) / len(a)
    pb = np.bincount(b, minlength=3) / len(b)
    expected = float(pa @ pb)
    return float("nan") if expected >= 1 else (observed - expected) / (1 - expected)


def _one_judge(mine: pd.DataFrame, people: pd.DataFrame, draws: int, seed: int) -> dict:
    strict = mine[(mine["outcome"] != 2) & mine["first_known"]]
    won = int(strict["won_first"].sum())
    row: dict[str, float | int] = {"judgments": len(mine), "strict_known_order": len(strict)}
    row["first_position_rate"] = won / len(strict) if len(strict) else float("nan")
    row["first_position_low"], row["first_position_high"] = clustered_wilson_interval(
        strict["won_first"].to_numpy(bool), _pair_codes(strict)
    )
    # pairs answered in both orders: one judgment with lo shown first and one with hi first
    known = mine[mine["first_known"]]
    both = known.pivot_table(
        index=["query", "lo", "hi"], columns="first_lo", values="outcome", aggfunc="first"
    ).dropna()
    if True in both.columns and False in both.columns:
        x, y = both[True].to_numpy(int), both[False].to_numpy(int)
    else:
        x = y = np.empty(0, dtype=int)
    decisive = (x != 2) & (y != 2)
    flips = int(np.sum(decisive & (x != y)))
    row["both_orders"] = len(x)
    row["flip_rate"] = flips / decisive.sum() if decisive.sum() else float("nan")
    row["flip_low"], row["flip_high"] = wilson_interval(flips, int(decisive.sum()))
    inconsistent = int(np.sum(x != y))
    row["inconsistent_share"] = inconsistent / len(x) if len(x) else float("nan")
    row["inconsistent_low"], row["inconsistent_high"] = wilson_interval(inconsistent, len(x))
    # the people's majority per pair (a strict majority of one outcome, else none)
    counts = people.assign(n=1).pivot_table(
        index=["query", "lo", "hi"], columns="outcome", values="n", aggfunc="sum", fill_value=0
    )
    for column in (0, 1, 2):
        if column not in counts.columns:
            counts[column] = 0
    counts = counts[[0, 1, 2]]
    top = counts.to_numpy()
    ordered = np.sort(top, axis=1)
    has_majority = ordered[:, -1] > ordered[:, -2]
    majority = pd.Series(np.argmax(top, axis=1), index=counts.index)[has_majority]
    shared = mine.join(majority.rename("majority"), on=["query", "lo", "hi"], how="inner")
    agree_pool = shared[shared["majority"] != 2]
    agreed = int((agree_pool["outcome"] == agree_pool["majority"]).sum())
    row["shared_with_people"] = len(shared)
    row["majority_agreement"] = agreed / len(agree_pool) if len(agree_pool) else float("nan")
    row["majority_low"], row["majority_high"] = clustered_wilson_interval(
        (agree_pool["outcome"] == agree_pool["majority"]).to_numpy(bool), _pair_codes(agree_pool)
    )
    a, b = shared["outcome"].to_numpy(int), shared["majority"].to_numpy(int)
    row["kappa_people"] = _kappa(a, b)
    low = high = float("nan")
    if len(shared) > 1:
        pair_id = shared.groupby(["query", "lo", "hi"], sort=False).ngroup().to_numpy()
        groups = pair_id.max() + 1
        rng = np.random.default_rng(seed)
        values = []
        order = np.argsort(pair_id, kind="stable")
        starts = np.searchsorted(pair_id[order], np.arange(groups))
        ends = np.append(starts[1:], len(order))
        for _ in range(draws):
            pick = rng.integers(0, groups, groups)
            take = np.concatenate([order[starts[g] : ends[g]] for g in pick])
            values.append(_kappa(a[take], b[take]))
        finite = np.asarray(values)[np.isfinite(values)]
        if len(finite):
            low, high = (float(v) for v in np.quantile(finite, [0.025, 0.975]))
    row["kappa_low"], row["kappa_high"] = low, high
    return row


def judge_figures(prefs: pd.DataFrame, *, draws: int = 200, seed: int = 0) -> pd.DataFrame:
    """The bias and agreement figures of every judge (annotators named ``llm:...``).

    Parameters
    ----------
    prefs
        Raw preferences (``query, annotator, winner, loser, tie`` and ``first``),
        as :func:`orlbuild.builders.audit.quality.raw_preferences` returns them.
    draws
        Bootstrap draws for kappa's interval.
    seed
        Seed of the bootstrap.

    Returns
    -------
    pandas.DataFrame
        One row per judge (none when no annotator is a judge); the columns the
        module docstring lists, each rate with ``_low``/``_high`` bounds.
    """
    if prefs.empty:
        return pd.DataFrame()
    judges = sorted(
        a for a in prefs["annotator"].astype(str).unique() if a.startswith(JUDGE_PREFIX)
    )
    if not judges:
        return pd.DataFrame()
    outcomes = _outcomes(prefs)
    names = prefs["annotator"].astype(str).to_numpy()
    is_judge = np.char.startswith(names.astype(str), JUDGE_PREFIX)
    people = outcomes[~is_judge]
    rows = []
    for judge in judges:
        row = _one_judge(outcomes[names == judge], people, draws, seed)
        rows.append({"annotator": judge, **row})
    return pd.DataFrame(rows)
