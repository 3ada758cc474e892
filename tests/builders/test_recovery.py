"""Recovery of known tiers from simulated Bradley-Terry data, and Fisher calibration."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from orlbuild.builders import BuildParameters, build_orls
from orlbuild.builders.estimation.strength_models import BradleyTerryModel
from orlbuild.builders.estimation.uncertainty import Z_95
from orlbuild.builders.pairwise_data import comparisons_from_pairwise
from orlbuild.builders.parameters import resolve_parameters
from orlbuild.builders.tiering.query_orl import score_uncertainty
from tests.builders.simulation import simulate_pairwise, tiered_strengths

TIER_SIZES = [3, 3, 3, 3]
GAP = 2.0  # log-strength gap between adjacent true tiers
N_QUERIES = 30
N_COMPARISONS = 1200  # every stated order backed: more evidence than the max-t walk needed


@pytest.fixture(scope="module")
def simulated() -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(20261129)
    strengths, ranks = tiered_strengths(TIER_SIZES, GAP)
    frame = pd.concat(
        [
            simulate_pairwise(rng, strengths, N_COMPARISONS, query=f"q{k:02d}")
            for k in range(N_QUERIES)
        ]
    )
    return frame, ranks


@pytest.mark.parametrize(("method", "min_tau"), [("bt", 0.85), ("rank-centrality", 0.8)])
def test_known_tiers_are_recovered(
    simulated: tuple[pd.DataFrame, np.ndarray], method: str, min_tau: float
) -> None:
    frame, true_ranks = simulated
    _, outcome = build_orls(frame, BuildParameters(source="pairwise", method=method, bootstrap=100))
    assert len(outcome.orls) == N_QUERIES
    taus, same_tier_tied, two_apart_tied = [], [], []
    items = [f"d{i:02d}" for i in range(len(true_ranks))]
    upper = np.triu_indices(len(items), 1)
    true_gap = np.abs(true_ranks[:, None] - true_ranks[None, :])[upper]
    for orl in outcome.orls.values():
        built = np.array([orl.ranks[i] for i in items])
        taus.append(kendalltau(true_ranks, built).statistic)
        tied = (built[:, None] == built[None, :])[upper]
        same_tier_tied.append(tied[true_gap == 0].mean())
        two_apart_tied.append(tied[true_gap == 2].mean())
    assert np.mean(taus) >= min_tau
    # within-tier items tie far more often than items two tiers apart
    assert np.mean(same_tier_tied) >= 0.5
    assert np.mean(two_apart_tied) <= 0.1
    assert np.mean(same_tier_tied) >= 5 * np.mean(two_apart_tied)


def test_fisher_intervals_of_differences_are_calibrated() -> None:
    rng = np.random.default_rng(7)
    params = resolve_parameters(BuildParameters(source="pairwise"))
    covered = []
    for k in range(150):
        truth = rng.normal(size=8)
        frame = simulate_pairwise(rng, truth, 300, query=f"q{k}")
        comparisons = comparisons_from_pairwise(frame)
        model = BradleyTerryModel(comparisons, params.reg, "ilsr")
        unc = score_uncertainty(model, params, rng)
        true = truth[[int(i[1:]) for i in comparisons.items]]
        upper = np.triu_indices(len(true), 1)
        error = (unc.scores[:, None] - unc.scores[None, :]) - (true[:, None] - true[None, :])
        covered.extend((np.abs(error) <= Z_95 * unc.se)[upper].tolist())
    coverage = float(np.mean(covered))
    assert 0.90 <= coverage <= 0.98, coverage


def test_plackett_luce_fisher_intervals_are_calibrated() -> None:
    from orlbuild.builders.estimation.strength_models import PlackettLuceModel
    from orlbuild.builders.listwise import ranked_lists

    rng = np.random.default_rng(3)
    params = resolve_parameters(BuildParameters(source="listwise", method="plackett-luce"))
    covered = []
    for _ in range(120):
        truth = rng.normal(size=8)
        rows = []
        for annotator in range(25):  # Plackett-Luce rankings by the Gumbel-max trick
            order = np.argsort(-(truth + rng.gumbel(size=8)))
            rows += [("q", f"a{annotator}", f"d{i}", r + 1) for r, i in enumerate(order)]
        frame = pd.DataFrame(rows, columns=["query", "annotator", "item", "rank"])
        model = PlackettLuceModel(ranked_lists(frame), params.reg)
        unc = score_uncertainty(model, params, rng)
        true = truth[[int(i[1:]) for i in model.data.items]]
        upper = np.triu_indices(8, 1)
        error = (unc.scores[:, None] - unc.scores[None, :]) - (true[:, None] - true[None, :])
        covered.extend((np.abs(error) <= Z_95 * unc.se)[upper].tolist())
    coverage = float(np.mean(covered))
    assert 0.90 <= coverage <= 0.98, coverage
