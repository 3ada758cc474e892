"""A published LLM leaderboard reproduced: LLMFAO's crowd judgments (59 models, 8,931
judgments, 39% ties) ingested and built with ``--reg 0`` give evalica's Bradley-Terry
strengths and the published order (docs/tiers-and-audit.md, "Build routes").

The data and where it comes from: ``tests/data/llmfao/README.md``.
"""

from __future__ import annotations

from pathlib import Path

import evalica
import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau
from store_cli import cli, cli_json

DATA = Path(__file__).resolve().parents[1] / "data" / "llmfao"
COMPARISONS = DATA / "crowd_comparisons.csv"
#: evalica's published golden Bradley-Terry block for this data, in leaderboard order
PUBLISHED = DATA / "evalica_golden_bradley_terry.csv"
#: one tolerance for every strength comparison (centred log-strengths)
ATOL = 1e-6


def _centred_log(strengths: pd.Series) -> pd.Series:
    log = np.log(strengths.astype(float))
    return log - log.mean()


def _evalica_strengths() -> pd.Series:
    """evalica's Bradley-Terry strengths of the stored file (a tie half a win each way)."""
    frame = pd.read_csv(COMPARISONS, dtype=str)
    outcome = frame["winner"].map(
        {"left": evalica.Winner.X, "right": evalica.Winner.Y, "tie": evalica.Winner.Draw}
    )
    return evalica.bradley_terry(
        frame["left"], frame["right"], outcome, tolerance=1e-13, limit=100_000
    ).scores


@pytest.fixture(scope="module")
def published() -> pd.Series:
    """The published strengths (sum 1), indexed by model in leaderboard order."""
    return pd.read_csv(PUBLISHED).set_index("item")["score"]


@pytest.fixture
def built_scores(migrated_db_url: str) -> pd.Series:
    """Ingest the file as it is stored, build with ``--reg 0``; the stored item scores."""
    code, out, err = cli(migrated_db_url, "ingest", "pairwise", str(COMPARISONS), "--query", "lb")
    assert code == 0, err
    assert "stored 8931 pairwise rows" in out + err
    doc = cli_json(
        migrated_db_url, "build", "--source", "pairwise", "--reg", "0", "--name", "llmfao"
    )
    assert doc["queries"] == 1 and not doc["failures"], doc
    shown = cli_json(migrated_db_url, "orl", "show", "llmfao")["queries"]["lb"]
    scores = {item["item"]: item["score"] for tier in shown for item in tier["items"]}
    return pd.Series(scores, dtype=float)


def test_the_stored_file_is_the_published_judgments() -> None:
    frame = pd.read_csv(COMPARISONS, dtype=str)
    assert len(frame) == 8931
    assert frame["winner"].value_counts().to_dict() == {"tie": 3471, "left": 2911, "right": 2549}
    assert pd.concat([frame["left"], frame["right"]]).nunique() == 59
    assert frame["worker"].nunique() == 124


def test_evalica_on_the_file_gives_the_published_strengths(published: pd.Series) -> None:
    """The stored file is the one the published strengths were computed from."""
    theirs = _evalica_strengths()
    np.testing.assert_allclose(
        _centred_log(theirs[published.index]), _centred_log(published), rtol=0, atol=1e-12
    )


def test_reg_0_build_reproduces_evalica_and_the_published_order(
    built_scores: pd.Series, published: pd.Series
) -> None:
    theirs = _evalica_strengths()
    assert set(built_scores.index) == set(published.index)
    ours = built_scores[published.index]
    # our stored scores are centred log-strengths; evalica's are strengths
    np.testing.assert_allclose(ours - ours.mean(), _centred_log(theirs[ours.index]), atol=ATOL)
    np.testing.assert_allclose(ours - ours.mean(), _centred_log(published), atol=ATOL)
    order = ours.sort_values(ascending=False).index
    assert list(order) == list(published.index)
    tau = kendalltau(ours.to_numpy(), published.to_numpy()).statistic
    assert tau == pytest.approx(1.0, abs=1e-12)


def test_counting_a_tie_as_a_win_each_way_does_not_reproduce_it(published: pd.Series) -> None:
    """The figures of issue 20 before ties were halves: a tie as a full win each way
    reorders the leaderboard (the test above would fail on that convention)."""
    frame = pd.read_csv(COMPARISONS, dtype=str)
    tie = frame["winner"] == "tie"
    first = frame["winner"] != "right"
    winners = pd.concat([frame["left"].where(first, frame["right"]), frame["right"][tie]])
    losers = pd.concat([frame["right"].where(first, frame["left"]), frame["left"][tie]])
    full = evalica.bradley_terry(
        winners, losers, [evalica.Winner.X] * len(winners), tolerance=1e-13, limit=100_000
    ).scores
    gap = (_centred_log(full[published.index]) - _centred_log(published)).abs().max()
    tau = kendalltau(full[published.index].to_numpy(), published.to_numpy()).statistic
    assert gap > 0.1 and tau < 0.99
