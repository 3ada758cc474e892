"""Figures of the power/stability analysis (matplotlib, Agg canvas, no pyplot state).

The figure is built with the object-oriented API on an Agg canvas, so it works
headless and never touches pyplot's global figure registry.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from scoring.statistics import PowerResult
from scoring.statistics.power import POWER_THRESHOLD, TAU_THRESHOLD

__all__ = ["plot_power_stability", "save_power_stability"]


def plot_power_stability(results: Mapping[str, PowerResult]) -> Figure:
    """Power and stability curves of every measure, side by side.

    Left: median power over system pairs per budget (solid, with markers) and
    the 90th percentile (dashed, same colour). Right: mean Kendall tau against
    the all-query ordering per budget. Both panels show the 0.8 threshold
    (N80 and the stability budget) as a grey dotted line.

    Parameters
    ----------
    results
        ``measure name -> PowerResult``.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (attached to an Agg canvas): ``2 * len(results) + 1`` lines
        on the power axes and ``len(results) + 1`` on the stability axes.
    """
    figure = Figure(figsize=(12, 5), layout="constrained")
    FigureCanvasAgg(figure)
    power_ax, tau_ax = figure.subplots(1, 2)
    for index, (measure, result) in enumerate(results.items()):
        colour = f"C{index % 10}"
        budgets = list(result.budgets)
        power_ax.plot(
            budgets, result.power_median, color=colour, marker="o", label=f"{measure} median"
        )
        power_ax.plot(
            budgets, result.power_p90, color=colour, linestyle="--", label=f"{measure} p90"
        )
        tau_ax.plot(budgets, result.stability, color=colour, marker="o", label=measure)
    power_ax.axhline(POWER_THRESHOLD, color="grey", linestyle=":", label="0.8 (N80)")
    tau_ax.axhline(TAU_THRESHOLD, color="grey", linestyle=":", label="tau = 0.8")
    power_ax.set(
        title="Power@n over system pairs",
        xlabel="query budget n",
        ylabel="share of subsets with p < alpha",
        ylim=(0.0, 1.02),
    )
    tau_ax.set(
        title="Ranking stability",
        xlabel="query budget n",
        ylabel="mean Kendall tau vs. all queries",
        ylim=(min(0.0, _lowest_tau(results)), 1.02),
    )
    for axes in (power_ax, tau_ax):
        axes.grid(True, alpha=0.3)
        axes.legend(fontsize="small", loc="best")
    return figure


def save_power_stability(results: Mapping[str, PowerResult], path: str | Path) -> Figure:
    """Draw :func:`plot_power_stability` and write it as a PNG to ``path`` (100 dpi)."""
    figure = plot_power_stability(results)
    figure.savefig(Path(path), format="png", dpi=100)
    return figure


def _lowest_tau(results: Mapping[str, PowerResult]) -> float:
    """Smallest finite mean tau across measures (0 when there is none)."""
    values = [float(v) for r in results.values() for v in r.stability if v == v]
    return min(values, default=0.0)
