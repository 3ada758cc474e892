"""Every figure orlbuild draws: matplotlib's object API on an Agg canvas, no pyplot state.

The report inlines its figures as SVG (:func:`figure_to_svg`); ``orlbuild power
--plot`` writes the power/stability figure as a PNG (:func:`save_power_stability`).
Drawing on an Agg canvas works headless and never touches pyplot's global
figure registry.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar, cast

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Colormap, to_hex
from matplotlib.figure import Figure

from orlbuild.output_files import ProtectedPaths, write_output
from scoring.statistics import PowerResult
from scoring.statistics.power import POWER_THRESHOLD, TAU_THRESHOLD

__all__ = [
    "HEATMAP_COLORMAP",
    "cell_colours",
    "difference_colour",
    "figure_to_svg",
    "interval_figure",
    "plot_power_stability",
    "rank_interval_figure",
    "save_power_stability",
    "tier_figure",
]

HEATMAP_COLORMAP = "YlGnBu"

#: Names (systems, measures, queries) are text: no mathtext (``$...$``) and no TeX, so a
#: name like ``$x$`` is drawn as typed and never parsed (docs/reliability.md, "Output files").
PLAIN_TEXT: dict[Any, Any] = {"text.parse_math": False, "text.usetex": False}

F = TypeVar("F", bound=Callable[..., Any])


def _plain_text(draw: F) -> F:
    """Run ``draw`` with :data:`PLAIN_TEXT`, so every text it creates keeps it."""

    @functools.wraps(draw)
    def drawn(*args: Any, **kwargs: Any) -> Any:
        with mpl.rc_context(PLAIN_TEXT):
            return draw(*args, **kwargs)

    return cast(F, drawn)


_SVG_PROLOGUE = re.compile(r"^.*?(?=<svg)", re.DOTALL)
_SVG_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.DOTALL)


def figure_to_svg(figure: Figure) -> str:
    """Serialise ``figure`` as an inline ``<svg>`` element (text kept as text, no metadata).

    The output is deterministic (fixed hash salt, no date), so the same figure
    always gives the same bytes.
    """
    buffer = io.StringIO()
    settings: dict[Any, Any] = {
        "svg.fonttype": "none",
        "svg.hashsalt": "orlbuild-report",
        **PLAIN_TEXT,
    }
    with mpl.rc_context(settings):
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    svg = _SVG_PROLOGUE.sub("", buffer.getvalue(), count=1)
    svg = _SVG_METADATA.sub("", svg, count=1)  # RDF boilerplate, useless inline
    return svg.replace("<svg ", '<svg role="img" ', 1)


@_plain_text
def interval_figure(
    intervals: pd.DataFrame, systems: Sequence[str], measures: Sequence[str]
) -> Figure:
    """Mean score with its confidence interval, one panel per measure (a forest plot).

    Parameters
    ----------
    intervals
        Output of :func:`orlbuild.report.intervals.mean_intervals`.
    systems
        Systems top to bottom.
    measures
        One panel per measure, left to right.
    """
    width = min(3.2 * len(measures), 13.0)
    height = 0.9 + 0.38 * len(systems)
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, len(measures), sharey=True, squeeze=False)[0]
    indexed = intervals.set_index(["system", "measure"])
    positions = np.arange(len(systems))[::-1]
    for ax, measure in zip(axes, measures, strict=True):
        rows = indexed.loc[[(s, measure) for s in systems]]
        means = rows["mean"].to_numpy(dtype=float)
        errors = np.vstack(
            [means - rows["low"].to_numpy(float), rows["high"].to_numpy(float) - means]
        )
        ax.errorbar(
            means, positions, xerr=errors, fmt="o", color="#1f4e79", ecolor="#6b8fb5", capsize=3
        )
        ax.set_title(measure, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(labelsize=9)
        low = np.nanmin(rows["low"].to_numpy(float)) if np.isfinite(rows["low"]).any() else 0.0
        high = np.nanmax(rows["high"].to_numpy(float)) if np.isfinite(rows["high"]).any() else 1.0
        pad = max(0.02, 0.08 * (high - low))
        ax.set_xlim(low - pad, high + pad)
    axes[0].set_yticks(positions, list(systems))
    axes[0].set_ylim(-0.6, len(systems) - 0.4)
    return figure


def cell_colours(
    values: np.ndarray, cmap: str | Colormap = HEATMAP_COLORMAP
) -> list[tuple[str, str]]:
    """Background and text colour of heatmap cells for values in [0, 1] (NaN: grey).

    Returns
    -------
    list of (str, str)
        ``(background, text)`` hex colours; the text is white on dark cells.
    """
    colormap = mpl.colormaps[cmap] if isinstance(cmap, str) else cmap
    out = []
    for value in np.asarray(values, dtype=float):
        if np.isnan(value):
            out.append(("#eeeeee", "#777777"))
            continue
        red, green, blue, _ = colormap(float(np.clip(value, 0.0, 1.0)))
        luminance = 0.2126 * red + 0.7152 * green + 0.0722 * blue
        out.append((to_hex((red, green, blue)), "#ffffff" if luminance < 0.5 else "#1b1b1b"))
    return out


def difference_colour(diff: float, largest: float, significant: bool) -> tuple[str, str]:
    """Background and text colour of a difference-matrix cell (the heat map of many systems).

    Significant cells are green (row better) or red (row worse), darker for a
    larger ``|diff|`` relative to ``largest``; cells not significant are a pale
    grey whatever the difference.
    """
    if not significant:
        return "#eef0f2", "#5f6b76"
    share = 0.0 if largest <= 0 else float(np.clip(abs(diff) / largest, 0.0, 1.0))
    colormap = mpl.colormaps["Greens" if diff > 0 else "Reds"]
    red, green, blue, _ = colormap(0.3 + 0.65 * share)
    luminance = 0.2126 * red + 0.7152 * green + 0.0722 * blue
    return to_hex((red, green, blue)), "#ffffff" if luminance < 0.5 else "#1b1b1b"


def colour_scale(cmap: str = HEATMAP_COLORMAP, stops: int = 6) -> str:
    """A CSS ``linear-gradient`` showing the heatmap's colour scale from 0 to 1."""
    colours = [cell_colours(np.array([v]), cmap)[0][0] for v in np.linspace(0.0, 1.0, stops)]
    return "linear-gradient(to right, " + ", ".join(colours) + ")"


def _system_panels(
    frame: pd.DataFrame, measures: Sequence[str], panel_width: float
) -> tuple[Figure, list[tuple[Any, str]], int, int]:
    """One panel per measure with rows in ``frame``, one row per system (60+ stay readable).

    Returns the figure, ``(axes, measure)`` pairs, the most systems in a panel
    and the font size.
    """
    shown = [m for m in measures if (frame["measure"] == m).any()]
    n_systems = max(int((frame["measure"] == m).sum()) for m in shown)
    row = 0.17 if n_systems > 30 else 0.3
    font = 7 if n_systems > 30 else 9
    figure = Figure(
        figsize=(min(panel_width * len(shown), 13.0), 1.0 + row * n_systems),
        layout="constrained",
    )
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, len(shown), squeeze=False)[0]
    return figure, list(zip(axes, shown, strict=True)), n_systems, font


@_plain_text
def tier_figure(
    tiers: pd.DataFrame, measures: Sequence[str], *, rank_labels: bool = False
) -> Figure:
    """Systems on a line by mean, their tiers bracketed, one panel per measure.

    Each panel lists the systems best first (one row each, so 60+ names stay
    readable), a dot at the mean with the compact letters beside it (with
    ``rank_labels``, the rank interval instead: letters of many systems run to
    dozens of glyphs), and a bracket per tier on the right; alternate tiers are
    shaded.

    Parameters
    ----------
    tiers
        Output of :func:`scoring.statistics.system_tiers`.
    measures
        One panel per measure (those without tiers are skipped).
    rank_labels
        Label each dot with its rank interval ``lo–hi`` rather than its letters.
    """
    figure, panels, n_systems, font = _system_panels(tiers, measures, 4.6)
    for ax, measure in panels:
        rows = tiers[tiers["measure"] == measure].sort_values("rank")
        means = rows["mean"].to_numpy(dtype=float)
        positions = np.arange(len(rows))[::-1].astype(float)
        low, high = float(np.nanmin(means)), float(np.nanmax(means))
        pad = max(0.02, 0.06 * (high - low))
        bracket = high + 2.5 * pad
        for tier, members in rows.groupby("tier", sort=True):
            top = float(positions[members["rank"].to_numpy() - 1].max())
            bottom = float(positions[members["rank"].to_numpy() - 1].min())
            if int(tier) % 2 == 0:
                ax.axhspan(bottom - 0.5, top + 0.5, color="#eef3f8", zorder=0)
            ax.plot([bracket, bracket], [bottom - 0.3, top + 0.3], color="#1f4e79", lw=1.5)
            ax.plot([bracket - pad / 3, bracket], [top + 0.3] * 2, color="#1f4e79", lw=1.5)
            ax.plot([bracket - pad / 3, bracket], [bottom - 0.3] * 2, color="#1f4e79", lw=1.5)
            ax.text(
                bracket + pad / 3, (top + bottom) / 2, f"T{int(tier)}", va="center", fontsize=font
            )
        ax.plot(means, positions, "o", color="#1f4e79", markersize=4 if n_systems > 30 else 6)
        if rank_labels:
            labels = [f"{lo}–{hi}" for lo, hi in zip(rows["rank_lo"], rows["rank_hi"], strict=True)]
        else:
            labels = [str(letters) for letters in rows["letters"]]
        for mean, position, label in zip(means, positions, labels, strict=True):
            ax.text(mean + pad / 2, position, label, va="center", fontsize=font - 1,
                    color="#5f6b76")  # fmt: skip
        ax.set_yticks(positions, [str(s) for s in rows["system"]], fontsize=font)
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.set_xlim(low - pad, bracket + 3 * pad)
        ax.set_title(measure, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(axis="x", labelsize=font)
    return figure


@_plain_text
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


def save_power_stability(
    results: Mapping[str, PowerResult], path: str | Path, *, protected: ProtectedPaths = ()
) -> Figure:
    """Draw :func:`plot_power_stability` and write it as a PNG to ``path`` (100 dpi).

    Written by :func:`orlbuild.output_files.write_output`: never over a
    ``protected`` file, and replaced only once complete.
    """
    figure = plot_power_stability(results)

    def save(stream: IO[bytes]) -> None:
        with mpl.rc_context(PLAIN_TEXT):
            figure.savefig(stream, format="png", dpi=100)

    write_output(path, save, protected=protected)
    return figure


def _lowest_tau(results: Mapping[str, PowerResult]) -> float:
    """Smallest finite mean tau across measures (0 when there is none)."""
    values = [float(v) for r in results.values() for v in r.stability if v == v]
    return min(values, default=0.0)


@_plain_text
def rank_interval_figure(ranks: pd.DataFrame, measures: Sequence[str]) -> Figure:
    """A leaderboard with rank intervals, one panel per measure.

    Systems best first (one row each); a bar from ``rank_lo`` to ``rank_hi``
    (the simultaneous rank interval) and a dot at the point rank.

    Parameters
    ----------
    ranks
        Output of :func:`scoring.statistics.rank_intervals.rank_interval_table`.
    measures
        One panel per measure (those without rows are skipped).
    """
    figure, panels, n_systems, font = _system_panels(ranks, measures, 4.2)
    for ax, measure in panels:
        rows = ranks[ranks["measure"] == measure].sort_values(["rank", "system"])
        positions = np.arange(len(rows))[::-1].astype(float)
        low = rows["rank_lo"].to_numpy(dtype=float)
        high = rows["rank_hi"].to_numpy(dtype=float)
        ax.hlines(positions, low - 0.3, high + 0.3, color="#9fb8d0", lw=5 if n_systems <= 30 else 3)
        ax.plot(rows["rank"].to_numpy(dtype=float), positions, "o", color="#1f4e79",
                markersize=4 if n_systems > 30 else 6)  # fmt: skip
        ax.set_yticks(positions, [str(s) for s in rows["system"]], fontsize=font)
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.set_xlim(0.3, n_systems + 0.7)
        ax.set_xlabel("rank (1 = best)", fontsize=font)
        ax.set_title(measure, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(axis="x", labelsize=font)
    return figure
