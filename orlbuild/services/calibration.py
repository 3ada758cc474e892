"""``orlbuild calibrate``: the tierings, or the ways of spending judgments, on simulated data.

Two use cases, no database: :func:`tiering_calibration` measures every tiering
side by side on simulated Bradley-Terry queries (docs/tiers-and-audit.md,
"Deciding tiers: `--tiering simultaneous|model|leader`"); :func:`design_comparison`
compares designs at equal budgets (docs/planning.md, "What planning buys").
Each returns a :class:`Calibration` that the CLI only renders.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from orlbuild.errors import ConfigError
from orlbuild.vocabulary import PlanDesign, PlanObjective, SimulatedMethod, SimulatedScenario

__all__ = [
    "DESIGN_DEFAULTS",
    "TIERING_DEFAULTS",
    "Calibration",
    "design_comparison",
    "tiering_calibration",
]


@dataclass(frozen=True)
class SimulationDefaults:
    """``--items``, ``--tiers``, ``--gap`` and ``--queries`` when not given."""

    items: str
    tiers: str
    gap: float
    queries: int


#: Defaults of the tiering calibration and of ``--design``.
TIERING_DEFAULTS = SimulationDefaults(items="2-30", tiers="1-5", gap=1.5, queries=200)
DESIGN_DEFAULTS = SimulationDefaults(items="20", tiers="2-5", gap=1.0, queries=100)


@dataclass(frozen=True)
class Calibration:
    """A calibration's table, its JSON document and its title."""

    frame: pd.DataFrame
    payload: Any
    title: str


def _range(option: str, text: str) -> tuple[int, int]:
    """``"2-30"`` -> ``(2, 30)``; ``"5"`` -> ``(5, 5)``."""
    low, _, high = text.partition("-")
    try:
        return int(low), int(high or low)
    except ValueError:
        raise ConfigError(f"{option} must be a range like 2-30, got {text!r}") from None


def tiering_calibration(
    *,
    method: SimulatedMethod,
    tierings: Sequence[str] | None,
    items: str | None,
    comparisons_per_pair: int,
    queries: int | None,
    tiers: str | None,
    gap: float | None,
    sig: float,
    seed: int,
    bootstrap: int,
) -> Calibration:
    """Every tiering on all-equal and mixed simulated queries
    (:func:`orlbuild.builders.calibration.simulation.calibrate_tierings`).

    ``None`` takes :data:`TIERING_DEFAULTS`; ranges are ``LOW-HIGH`` text.

    Raises
    ------
    ConfigError
        A range that does not read as ``LOW-HIGH``.
    """
    from orlbuild.builders.calibration.simulation import CalibrationDesign, calibrate_tierings

    defaults = TIERING_DEFAULTS
    design = CalibrationDesign(
        method=method,
        items=_range("--items", items or defaults.items),
        comparisons_per_pair=comparisons_per_pair,
        queries=queries or defaults.queries,
        tiers=_range("--tiers", tiers or defaults.tiers),
        gap=defaults.gap if gap is None else gap,
        sig=sig,
        seed=seed,
        bootstrap=bootstrap,
    )
    frame = calibrate_tierings(design, *([list(tierings)] if tierings else []))
    title = (
        f"{method.value}: {design.queries} all-equal + {design.queries} mixed queries, "
        f"{items or defaults.items} items, {comparisons_per_pair} comparisons per pair, "
        f"sig {sig:g}"
    )
    payload = {"design": {**design.__dict__}, "tierings": frame.to_dict("records")}
    return Calibration(frame, payload, title)


def design_comparison(
    designs: Sequence[PlanDesign],
    *,
    scenario: SimulatedScenario,
    method: SimulatedMethod,
    tierings: Sequence[str] | None,
    items: str | None,
    queries: int | None,
    tiers: str | None,
    gap: float | None,
    sig: float,
    seed: int,
    start: int,
    budget_per_query: int,
    rounds: int,
    max_per_query: int | None,
    repeat_limit: int,
    objective: PlanObjective,
    margin: float | None,
    fdr: float | None = None,
) -> Calibration:
    """Designs at equal budgets (:func:`orlbuild.services.plans.simulate_designs`; the
    ``posterior`` tiering by
    :func:`orlbuild.builders.calibration.posterior_rounds.posterior_designs`, its planned
    rounds from the posterior planner).

    ``None`` takes :data:`DESIGN_DEFAULTS` (and tierings ``simultaneous`` and ``model``).

    Raises
    ------
    ConfigError
        A method other than ``bt``, ``--items`` that is not one number, a bad
        ``--max-per-query`` or margin, ``posterior`` with the ``sparse`` scenario.
    """
    from orlbuild.builders.tiering.equivalence import check_margin
    from orlbuild.services.plans import simulate_designs

    if method is not SimulatedMethod.bt:
        raise ConfigError("--design simulates --method bt builds (the planner's model)")
    low, high = _range("--items", items or DESIGN_DEFAULTS.items)
    if low != high:
        raise ConfigError(f"--items must be one number with --design, got {items!r}")
    if max_per_query is not None and max_per_query < 1:
        raise ConfigError(f"--max-per-query must be >= 1, got {max_per_query}")
    n_queries = queries or DESIGN_DEFAULTS.queries
    chosen = list(dict.fromkeys(tierings or ["simultaneous", "model"]))
    design_words = list(dict.fromkeys(PlanDesign(d).value for d in designs))
    true_tiers = _range("--tiers", tiers or DESIGN_DEFAULTS.tiers)
    the_gap = DESIGN_DEFAULTS.gap if gap is None else gap
    frames = []
    study = {  # what every tiering's simulation shares
        "scenario": SimulatedScenario(scenario).value,
        "items": low,
        "tiers": true_tiers,
        "gap": the_gap,
        "queries": n_queries,
        "start": start,
        "budget_per_query": budget_per_query,
        "rounds": rounds,
        "seed": seed,
    }
    others = [t for t in chosen if t != POSTERIOR]
    if others:
        frames.append(
            simulate_designs(
                designs=design_words,
                tierings=others,
                sig=sig,
                margin=check_margin(margin),
                objective=PlanObjective(objective).value,
                max_per_query=max_per_query,
                repeat_limit=repeat_limit,
                **study,
            )
        )
    if POSTERIOR in chosen:
        frames.append(_posterior_designs(design_words, fdr=fdr, **study))
    frame = pd.concat(frames, ignore_index=True)
    order = {t: k for k, t in enumerate(chosen)}
    frame = frame.assign(_t=frame["tiering"].map(order), _d=frame["design"].map(
        {d: k for k, d in enumerate(design_words)}))  # fmt: skip
    frame = frame.sort_values(["_d", "round", "_t"], kind="stable")
    frame = frame.drop(columns=["_t", "_d"]).reset_index(drop=True)
    title = (
        f"{SimulatedScenario(scenario).value}: {n_queries} queries x {low} items, {start} "
        f"judgments + {rounds} rounds of {budget_per_query} per query"
    )
    return Calibration(frame.round(4), frame.to_dict("records"), title)


#: The tiering whose designs are simulated through its posterior directly.
POSTERIOR = "posterior"


def _posterior_designs(designs: list[str], *, scenario: str, budget_per_query: int,
                       tiers: tuple[int, int], **study: Any) -> pd.DataFrame:  # fmt: skip
    """The ``posterior`` rows of :func:`design_comparison`, in its columns (``wrong_orders``
    is the realised share; ``predicted_share`` the posterior's ``sum E / sum N``)."""
    from orlbuild.builders.calibration.posterior_rounds import PosteriorStudy, posterior_designs
    from orlbuild.builders.tiering.posterior import DEFAULT_FDR

    fdr = study.pop("fdr")
    study["fdr"] = DEFAULT_FDR if fdr is None else fdr

    if scenario not in ("mixed", "equal"):
        raise ConfigError(
            f"--tiering posterior simulates --scenario mixed or equal, not {scenario}"
        )
    rows = posterior_designs(
        PosteriorStudy(scenario=scenario, round_size=budget_per_query, tiers=tiers, **study),
        designs,
    )
    frame = pd.DataFrame(rows).rename(columns={"wrong_share": "wrong_orders"})
    frame.insert(3, "tiering", POSTERIOR)
    columns = ["design", "round", "judgments_per_query", "tiering", "ari", "tau_b",
               "false_split", "wrong_orders", "top_size", "settled", "seconds",
               "predicted_share", "lam", "tau"]  # fmt: skip
    return frame[columns]
