"""Annotator reliabilities fitted with the strengths: Crowd-BT (``--annotators reliability``).

Chen, Bennett, Collins-Thompson & Horvitz, "Pairwise ranking aggregation in a
crowdsourced setting" (WSDM 2013): annotator ``k`` reports the Bradley-Terry
outcome with probability ``eta_k`` and the reverse otherwise, so a comparison
in which ``w`` beat ``l`` has probability::

    P = eta_k * p + (1 - eta_k) * (1 - p),   p = sigmoid(s_w - s_l).

``eta_k = 1`` is a careful annotator, ``1/2`` one who answers at random, and
``0`` one who answers reversed; the model then reads that annotator's
answers the right way round instead of letting them drag the tiers.

An annotator's reliability is a trait of the annotator, not of a query, so
the reliabilities are shared by every query of the build and fitted jointly
with every query's strengths by penalised maximum likelihood
(:func:`fit_reliabilities`: one L-BFGS-B run of scipy.optimize over all
strengths and reliabilities, analytic gradient, the ridge penalty
``alpha_q ||s_q||^2`` of each query with ``alpha_q = c / n_q``). The scores'
covariance of a query is the inverse of its expected information with the
reliabilities profiled out (the Schur complement of the reliability block),
so the tests account for the reliabilities being estimated (docs/tiers-and-audit.md,
"Build routes").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.linalg import cho_factor, cho_solve
from scipy.special import expit
from threadpoolctl import threadpool_limits

from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.estimation.bradley_terry import bradley_terry_pairwise
from orlbuild.builders.estimation.likelihoods import PairwiseLikelihood
from orlbuild.builders.estimation.uncertainty import Z_95
from orlbuild.builders.pairwise_data import PairwiseComparisons
from orlbuild.records import AnnotatorReliability, EstimationError

__all__ = [
    "CrowdBTModel",
    "ReliabilityFit",
    "crowd_bt_information",
    "fit_reliabilities",
]

#: Reliabilities are kept inside ``[ETA_FLOOR, 1 - ETA_FLOOR]`` (the likelihood of a
#: perfectly consistent annotator grows without bound towards 0 or 1).
ETA_FLOOR = 1e-4
#: Newton iterations of one query's strengths before the L-BFGS-B fallback takes over.
_NEWTON_ITERATIONS = 100


@dataclass(frozen=True)
class ReliabilityFit:
    """Reliabilities of every annotator of a build and their information.

    Attributes
    ----------
    names
        Annotator ids (position = global code).
    eta
        Fitted reliability of each annotator.
    information
        Expected information of each ``eta`` from every query's comparisons
        (the diagonal reliability block, strengths held fixed).
    scores
        Query -> fitted centred strengths (local item order of its comparisons).
    annotators
        The per-annotator records (with intervals).
    """

    names: npt.NDArray[np.object_]
    eta: FloatArray
    information: FloatArray
    scores: dict[str, FloatArray]
    annotators: list[AnnotatorReliability]

    def codes_of(self, comparisons: PairwiseComparisons) -> IntArray:
        """The global annotator code of each of ``comparisons``."""
        local = np.searchsorted(self.names, comparisons.annotator_names.astype(str))
        return np.asarray(local[comparisons.annotators], dtype=np.int64)


def _expected_terms(
    d: FloatArray, eta: FloatArray, weights: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per-comparison expected information ``(I_dd, I_de, I_ee)`` of ``d = s_w - s_l`` and eta."""
    p = expit(d)
    first = np.clip((1.0 - eta) + (2.0 * eta - 1.0) * p, 1e-12, 1.0)
    factor = weights / np.clip(first * (1.0 - first), 1e-12, None)
    slope = (2.0 * eta - 1.0) * p * (1.0 - p)
    tilt = 2.0 * p - 1.0
    return slope * slope * factor, slope * tilt * factor, tilt * tilt * factor


def crowd_bt_information(
    scores: FloatArray,
    comparisons: PairwiseComparisons,
    codes: IntArray,
    eta: FloatArray,
    eta_information: FloatArray,
    unit_weights: FloatArray | None = None,
) -> FloatArray:
    """Expected information of one query's scores with the reliabilities profiled out.

    ``I_ss - I_se I_ee^-1 I_es``: ``I_ss`` and ``I_se`` from the query's
    comparisons, ``I_ee`` (diagonal) from every query of the build.

    Parameters
    ----------
    scores
        The query's strengths.
    comparisons
        The query's comparisons.
    codes
        Global annotator code of each comparison.
    eta
        Reliability of every annotator (global codes).
    eta_information
        Expected information of each reliability over the whole build.
    unit_weights
        Outcomes per unit (``None``: the data's counts).
    """
    n = comparisons.n_items
    weights = comparisons.comparison_weights(unit_weights)
    if weights is None:
        weights = np.ones(len(comparisons.winners))
    w, lo = comparisons.winners, comparisons.losers
    i_dd, i_de, _ = _expected_terms(scores[w] - scores[lo], eta[codes], weights)
    pair = np.bincount(w * n + lo, weights=i_dd, minlength=n * n).reshape(n, n)
    pair = pair + pair.T
    info = np.diag(pair.sum(axis=1)) - pair
    present = np.unique(codes)
    local = np.searchsorted(present, codes)
    g = len(present)
    cross = np.bincount(w * g + local, weights=i_de, minlength=n * g).reshape(n, g)
    cross -= np.bincount(lo * g + local, weights=i_de, minlength=n * g).reshape(n, g)
    block = np.maximum(eta_information[present], 1e-12)
    return np.asarray(info - (cross / block) @ cross.T, dtype=np.float64)


def _objective(
    params: FloatArray,
    winners: IntArray,
    losers: IntArray,
    codes: IntArray,
    weights: FloatArray,
    penalty: FloatArray,
    n_items: int,
    fixed_eta: FloatArray | None,
) -> tuple[float, FloatArray]:
    s = params[:n_items]
    eta = params[n_items:] if fixed_eta is None else fixed_eta
    e = eta[codes]
    p = expit(s[winners] - s[losers])
    prob = np.clip((1.0 - e) + (2.0 * e - 1.0) * p, 1e-300, None)
    value = -float(weights @ np.log(prob)) + float(penalty @ (s * s))
    slope = weights * (2.0 * e - 1.0) * p * (1.0 - p) / prob
    grad_s: FloatArray = np.bincount(losers, weights=slope, minlength=n_items).astype(
        np.float64
    ) - np.bincount(winners, weights=slope, minlength=n_items)
    grad_s += 2.0 * penalty * s
    if fixed_eta is not None:
        return value, grad_s
    grad_eta = -np.bincount(codes, weights=weights * (2.0 * p - 1.0) / prob, minlength=len(eta))
    return value, np.concatenate([grad_s, grad_eta])


def _strength_terms(
    s: FloatArray,
    winners: IntArray,
    losers: IntArray,
    e: FloatArray,
    weights: FloatArray,
    alpha: float,
) -> tuple[float, FloatArray, FloatArray, FloatArray]:
    """Objective, gradient, and each comparison's observed and expected curvature in
    ``d = s_w - s_l``."""
    p = expit(s[winners] - s[losers])
    prob = np.clip((1.0 - e) + (2.0 * e - 1.0) * p, 1e-300, None)
    value = -float(weights @ np.log(prob)) + alpha * float(s @ s)
    slope = (2.0 * e - 1.0) * p * (1.0 - p)
    ratio = slope / prob
    score = weights * ratio
    n = len(s)
    grad: FloatArray = np.bincount(losers, weights=score, minlength=n).astype(np.float64)
    grad -= np.bincount(winners, weights=score, minlength=n)
    grad += 2.0 * alpha * s
    observed = weights * (ratio * ratio - ratio * (1.0 - 2.0 * p))
    expected = weights * slope * slope / np.clip(prob * (1.0 - prob), 1e-12, None)
    return value, grad, observed, expected


def _laplacian(winners: IntArray, losers: IntArray, curvature: FloatArray, n: int) -> FloatArray:
    """``sum_c h_c (e_w - e_l)(e_w - e_l)^T``, the Hessian of a function of the differences."""
    pair = np.bincount(winners * n + losers, weights=curvature, minlength=n * n).reshape(n, n)
    pair = pair + pair.T
    return np.asarray(np.diag(pair.sum(axis=1)) - pair, dtype=np.float64)


def _newton_scores(
    winners: IntArray,
    losers: IntArray,
    e: FloatArray,
    weights: FloatArray,
    alpha: float,
    start: FloatArray,
) -> FloatArray | None:
    """Damped Newton on one query's strengths, reliabilities fixed (``None``: no convergence).

    The step uses the observed Hessian when it is positive definite and the
    expected information otherwise (the Crowd-BT log-likelihood is not concave
    far from the data), with an Armijo backtracking line search; ``J`` (all
    ones) fixes the translation the likelihood does not see, which leaves a
    centred iterate centred. Converged when the largest gradient entry is
    below ``1e-10`` per unit of comparison weight, tighter than the L-BFGS-B
    run it replaces (docs/tiers-and-audit.md, "Build routes").
    """
    n = len(start)
    s = start - start.mean()
    gauge = np.ones((n, n))
    tol = 1e-10 * max(1.0, float(weights.sum()))
    value, grad, observed, expected = _strength_terms(s, winners, losers, e, weights, alpha)
    for _ in range(_NEWTON_ITERATIONS):
        if not np.all(np.isfinite(grad)):
            return None
        if float(np.abs(grad).max(initial=0.0)) <= tol:
            return s
        ridge = 2.0 * alpha * np.eye(n) + gauge
        try:
            factor = cho_factor(_laplacian(winners, losers, observed, n) + ridge)
        except np.linalg.LinAlgError:
            try:
                factor = cho_factor(_laplacian(winners, losers, expected, n) + ridge)
            except np.linalg.LinAlgError:
                return None
        step = cho_solve(factor, grad)
        slope = float(grad @ step)
        t = 1.0
        for _ in range(40):
            trial = s - t * step
            new = _strength_terms(trial, winners, losers, e, weights, alpha)
            if new[0] <= value - 1e-4 * t * slope:
                break
            t *= 0.5
        else:
            return None
        s = trial - trial.mean()
        value, grad, observed, expected = new
    return s if float(np.abs(grad).max(initial=0.0)) <= tol else None


def _fit_scores(
    comparisons: PairwiseComparisons,
    codes: IntArray,
    eta: FloatArray,
    alpha: float,
    unit_weights: FloatArray | None,
    start: FloatArray | None = None,
) -> FloatArray:
    n = comparisons.n_items
    weights = comparisons.comparison_weights(unit_weights)
    if weights is None:
        weights = np.ones(len(comparisons.winners))
    first = np.zeros(n) if start is None else np.asarray(start, dtype=np.float64)
    newton = _newton_scores(
        comparisons.winners, comparisons.losers, eta[codes], weights, alpha, first
    )
    if newton is not None:
        return np.asarray(newton - newton.mean(), dtype=np.float64)
    # the fallback: the bound-free L-BFGS-B run from zero that Newton replaces
    from scipy.optimize import minimize  # ~0.3 s of imports: on demand

    result = minimize(
        _objective,
        np.zeros(n),
        args=(
            comparisons.winners,
            comparisons.losers,
            codes,
            weights,
            np.full(n, alpha),
            n,
            eta,
        ),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 5000, "gtol": 1e-10, "ftol": 1e-15},
    )
    scores = np.asarray(result.x - result.x.mean(), dtype=np.float64)
    if not np.all(np.isfinite(scores)):
        raise EstimationError("Crowd-BT strengths are not finite; try a larger --reg")
    return scores


def fit_reliabilities(
    queries: Sequence[tuple[str, PairwiseComparisons]], *, reg: float, start_eta: float = 0.9
) -> ReliabilityFit:
    """Fit every annotator's reliability jointly with every query's strengths.

    Parameters
    ----------
    queries
        ``(query, comparisons)`` of every query of the build.
    reg
        Regularisation ``c``; query ``q`` gets the ridge penalty
        ``(c / n_q) ||s_q||^2``.
    start_eta
        Starting reliability of every annotator (above 1/2: the optimiser
        starts from "annotators mostly agree with the data", which picks the
        orientation of the strengths; the model is symmetric under flipping
        every strength and every ``eta``).

    Returns
    -------
    ReliabilityFit

    Raises
    ------
    EstimationError
        When the optimiser returns non-finite values.
    """
    # Vectors of a few thousand entries and a few hundred parameters: BLAS threads
    # only synchronise here, and on a loaded machine they made this fit 25 times
    # slower (60 s against 2.3 s for 30 queries; the build's per-query work is
    # limited the same way).
    with threadpool_limits(limits=1, user_api="blas"):
        return _joint_fit(queries, reg=reg, start_eta=start_eta)


def _joint_fit(
    queries: Sequence[tuple[str, PairwiseComparisons]], *, reg: float, start_eta: float
) -> ReliabilityFit:
    """:func:`fit_reliabilities` with the BLAS threads already limited."""
    names = np.unique(
        np.concatenate([c.annotator_names.astype(str) for _, c in queries])
        if queries
        else np.zeros(0, dtype=str)
    ).astype(object)
    offsets, winners, losers, codes, weights, penalty = [0], [], [], [], [], []
    for _, comps in queries:
        base = offsets[-1]
        local = np.searchsorted(names, comps.annotator_names.astype(str))
        w = comps.comparison_weights()
        winners.append(comps.winners + base)
        losers.append(comps.losers + base)
        codes.append(local[comps.annotators])
        weights.append(np.ones(len(comps.winners)) if w is None else w)
        penalty.append(np.full(comps.n_items, reg / max(comps.n_items, 1)))
        offsets.append(base + comps.n_items)
    n_items, g = offsets[-1], len(names)
    arrays = [np.concatenate(a) if a else np.zeros(0) for a in (winners, losers, codes)]
    win_all, lose_all, code_all = (a.astype(np.int64) for a in arrays)
    weight_all = np.concatenate(weights) if weights else np.zeros(0)
    penalty_all = np.concatenate(penalty) if penalty else np.zeros(0)
    # start from each query's Bradley-Terry fit (every annotator trusted): far fewer
    # iterations than from zero, and the orientation of the majority
    starts = []
    for _, comps in queries:
        try:
            alpha = max(reg, 0.5) / max(comps.n_items, 1)
            starts.append(bradley_terry_pairwise(comps.count_matrix(), alpha=alpha))
        except EstimationError:
            starts.append(np.zeros(comps.n_items))
    start_s = np.concatenate(starts) if starts else np.zeros(0)
    start = np.concatenate([start_s, np.full(g, start_eta)])
    bounds = [(None, None)] * n_items + [(ETA_FLOOR, 1.0 - ETA_FLOOR)] * g
    from scipy.optimize import minimize  # ~0.3 s of imports: on demand

    result = minimize(
        _objective,
        start,
        args=(win_all, lose_all, code_all, weight_all, penalty_all, n_items, None),
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"maxiter": 20000, "gtol": 1e-7, "ftol": 1e-12},
    )
    if not np.all(np.isfinite(result.x)):
        raise EstimationError("Crowd-BT reliabilities are not finite; try a larger --reg")
    s_all, eta = result.x[:n_items], result.x[n_items:]
    scores = {
        query: s_all[offsets[k] : offsets[k + 1]] - s_all[offsets[k] : offsets[k + 1]].mean()
        for k, (query, _) in enumerate(queries)
    }
    _, _, i_ee = _expected_terms(s_all[win_all] - s_all[lose_all], eta[code_all], weight_all)
    information = np.bincount(code_all, weights=i_ee, minlength=g).astype(np.float64)
    marginal = _marginal_information(queries, scores, names, eta, information, penalty)
    counts = np.bincount(code_all, weights=weight_all, minlength=g)
    records = []
    for k in range(g):
        half = Z_95 / np.sqrt(marginal[k]) if marginal[k] > 0 else np.inf
        records.append(
            AnnotatorReliability(
                annotator=str(names[k]),
                reliability=float(eta[k]),
                low=float(max(0.0, eta[k] - half)),
                high=float(min(1.0, eta[k] + half)),
                comparisons=float(counts[k]),
            )
        )
    return ReliabilityFit(names, eta, information, scores, records)


def _marginal_information(
    queries: Sequence[tuple[str, PairwiseComparisons]],
    scores: dict[str, FloatArray],
    names: npt.NDArray[np.object_],
    eta: FloatArray,
    information: FloatArray,
    penalty: list[FloatArray],
) -> FloatArray:
    """Information of each reliability with every query's strengths profiled out
    (the diagonal of ``I_ee - sum_q I_eq I_qq^+ I_qe``, a slight overstatement of
    the marginal precision that ignores the annotators' covariance)."""
    g = len(names)
    reduced = np.diag(information.astype(np.float64))
    for (query, comps), ridge in zip(queries, penalty, strict=True):
        s = scores[query]
        n = comps.n_items
        weights = comps.comparison_weights()
        if weights is None:
            weights = np.ones(len(comps.winners))
        local = np.searchsorted(names, comps.annotator_names.astype(str))[comps.annotators]
        i_dd, i_de, _ = _expected_terms(s[comps.winners] - s[comps.losers], eta[local], weights)
        pair = np.bincount(comps.winners * n + comps.losers, weights=i_dd, minlength=n * n).reshape(
            n, n
        )
        pair = pair + pair.T
        info = np.diag(pair.sum(axis=1)) - pair + np.diag(2.0 * ridge)
        cross = np.bincount(comps.winners * g + local, weights=i_de, minlength=n * g).reshape(n, g)
        cross -= np.bincount(comps.losers * g + local, weights=i_de, minlength=n * g).reshape(n, g)
        reduced -= cross.T @ np.linalg.pinv(info, hermitian=True) @ cross
    try:
        return np.asarray(1.0 / np.diag(np.linalg.pinv(reduced, hermitian=True)), dtype=np.float64)
    except FloatingPointError:  # pragma: no cover - pinv of a zero block
        return np.zeros(g)


@dataclass(frozen=True)
class CrowdBTModel:
    """Bradley-Terry with the build's annotator reliabilities (``--annotators reliability``).

    ``fit`` solves the query's strengths with the reliabilities held at their
    joint estimate (a bootstrap refits the strengths only); ``information``
    profiles the reliabilities out (:func:`crowd_bt_information`). ``start``
    (one value per item, or ``None`` for zeros) is where Newton starts: the
    leave-one-annotator-out refits start from the build's strengths, which
    changes how many steps they take, not where they end.
    """

    comparisons: PairwiseComparisons
    reg: float
    reliabilities: ReliabilityFit
    start: FloatArray | None = None

    @property
    def unit_annotators(self) -> IntArray:
        """Annotator of each raw row."""
        out = np.zeros(self.comparisons.n_units, dtype=np.int64)
        out[self.comparisons.units] = self.comparisons.annotators
        return out

    @property
    def unit_sizes(self) -> FloatArray | None:
        """Outcomes of each raw row (its ``count``)."""
        return self.comparisons.unit_sizes

    @property
    def alpha(self) -> float:
        """Ridge penalty of the query (``c / n_items``)."""
        return self.reg / self.comparisons.n_items

    def fit(self, unit_weights: FloatArray | None = None) -> FloatArray:
        """Strengths given the reliabilities."""
        codes = self.reliabilities.codes_of(self.comparisons)
        return _fit_scores(
            self.comparisons, codes, self.reliabilities.eta, self.alpha, unit_weights, self.start
        )

    def information(self, scores: FloatArray) -> FloatArray:
        """Expected information with the reliabilities profiled out, plus the penalty."""
        codes = self.reliabilities.codes_of(self.comparisons)
        info = crowd_bt_information(
            scores,
            self.comparisons,
            codes,
            self.reliabilities.eta,
            self.reliabilities.information,
        )
        return info + 2.0 * self.alpha * np.eye(len(scores))

    def likelihood(self) -> PairwiseLikelihood:
        """Bradley-Terry likelihood of the comparisons read through the reliabilities
        (the ``model`` tiering's partitions): a comparison counts ``|2 eta - 1|`` of a
        win, to its winner when ``eta > 1/2`` and to its loser when ``eta < 1/2``, so a
        random annotator adds no evidence and a reversed one is read reversed."""
        comps = self.comparisons
        n = comps.n_items
        weights = comps.comparison_weights()
        if weights is None:
            weights = np.ones(len(comps.winners))
        signal = 2.0 * self.reliabilities.eta[self.reliabilities.codes_of(comps)] - 1.0
        forward = np.bincount(
            comps.winners * n + comps.losers,
            weights=weights * np.clip(signal, 0.0, None),
            minlength=n * n,
        )
        backward = np.bincount(
            comps.losers * n + comps.winners,
            weights=weights * np.clip(-signal, 0.0, None),
            minlength=n * n,
        )
        return PairwiseLikelihood((forward + backward).reshape(n, n).astype(np.float64))

    def subset(self, members: IntArray) -> CrowdBTModel:
        """The model on one component."""
        start = None if self.start is None else self.start[members]
        return CrowdBTModel(self.comparisons.subset(members), self.reg, self.reliabilities, start)
