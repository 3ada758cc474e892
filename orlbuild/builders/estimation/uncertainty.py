"""Uncertainty of item scores and the tests of score differences (docs/tiers-and-audit.md, "Build
routes").

Three estimators, all returning a :class:`ScoreUncertainty`:

* :func:`fisher_uncertainty` - covariance from the observed information,
  inverted with a pseudo-inverse and projected onto centred scores (scores
  are only defined up to a constant);
* :func:`sandwich_uncertainty` - the same bread with a meat clustered by
  annotator (comparisons of one annotator are not independent), with the
  small-sample factor ``G / (G - 1)``;
* :func:`bootstrap_uncertainty` - ``B`` refits on resampled units
  (comparisons or whole annotators).

The test of ``a`` against ``b`` uses the full covariance,
``Var(s_a - s_b) = C_aa + C_bb - 2 C_ab``, and a two-sided normal p-value;
the bootstrap p-value is twice the smaller share of resamples with
``s_a <= s_b`` or ``s_a >= s_b`` (capped at 1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scipy.special import erfc, expit

from orlbuild.builders.arrays import FloatArray, IntArray
from orlbuild.builders.estimation.bradley_terry import integer_scale, pairs_from_counts
from orlbuild.builders.estimation.guarded_fit import quiet_fits
from orlbuild.builders.pairwise_data import PairwiseComparisons
from orlbuild.records import EstimationError

__all__ = [
    "BOOTSTRAP_BLOCK_BYTES",
    "Z_95",
    "ScoreUncertainty",
    "bootstrap_samples",
    "bootstrap_uncertainty",
    "ep_uncertainty",
    "fisher_uncertainty",
    "sandwich_uncertainty",
]

#: Two-sided 95% normal quantile.
Z_95 = 1.959963984540054


@dataclass(frozen=True)
class ScoreUncertainty:
    """Scores with intervals and every pairwise difference test.

    Attributes
    ----------
    scores
        Item scores (higher is better).
    low, high
        95% interval of each score.
    se
        ``se[a, b]``: standard error of ``s_a - s_b`` (bootstrap: standard
        deviation of the resampled differences).
    p_value
        ``p_value[a, b]``: two-sided p-value of ``s_a = s_b``.
    variance
        Label of the estimator, stored with each tie decision.
    cov
        Covariance of the (centred) scores, when estimated from one.
    samples
        ``(B, n_items)`` bootstrap scores, when resampled.
    """

    scores: FloatArray
    low: FloatArray
    high: FloatArray
    se: FloatArray
    p_value: FloatArray
    variance: str
    cov: FloatArray | None = field(default=None, repr=False, compare=False)
    samples: FloatArray | None = field(default=None, repr=False, compare=False)


def _centring(n: int) -> FloatArray:
    return np.eye(n) - np.full((n, n), 1.0 / n)


def _from_covariance(scores: FloatArray, cov: FloatArray, variance: str) -> ScoreUncertainty:
    diag = np.diag(cov)
    var_diff = np.maximum(diag[:, None] + diag[None, :] - 2.0 * cov, 0.0)
    se = np.sqrt(var_diff)
    diff = scores[:, None] - scores[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, np.abs(diff) / np.where(se > 0, se, 1.0), np.inf)
    p = erfc(z / np.sqrt(2.0))
    p = np.where((se == 0) & (diff == 0), 1.0, p)
    half = Z_95 * np.sqrt(np.maximum(diag, 0.0))
    return ScoreUncertainty(scores, scores - half, scores + half, se, p, variance, cov=cov)


def fisher_uncertainty(
    scores: FloatArray, information: FloatArray, *, variance: str = "fisher"
) -> ScoreUncertainty:
    """Tests from the inverse observed information.

    Parameters
    ----------
    scores
        Fitted scores.
    information
        Observed Fisher information at ``scores`` (data plus regularisation).
    variance
        Label stored in the audit.
    """
    centre = _centring(len(scores))
    cov = centre @ np.linalg.pinv(information, hermitian=True) @ centre
    return _from_covariance(scores, cov, variance)


def ep_uncertainty(counts: FloatArray, *, alpha: float) -> ScoreUncertainty:
    """Bradley-Terry posterior by expectation propagation (choix's ``ep_pairwise``).

    The scores are the posterior mean under a Gaussian prior of precision
    ``alpha`` and the tests use the posterior covariance (centred). About 30
    times slower than :func:`fisher_uncertainty`; offered as an option
    (docs/tiers-and-audit.md, "Build routes").

    Parameters
    ----------
    counts
        ``counts[i, j]`` = number of times item ``i`` beat item ``j``.
    alpha
        Prior precision (``c / n_items``); must be > 0.

    Raises
    ------
    EstimationError
        With ``alpha = 0`` (improper prior) or when EP fails.
    """
    if alpha <= 0:
        raise EstimationError("--uncertainty ep needs --reg > 0 (the prior precision)")
    n = counts.shape[0]
    # ties (half-wins): every count and the prior precision doubled; the posterior
    # of the doubled data is about twice as concentrated, so its covariance is doubled back
    import choix  # loaded on demand: choix imports scipy.stats and scipy.optimize

    scale = integer_scale(counts)
    try:
        mean, cov = choix.ep_pairwise(
            n, pairs_from_counts(scale * counts), scale * alpha, model="logit"
        )
    except (RuntimeError, ValueError, np.linalg.LinAlgError) as exc:
        raise EstimationError(f"expectation propagation failed: {exc}") from exc
    centre = _centring(n)
    scores = np.asarray(mean, dtype=np.float64) - float(np.mean(mean))
    return _from_covariance(scores, scale * (centre @ cov @ centre), "ep(logit)")


def sandwich_uncertainty(
    scores: FloatArray, information: FloatArray, comparisons: PairwiseComparisons
) -> ScoreUncertainty:
    """Bradley-Terry tests with a sandwich covariance clustered by annotator.

    ``C = G / (G - 1) * H^+ (sum_g u_g u_g^T) H^+`` where ``u_g`` is the score
    (gradient of the log-likelihood) of annotator ``g``'s comparisons.

    Raises
    ------
    EstimationError
        With fewer than two annotators (the clustered meat is then degenerate).
    """
    n = len(scores)
    codes, clusters = np.unique(comparisons.annotators, return_inverse=True)
    n_clusters = len(codes)
    if n_clusters < 2:
        raise EstimationError("--cluster annotators needs at least two annotators for the query")
    residual = 1.0 - expit(scores[comparisons.winners] - scores[comparisons.losers])
    weights = comparisons.comparison_weights()
    if weights is not None:  # a tie's halves and a counted row's outcomes
        residual = residual * weights
    grad = np.bincount(
        clusters * n + comparisons.winners, weights=residual, minlength=n_clusters * n
    ) - np.bincount(clusters * n + comparisons.losers, weights=residual, minlength=n_clusters * n)
    per_cluster = grad.reshape(n_clusters, n)
    meat = per_cluster.T @ per_cluster * (n_clusters / (n_clusters - 1))
    centre = _centring(n)
    bread = centre @ np.linalg.pinv(information, hermitian=True) @ centre
    return _from_covariance(scores, bread @ meat @ bread, "sandwich(annotators)")


def bootstrap_samples(
    fit: Callable[[FloatArray], FloatArray],
    unit_clusters: IntArray,
    *,
    resamples: int,
    rng: np.random.Generator,
    unit_sizes: FloatArray | None = None,
    quiet: bool = False,
    fit_many: Callable[[FloatArray], Iterator[FloatArray]] | None = None,
) -> FloatArray:
    """Refit on ``resamples`` bootstrap draws.

    Parameters
    ----------
    fit
        Maps a weight per unit (its number of outcomes in the draw) to scores.
    unit_clusters
        Cluster of each unit; resampling draws clusters with replacement and
        gives each unit its cluster's multiplicity (times its size). Pass
        ``arange(n_units)`` to resample units themselves.
    resamples
        Number of draws ``B``.
    rng
        Random generator (seeded by the build).
    unit_sizes
        Outcomes of each unit (a counted row's ``count``). When the units are
        resampled themselves, the ``N = sum(sizes)`` outcomes are drawn one by
        one (a multinomial draw over the units, the bootstrap of the expanded
        rows without expanding them); with clusters, a unit weighs its
        cluster's multiplicity times its size.
    quiet
        Set the fits' warning filters (:func:`~orlbuild.builders.estimation.guarded_fit.quiet_fits`)
        once around all resamples instead of once per fit: for a ``fit`` whose
        every step that may warn runs inside ``fitted_scores`` (the model's
        ``fits_guarded``), so the warnings are the same.
    fit_many
        Maps the ``(B, n_units)`` weights to the scores of each row in order,
        as ``fit`` of each row would (a model's ``fit_many``: the per-resample
        work done a block of resamples at a time); ``fit`` is then not called.

    Returns
    -------
    numpy.ndarray
        ``(B, n_items)`` scores.

    Raises
    ------
    EstimationError
        When a refit fails, naming the resample.
    """
    n_clusters = int(unit_clusters.max()) + 1 if len(unit_clusters) else 0
    counted = unit_sizes is not None and bool(np.any(unit_sizes != 1.0))
    per_unit = len(unit_clusters) == n_clusters and bool(
        np.array_equal(unit_clusters, np.arange(n_clusters))
    )
    if counted and per_unit:
        assert unit_sizes is not None
        total = round(float(unit_sizes.sum()))
        weights: npt.NDArray[np.float64] = rng.multinomial(
            total, unit_sizes / unit_sizes.sum(), size=resamples
        ).astype(np.float64)
    else:
        draws = rng.integers(0, max(n_clusters, 1), size=(resamples, n_clusters))
        # each draw's multiplicities, all draws in one bincount (integer counts: exact)
        offsets = np.arange(resamples, dtype=np.int64)[:, None] * n_clusters
        multiplicity = np.bincount(
            (draws + offsets).ravel(), minlength=resamples * n_clusters
        ).reshape(resamples, n_clusters)
        weights = multiplicity[:, unit_clusters].astype(np.float64)
        if counted and unit_sizes is not None:
            weights = weights * unit_sizes
    rows = []
    with quiet_fits() if quiet else nullcontext():
        if fit_many is not None:
            fits = fit_many(np.asarray(weights, dtype=np.float64))
            for b in range(resamples):
                try:
                    rows.append(next(fits))
                except EstimationError as exc:
                    raise EstimationError(f"bootstrap resample {b + 1}: {exc}") from exc
        else:
            for b in range(resamples):
                try:
                    rows.append(fit(np.asarray(weights[b], dtype=np.float64)))
                except EstimationError as exc:
                    raise EstimationError(f"bootstrap resample {b + 1}: {exc}") from exc
    return np.vstack(rows)


#: Memory the bootstrap's pairwise differences may take at once (bytes, docs/reliability.md,
#: "Limits"): they are computed a block of items at a time, with the same reductions, so the
#: values do not depend on the block.
BOOTSTRAP_BLOCK_BYTES = 64 * 2**20
#: Bytes per resample and item pair in a block: the float64 differences, the two boolean
#: comparisons and the float64 deviations of the standard deviation.
_BYTES_PER_DIFFERENCE = 18


def bootstrap_uncertainty(
    scores: FloatArray, samples: npt.NDArray[np.float64], *, variance: str
) -> ScoreUncertainty:
    """Percentile intervals and bootstrap p-values from resampled scores.

    Parameters
    ----------
    scores
        Scores fitted on the full data (reported as the point estimates).
    samples
        ``(B, n_items)`` resampled scores.
    variance
        Label stored in the audit, e.g. ``"bootstrap(comparisons, B=200)"``.
    """
    resamples, n = samples.shape
    p = np.empty((n, n))
    se = np.empty((n, n))
    # a block of rows at a time: the (B, rows, n) differences stay within the block budget
    rows = max(1, BOOTSTRAP_BLOCK_BYTES // (_BYTES_PER_DIFFERENCE * resamples * n))
    for start in range(0, n, rows):
        block = slice(start, start + rows)
        diffs = samples[:, block, None] - samples[:, None, :]
        share_le = (diffs <= 0).mean(axis=0)
        share_ge = (diffs >= 0).mean(axis=0)
        p[block] = np.minimum(1.0, 2.0 * np.minimum(share_le, share_ge))
        se[block] = diffs.std(axis=0, ddof=1)
    low, high = np.percentile(samples, [2.5, 97.5], axis=0)
    return ScoreUncertainty(scores, low, high, se, p, variance, samples=samples)
