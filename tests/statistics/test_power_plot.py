"""The power/stability figure: a real PNG with one curve per measure and statistic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from orlbuild.report.figures import plot_power_stability, save_power_stability
from scoring.statistics import PowerResult, power_analysis


@pytest.fixture(scope="module")
def results() -> dict[str, PowerResult]:
    rng = np.random.default_rng(0)
    base = rng.random((120, 1))
    out = {}
    for name, effect in (("RDQ@5", 0.03), ("nDCG@5", 0.015)):
        panel = pd.DataFrame(
            np.clip(base + effect * np.arange(4) + rng.normal(0, 0.1, (120, 4)), 0, 1)
        )
        out[name] = power_analysis(
            panel, budgets=[20, 40, 80], subsamples=20, permutations=100, seed=1
        )
    return out


def test_png_is_written_and_non_trivial(results: dict[str, PowerResult], tmp_path: Path) -> None:
    path = tmp_path / "power.png"
    save_power_stability(results, path)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 20_000


def test_figure_has_the_expected_curves(results: dict[str, PowerResult]) -> None:
    figure = plot_power_stability(results)
    power_ax, tau_ax = figure.axes
    power_labels = [line.get_label() for line in power_ax.get_lines()]
    assert power_labels == ["RDQ@5 median", "RDQ@5 p90", "nDCG@5 median", "nDCG@5 p90", "0.8 (N80)"]
    assert [line.get_label() for line in tau_ax.get_lines()] == ["RDQ@5", "nDCG@5", "tau = 0.8"]
    np.testing.assert_allclose(tau_ax.get_lines()[1].get_ydata(), results["nDCG@5"].stability)
    np.testing.assert_array_equal(power_ax.get_lines()[0].get_xdata(), [20, 40, 80])
    for axes in (power_ax, tau_ax):
        assert axes.get_title() and axes.get_xlabel() == "query budget n" and axes.get_ylabel()
        assert axes.get_legend() is not None
