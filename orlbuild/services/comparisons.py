"""One path from per-query scores to paired panels, pairwise tests and power.

Steps 2-4 of the evaluation use cases (docs/comparing-systems.md, "Comparing many systems"),
shared by every front end whether the scores came from the store
(:mod:`orlbuild.services.evaluations`: ``orlbuild score``, ``compare``,
``power``, ``report``, the pipeline) or from files (``orlbuild eval
--compare``):

2. **panels** - the per-query scores of several systems laid out as one
   paired panel per measure (:func:`panels_from_scores`);
3. **tests** - every pair per measure (:func:`compare_panels`, or
   :func:`compare_scores` for steps 2 and 3 at once);
4. **power** - power and stability per measure (:func:`power_for_panels`),
   its budgets on a local process pool or a Dask cluster when an
   :class:`~orlbuild.executor.Executor` is given.

This module reads no store, so reading files (``orlbuild eval``) does not load
SQLAlchemy; SciPy and the statistics load when a function runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from orlbuild.errors import ConfigError
from orlbuild.executor import Executor, map_largest_first
from orlbuild.vocabulary import ExecutorKind, UndefinedPanels
from scoring.settings import TestSettings

if TYPE_CHECKING:  # pandas and the statistics load when a function runs
    import pandas as pd

    from scoring.statistics import PowerResult, ProgressCallback, SystemComparison, TestPlan

__all__ = [
    "compare_panels",
    "compare_scores",
    "comparison_settings",
    "panels_from_scores",
    "power_budgets",
    "power_for_panels",
    "power_steps",
]


def panels_from_scores(
    per_query: Mapping[str, pd.DataFrame],
    measures: Sequence[str],
    *,
    undefined: UndefinedPanels = UndefinedPanels.error,
    tiers: Mapping[str, int] | None = None,
) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """Lay per-system scores out as one paired panel per measure.

    Parameters
    ----------
    per_query
        System -> per-query scores (rows: queries, columns: measures).
    measures
        The measures to lay out.
    undefined
        A measure without any query that every system scored with a defined
        value (e.g. Kendall tau when no run retrieves the ORL's items):
        ``error`` raises, ``drop`` leaves the measure out (the report).
    tiers
        Query -> its ORL's number of tiers: the notes (and the error) then name
        why queries were left out, with counts
        (:func:`orlbuild.services.undefined_scores.left_out_reasons`).

    Returns
    -------
    panels : dict of str to pandas.DataFrame
        :func:`scoring.statistics.score_panels`: the queries every system
        scored with a defined value, in the first system's order.
    notes : list of str
        One per measure whose panel lost queries, saying how many.

    Raises
    ------
    ConfigError
        ``undefined="error"`` and a measure has an empty panel.
    """
    from orlbuild.services.undefined_scores import left_out_reasons, reasons_words
    from scoring.statistics import score_panels

    panels = score_panels(per_query, measures)
    longest = max((len(frame) for frame in per_query.values()), default=0)
    every = list(dict.fromkeys(q for frame in per_query.values() for q in frame.index))
    notes: list[str] = []
    kept: dict[str, pd.DataFrame] = {}
    for measure, panel in panels.items():
        why = ""
        if tiers is not None and len(panel) < len(every):
            shown = set(panel.index)
            gone = [q for q in every if q not in shown]
            why = reasons_words(left_out_reasons(measure, gone, tiers))
        if panel.empty:
            if undefined is UndefinedPanels.drop:
                continue
            raise ConfigError(
                f"no query has a defined {measure} for every system"
                + (f" ({why})" if why else "")
                + " (with --missing skip, only queries all runs answer count); leave it out "
                "or use --missing zero"
            )
        if len(panel) < longest:
            said = why or "not scored by every system, or undefined"
            lost = len(every) - len(panel) if why else longest - len(panel)
            notes.append(
                f"{measure}: {lost} queries left out ({said}); paired tests "
                f"use the other {len(panel)}"
            )
        kept[measure] = panel
    return kept, notes


def compare_panels(panels: Mapping[str, pd.DataFrame], settings: TestSettings) -> SystemComparison:
    """Every pair of systems tested per measure (docs/comparing-systems.md, "Comparing many
    systems").

    :func:`scoring.statistics.system_comparison` with ``settings`` as given:
    ``None`` test is the studentized step-down Tukey HSD (``max-t``) for more
    than two systems, else the paired randomization test; ``None`` correction
    is Holm (none with ``max-t`` and ``tukey-hsd``).
    """
    from scoring.statistics import system_comparison

    return system_comparison(dict(panels), settings)


def compare_scores(
    per_query: Mapping[str, pd.DataFrame],
    measures: Sequence[str],
    settings: TestSettings,
    *,
    undefined: UndefinedPanels = UndefinedPanels.error,
    tiers: Mapping[str, int] | None = None,
) -> tuple[SystemComparison | None, list[str]]:
    """Lay per-system scores out as panels and test every pair per measure.

    :func:`panels_from_scores` then :func:`compare_panels`, the path of every
    front end.

    Parameters
    ----------
    per_query
        System -> per-query scores (rows: queries, columns: measures).
    measures
        The measures to compare.
    settings
        As in :func:`compare_panels`.
    undefined, tiers
        As in :func:`panels_from_scores`.

    Returns
    -------
    comparison : scoring.statistics.SystemComparison or None
        The pairs and their test plans; ``None`` when no measure has a panel
        (``undefined="drop"``).
    notes : list of str
        One per measure whose panel lost queries, saying how many.
    """
    panels, notes = panels_from_scores(per_query, measures, undefined=undefined, tiers=tiers)
    if not panels:
        return None, notes
    return compare_panels(panels, settings), notes


def power_budgets(
    panels: Mapping[str, pd.DataFrame],
    budgets: Sequence[int] | None,
    *,
    fit: bool = False,
) -> dict[str, list[int]]:
    """The query budgets of each measure's power analysis.

    Parameters
    ----------
    panels
        Measure -> paired panel.
    budgets
        The budgets asked for; ``None``: :func:`scoring.statistics.default_budgets`
        of each panel's number of queries.
    fit
        Leave out the budgets larger than a panel's queries (a larger subset
        cannot be drawn) instead of letting the power analysis refuse them;
        :class:`ConfigError` when none is left.

    Returns
    -------
    dict of str to list of int
        Measure -> budgets.
    """
    from scoring.statistics import default_budgets

    plan: dict[str, list[int]] = {}
    for measure, panel in panels.items():
        if budgets is None:
            plan[measure] = default_budgets(len(panel))
        elif fit:
            fitting = [b for b in budgets if b <= len(panel)]
            if not fitting:
                raise ConfigError(
                    f"power budgets {list(budgets)} are all larger than the {len(panel)} "
                    f"queries of {measure}'s panel"
                )
            plan[measure] = fitting
        else:
            plan[measure] = list(budgets)
    return plan


def power_steps(plan: Mapping[str, Sequence[int]], subsamples: int) -> int:
    """Progress steps of :func:`power_for_panels` over the budgets of :func:`power_budgets`."""
    from scoring.statistics import power_analysis_steps

    return sum(power_analysis_steps(len(budgets), subsamples) for budgets in plan.values())


def power_for_panels(
    panels: Mapping[str, pd.DataFrame],
    plan: Mapping[str, Sequence[int]],
    *,
    subsamples: int = 300,
    permutations: int = TestSettings.permutations,
    alpha: float = TestSettings.alpha,
    test: str | Mapping[str, str] | None = None,
    seed: int = 0,
    executor: Executor | None = None,
    advance: ProgressCallback | None = None,
) -> dict[str, PowerResult]:
    """Power@n, N80, discriminative power and stability of every measure in ``plan``.

    Parameters
    ----------
    panels
        Measure -> paired panel (:func:`panels_from_scores`).
    plan
        Measure -> budgets (:func:`power_budgets`); its order is the output's.
    subsamples, permutations, alpha, seed
        As in :func:`scoring.statistics.power_analysis`.
    test
        One test for every measure (``None``: by the number of systems), or
        measure -> the test it was compared with.
    executor
        Where the budgets run (default: serially). Each budget draws from its
        own random stream, so the figures are identical for any executor.
    advance
        Progress callback; the total is :func:`power_steps`.

    Returns
    -------
    dict of str to scoring.statistics.PowerResult
    """
    from scoring.statistics import power_analysis

    results: dict[str, PowerResult] = {}
    for measure, budgets in plan.items():
        chosen = test.get(measure) if isinstance(test, Mapping) else test
        results[measure] = power_analysis(
            panels[measure],
            budgets=budgets,
            subsamples=subsamples,
            permutations=permutations,
            alpha=alpha,
            test=chosen,
            seed=seed,
            progress=advance,
            mapper=_budget_mapper(executor, advance, subsamples),
        )
    return results


def _budget_mapper(
    executor: Executor | None, advance: ProgressCallback | None, subsamples: int
) -> Callable[[Callable[[Any], Any], Iterable[Any]], Iterable[Any]] | None:
    """The budgets on ``executor``, largest first (``None``: serial); a budget = its subsamples.

    A budget's cost grows with the budget; sent largest first, the processes
    finish together instead of one running the largest alone at the end.
    """
    if executor is None or executor.kind is ExecutorKind.SERIAL:
        return None
    counted = None if advance is None else partial(_advance_budgets, advance, subsamples)
    return partial(
        map_largest_first,
        cost=_budget_cost,
        executor=executor,
        advance=counted,
        chunk_size=1,
    )


def _budget_cost(task: Any) -> float:
    """A budget task's cost: its budget (subsets of more queries take longer)."""
    return float(task.budget)


def _advance_budgets(advance: ProgressCallback, subsamples: int, budgets: int) -> None:
    """Report ``budgets`` finished budgets as their subsamples."""
    advance(budgets * subsamples)


def comparison_settings(
    plans: Mapping[str, TestPlan],
    requested: int,
    alpha: float,
    seed: int,
    *,
    missing: str,
    queries: Mapping[str, int],
) -> dict[str, Any]:
    """The ``settings`` of every comparison's JSON document (``compare``, ``eval --compare``):
    the test as run - its name, permutations and seed - with what was changed.

    Parameters
    ----------
    plans
        Measure -> the test plan run (:attr:`scoring.statistics.SystemComparison.plans`).
    requested
        The permutations asked for (``--permutations``).
    alpha, seed
        The level and the seed of the test.
    missing
        ``--missing``: how a query a system lacks was scored (``zero``, ``skip``).
    queries
        Measure -> the queries of its paired panel.

    Returns
    -------
    dict
        ``test``, ``permutations``, ``permutations_requested``, ``exact``,
        ``correction``, ``alpha``, ``seed``, ``smallest_attainable_p``, ``notes``,
        ``missing``, ``queries`` (docs/comparing-systems.md, "One JSON shape").
    """
    first = next(iter(plans.values()))
    draws = [p.permutations for p in plans.values() if p.permutations is not None]
    return {
        "test": first.test.value,
        "permutations": max(draws) if draws else None,
        "permutations_requested": requested,
        "exact": {m: p.exact for m, p in plans.items()},
        "correction": first.correction,
        "alpha": alpha,
        "seed": seed,
        "smallest_attainable_p": {m: p.smallest_p for m, p in plans.items()},
        "notes": list(dict.fromkeys(p.note for p in plans.values() if p.note)),
        "missing": missing,
        "queries": dict(queries),
    }
