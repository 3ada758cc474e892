"""Benchmark of the ``model`` tiering's grouped fits: Newton against the former L-BFGS-B.

``--tiering model`` fits one grouped likelihood per candidate partition
(orlbuild/builders/tiering/model_selection.py). The fits were L-BFGS-B on the item-level
likelihood (:func:`scipy.optimize.minimize` with its default stopping rule);
they are now a damped Newton method on the grouped likelihood
(orlbuild/builders/tiering/grouped_fit.py). This builds the same seeded simulation
(all-equal queries of 2-30 items at 3 comparisons per pair and mixed queries
of 2-25 items in 1-5 tiers at 4 per pair, ``orlbuild.builders.calibration.simulation``)
with both fits, in the same process and alternately, and prints:

* the CPU time (``time.process_time``) of the whole build and of the
  ``model`` tiering alone, per fit, best of ``--rounds``, and their ratios
  (target: the tiering at least 2 times faster);
* how many queries get different tiers (the peer's noise of about ``1e-7``
  can exceed the tie tolerance on an exact tie, so a handful may differ: each
  is such a tie; compare the stored ORLs of the former code for the exact
  count) and the largest difference of a recorded log-likelihood gain;
* the load average, since the machine may be shared.

Run as a script: ``python tests/benchmarks/bench_model_tiers.py [--queries N]``;
``pytest tests/benchmarks/bench_model_tiers.py`` runs it and asserts the target.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import minimize

import orlbuild.builders.tiering.deciding as tier_procedures
from orlbuild.builders import BuildParameters, build_orls
from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.calibration.simulation import CalibrationDesign, simulated_queries
from orlbuild.builders.tiering.grouped_fit import GroupedFitter
from orlbuild.builders.tiering.model_selection import ordered_split_penalty
from orlbuild.records import EstimationError
from orlbuild.vocabulary import Disconnected, Source, TieringProcedure


def lbfgsb_fit(
    self: GroupedFitter, labels: IntArray, *, alpha: float, start: FloatArray | None = None
) -> tuple[float, FloatArray]:
    """The former grouped fit: L-BFGS-B, scipy's default tolerances, item-level likelihood."""
    n_groups = int(labels.max()) + 1
    if n_groups == 1:
        return self.likelihood.log_likelihood(np.zeros(len(labels)))[0], np.zeros(1)

    def objective(theta: FloatArray) -> tuple[float, FloatArray]:
        value, grad = self.likelihood.log_likelihood(theta[labels])
        group_grad = np.bincount(labels, weights=grad, minlength=n_groups)
        return -value + alpha * float(theta @ theta), -group_grad + 2.0 * alpha * theta

    x0 = np.zeros(n_groups) if start is None else start
    result = minimize(objective, x0, jac=True, method="L-BFGS-B", options={"maxiter": 500})
    if not np.all(np.isfinite(result.x)):
        raise EstimationError(f"grouped fit of {n_groups} groups failed: {result.message}")
    return self.likelihood.log_likelihood(result.x[labels])[0], np.asarray(result.x)


def lbfgsb_fit_many(
    self: GroupedFitter,
    labels: Sequence[IntArray],
    *,
    alpha: float,
    starts: Sequence[FloatArray | None],
) -> list[tuple[float, FloatArray]]:
    """:func:`lbfgsb_fit` one partition at a time (what the former search did)."""
    return [
        lbfgsb_fit(self, lab, alpha=alpha, start=start)
        for lab, start in zip(labels, starts, strict=True)
    ]


@contextmanager
def fitted_with(fit: Callable[..., list[tuple[float, FloatArray]]] | None) -> Iterator[list[float]]:
    """Use ``fit`` for the grouped fits (``None``: the current one); yield the tiering CPU times."""
    spent: list[float] = []
    real_fit, real_tiers = GroupedFitter.fit_many, tier_procedures.model_tiers

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return real_tiers(*args, **kwargs)
        finally:
            spent.append(time.process_time() - start)

    if fit is not None:
        GroupedFitter.fit_many = fit  # type: ignore[method-assign]
    tier_procedures.model_tiers = timed
    try:
        yield spent
    finally:
        GroupedFitter.fit_many = real_fit  # type: ignore[method-assign]
        tier_procedures.model_tiers = real_tiers


def simulation(queries: int) -> pd.DataFrame:
    """Half all-equal, half mixed queries (the designs of bench_tiering.py)."""
    equal, _ = simulated_queries(CalibrationDesign(queries=queries // 2, seed=1), mixed=False)
    mixed, _ = simulated_queries(
        CalibrationDesign(
            queries=queries - queries // 2, items=(2, 25), comparisons_per_pair=4, seed=2
        ),
        mixed=True,
    )
    return pd.concat([equal, mixed], ignore_index=True)


def compare(queries: int, rounds: int) -> dict[str, float]:
    """Build with both fits ``rounds`` times each, alternately; print and return the figures."""
    frame = simulation(queries)
    params = BuildParameters(
        source=Source.pairwise, tiering=TieringProcedure.model, disconnected=Disconnected.tiers
    )
    for n in range(
        2, 31
    ):  # the penalty's Monte Carlo is cached per size: keep it out of the timing
        ordered_split_penalty(n, params.sig)
    best: dict[str, tuple[float, float]] = {}
    built: dict[str, dict[str, Any]] = {}
    for _ in range(rounds):
        for name, fit in (("lbfgsb", lbfgsb_fit_many), ("newton", None)):
            with fitted_with(fit) as spent:
                start = time.process_time()
                _, outcome = build_orls(frame, params)
                total = time.process_time() - start
            tiering = sum(spent)
            if name not in best or total < best[name][0]:
                best[name] = (total, tiering)
            built[name] = outcome.orls
    old, new = built["lbfgsb"], built["newton"]
    differ = [q for q in old if old[q].tiers != new[q].tiers]
    gains = [
        abs(a.loglik_gain - b.loglik_gain)
        for q in old
        if q not in differ
        for a, b in zip(old[q].decisions, new[q].decisions, strict=True)
        if a.loglik_gain is not None and b.loglik_gain is not None
    ]
    figures = {
        "queries": float(len(old)),
        "build_ratio": best["lbfgsb"][0] / best["newton"][0],
        "tiering_ratio": best["lbfgsb"][1] / best["newton"][1],
        "differing_queries": float(len(differ)),
        "largest_gain_difference": max(gains, default=0.0),
    }
    load = os.getloadavg()
    print(
        f"{len(old)} queries, best of {rounds}, CPU seconds (load average {load[0]:.1f}, "
        f"{load[1]:.1f}, {load[2]:.1f} on {os.cpu_count()} cores):\n"
        f"  L-BFGS-B: build {best['lbfgsb'][0]:.2f}, model tiering {best['lbfgsb'][1]:.2f}\n"
        f"  Newton:   build {best['newton'][0]:.2f}, model tiering {best['newton'][1]:.2f}\n"
        f"  ratio old/new: build {figures['build_ratio']:.2f}x, "
        f"tiering {figures['tiering_ratio']:.2f}x\n"
        f"  queries with different tiers: {len(differ)} {differ[:10]}; largest difference of a "
        f"recorded log-likelihood gain elsewhere: {figures['largest_gain_difference']:.2g}"
    )
    return figures


def test_newton_fits_are_faster() -> None:
    figures = compare(200, 2)
    assert figures["tiering_ratio"] >= 2.0
    assert figures["differing_queries"] <= 0.02 * figures["queries"]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200, help="simulated queries (>= 144)")
    parser.add_argument("--rounds", type=int, default=3, help="builds per fit (best counts)")
    args = parser.parse_args()
    compare(args.queries, args.rounds)
