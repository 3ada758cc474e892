"""The ``model`` tiering's grouped fits and its tie rule.

orlbuild/builders/tiering/model_selection.py, orlbuild/builders/tiering/grouped_fit.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

import orlbuild.builders.tiering.grouped_fit as grouped_fit
import orlbuild.builders.tiering.model_selection as model_tiers
from orlbuild.builders import BuildParameters, build_orls
from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.estimation.likelihoods import (
    ItemLikelihood,
    PairwiseLikelihood,
    RankingLikelihood,
)
from orlbuild.builders.tiering.grouped_fit import GRADIENT_TOL, GroupedFitter
from orlbuild.vocabulary import Source, TieringProcedure


def _symmetric_chain() -> pd.DataFrame:
    """a > b > c by the same margin (a-b and b-c: 8 of 10; a-c: 9 of 10).

    Reversing the order and every comparison maps the data onto itself, so a
    boundary after a and a boundary after b gain exactly the same likelihood.
    """
    rows = [("a", "b")] * 8 + [("b", "a")] * 2 + [("b", "c")] * 8 + [("c", "b")] * 2
    rows += [("a", "c")] * 9 + [("c", "a")]
    return pd.DataFrame(rows, columns=["winner", "loser"]).assign(query="q", annotator="a1")


def _tiers(frame: pd.DataFrame) -> list[list[str]]:
    _, outcome = build_orls(
        frame, BuildParameters(source=Source.pairwise, tiering=TieringProcedure.model)
    )
    return [sorted(t) for t in outcome.orls["q"].tiers]


def _plain_min(change: dict[int, float], tolerance: float) -> int | None:
    """The rule before the tie tolerance: the lowest BIC change, ties to the smallest position."""
    best = min(change, key=lambda k: (change[k], k), default=None)
    return None if best is None or change[best] >= -1e-9 else best


def _perturb_top_singleton(monkeypatch: pytest.MonkeyPatch, shift: float) -> None:
    """Add ``shift`` to the fitted log-likelihood of the partition {a} | {b, c} (solver noise)."""
    real = GroupedFitter.fit_many

    def noisy(
        self: GroupedFitter,
        labels: Sequence[IntArray],
        *,
        alpha: float,
        starts: Sequence[FloatArray | None],
    ) -> list[tuple[float, FloatArray]]:
        fits = real(self, labels, alpha=alpha, starts=starts)
        return [
            (loglik + shift if np.bincount(lab).tolist() == [1, 2] and lab[0] == 0 else loglik, th)
            for lab, (loglik, th) in zip(labels, fits, strict=True)
        ]

    monkeypatch.setattr(GroupedFitter, "fit_many", noisy)


def test_an_exact_likelihood_tie_goes_to_the_latest_boundary() -> None:
    # one boundary pays its penalty and the second does not; by symmetry the first
    # step is an exact tie between "a | b c" and "a b | c": the latest boundary wins
    assert _tiers(_symmetric_chain()) == [["a", "b"], ["c"]]


@pytest.mark.parametrize("shift", [1e-10, -1e-10, 5e-8])
def test_solver_noise_does_not_decide_a_tie(monkeypatch: pytest.MonkeyPatch, shift: float) -> None:
    _perturb_top_singleton(monkeypatch, shift)
    assert _tiers(_symmetric_chain()) == [["a", "b"], ["c"]]


def test_plain_min_on_noise_would_decide_the_tie(monkeypatch: pytest.MonkeyPatch) -> None:
    # the check above has teeth: without the tolerance, 1e-10 of noise flips the tiers
    _perturb_top_singleton(monkeypatch, 1e-10)
    monkeypatch.setattr(model_tiers, "choose_toggle", _plain_min)
    assert _tiers(_symmetric_chain()) == [["a"], ["b", "c"]]


def test_choose_toggle_tolerance_and_order() -> None:
    tol = model_tiers.bic_tie_tolerance(-100.0)
    assert tol == pytest.approx(model_tiers.TIE_ATOL + 100.0 * model_tiers.TIE_RTOL)
    # tied within the tolerance: the latest position, whatever the noise says
    assert model_tiers.choose_toggle({2: -5.0 - tol / 2, 7: -5.0, 9: 1.0}, tol) == 7
    # beyond the tolerance the lower BIC change wins
    assert model_tiers.choose_toggle({2: -5.0 - 2 * tol, 7: -5.0}, tol) == 2
    # a toggle must lower the BIC by more than the tolerance
    assert model_tiers.choose_toggle({3: -tol / 2, 4: 2.0}, tol) is None
    assert model_tiers.choose_toggle({}, tol) is None


def _problems(seed: int) -> list[tuple[ItemLikelihood, IntArray]]:
    rng = np.random.default_rng(seed)
    out: list[tuple[ItemLikelihood, IntArray]] = []
    for trial in range(24):
        n = int(rng.integers(3, 15))
        k = int(rng.integers(2, n + 1))
        labels = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
        rng.shuffle(labels)
        likelihood: ItemLikelihood
        if trial % 2:
            counts = rng.integers(0, 5, (n, n)).astype(np.float64)
            np.fill_diagonal(counts, 0.0)
            likelihood = PairwiseLikelihood(counts * rng.choice([1.0, 0.37]))  # crowd-bt weights
        else:
            sizes = rng.integers(2, n + 1, int(rng.integers(3, 30)))
            likelihood = RankingLikelihood(
                n, [tuple(rng.permutation(n)[:m].tolist()) for m in sizes]
            )
        out.append((likelihood, labels.astype(np.int64)))
    return out


def _objective(
    likelihood: ItemLikelihood, labels: IntArray, alpha: float, theta: FloatArray
) -> tuple[float, FloatArray]:
    value, grad = likelihood.log_likelihood(theta[labels])
    group_grad = np.bincount(labels, weights=grad, minlength=len(theta))
    return -value + alpha * float(theta @ theta), -group_grad + 2.0 * alpha * theta


@pytest.mark.parametrize("alpha", [0.1, 1e-3])
def test_newton_fit_is_the_penalised_maximum(alpha: float) -> None:
    for likelihood, labels in _problems(11):
        fitter = GroupedFitter(likelihood)
        loglik, theta = fitter.fit(labels, alpha=alpha)
        value, grad = _objective(likelihood, labels, alpha, theta)
        # the grouped derivatives are the item-level ones summed per group
        assert loglik == pytest.approx(-(value - alpha * float(theta @ theta)), abs=1e-9)
        assert np.abs(grad).max() < 1e3 * GRADIENT_TOL  # item-level rounding on top
        reference = minimize(
            lambda t, lk=likelihood, lab=labels: _objective(lk, lab, alpha, t),
            np.zeros(len(theta)),
            jac=True,
            method="L-BFGS-B",
            options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 5000},
        )
        assert value <= reference.fun + 1e-9
        # deterministic: the start changes nothing but the path
        again, _ = fitter.fit(labels, alpha=alpha, start=np.linspace(3.0, -3.0, len(theta)))
        assert again == pytest.approx(loglik, abs=1e-10)


@dataclass(frozen=True)
class _Opaque:
    """An item likelihood the Newton fit does not know: only the scipy path can fit it."""

    inner: ItemLikelihood

    @property
    def n_observations(self) -> float:
        return self.inner.n_observations

    def log_likelihood(self, scores: FloatArray) -> tuple[float, FloatArray]:
        return self.inner.log_likelihood(scores)


def test_scipy_fallback_agrees(monkeypatch: pytest.MonkeyPatch) -> None:
    problems = _problems(12)[:8]
    newton = [GroupedFitter(lk).fit(labels, alpha=0.05)[0] for lk, labels in problems]
    opaque = [GroupedFitter(_Opaque(lk)).fit(labels, alpha=0.05)[0] for lk, labels in problems]
    monkeypatch.setattr(grouped_fit, "MAX_NEWTON_STEPS", 0)  # Newton "fails": scipy fits
    failed = [GroupedFitter(lk).fit(labels, alpha=0.05)[0] for lk, labels in problems]
    np.testing.assert_allclose(opaque, newton, rtol=0, atol=1e-7)
    np.testing.assert_allclose(failed, newton, rtol=0, atol=1e-7)


def test_unregularised_fit_converges() -> None:
    # alpha = 0 (--reg 0): the likelihood sees only differences; Newton pins the mean direction
    for likelihood, labels in _problems(13)[:10]:
        _, theta = GroupedFitter(likelihood).fit(labels, alpha=0.0)
        assert np.all(np.isfinite(theta))
        _, grad = _objective(likelihood, labels, 0.0, theta)
        assert np.abs(grad).max() < 1e-7


def test_batched_fits_equal_one_by_one_fits() -> None:
    # what model_tiers hands fit_many: partitions with different numbers of groups at once
    rng = np.random.default_rng(14)
    counts = rng.integers(0, 6, (9, 9)).astype(np.float64)
    np.fill_diagonal(counts, 0.0)
    fitter = GroupedFitter(PairwiseLikelihood(counts))
    labels = [np.sort(rng.integers(0, k, 9)) for k in (2, 3, 3, 4, 2, 5, 3)]
    labels = [np.unique(lab, return_inverse=True)[1].astype(np.int64) for lab in labels]
    starts: list[FloatArray | None] = [
        None,
        *(rng.normal(size=int(lab.max()) + 1) for lab in labels[1:]),
    ]
    together = fitter.fit_many(labels, alpha=0.05, starts=starts)
    for lab, start, (loglik, theta) in zip(labels, starts, together, strict=True):
        alone, alone_theta = fitter.fit(lab, alpha=0.05, start=start)
        assert loglik == pytest.approx(alone, abs=1e-10)
        np.testing.assert_allclose(theta, alone_theta, atol=1e-8)
