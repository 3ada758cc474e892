"""One guarded call into an estimator: choix's failures become :class:`EstimationError`.

choix signals trouble in three ways - ``RuntimeError`` ("Did not converge
after N iterations"), ``ValueError`` (a Markov chain with several absorbing
classes) or silently non-finite scores (an item that never wins or never
loses without regularisation). :func:`fitted_scores` turns all three into one
message that says what to do, and centres the scores. :func:`quiet_fits` sets
the warning filters of a fit once for a loop of fits (a bootstrap's resamples).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import numpy.typing as npt

from orlbuild.builders.arrays import FloatArray
from orlbuild.records import EstimationError

__all__ = ["NEEDS_REG", "fitted_scores", "quiet_fits"]

#: The usual cause of a failed fit, and its cure.
NEEDS_REG = "an item that never wins or never loses needs --reg > 0"


#: ``quiet``: this thread is inside :func:`quiet_fits` (its filters are set already).
_STATE = threading.local()


@contextmanager
def quiet_fits() -> Iterator[None]:
    """The filters :func:`fitted_scores` sets around a fit, set once for many fits.

    ``RuntimeWarning`` ignored and NumPy's divide and invalid errors ignored
    (choix's and LAPACK's non-finite steps end in :class:`EstimationError`
    instead); inside, :func:`fitted_scores` does not set them again, which
    for 200 bootstrap resamples of 500 queries saved about 0.2 s of a 6 s
    build (docs/performance.md, "Builds on many cores or a cluster").
    """
    if getattr(_STATE, "quiet", False):
        yield
        return
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        _STATE.quiet = True
        try:
            yield
        finally:
            _STATE.quiet = False


def fitted_scores(
    label: str, fit: Callable[[], npt.ArrayLike], *, hint: str = NEEDS_REG
) -> FloatArray:
    """Run ``fit`` and return its scores centred on zero.

    Parameters
    ----------
    label
        The estimator, e.g. ``"Bradley-Terry (ilsr)"`` (named in the error).
    fit
        Returns the scores (log-strengths), e.g. a choix call.
    hint
        What the user can do when the fit fails.

    Raises
    ------
    EstimationError
        On non-convergence, a failed solve, or non-finite scores.
    """
    try:
        if getattr(_STATE, "quiet", False):
            params = np.asarray(fit(), dtype=np.float64)
        else:
            with quiet_fits():
                params = np.asarray(fit(), dtype=np.float64)
    except RuntimeError as exc:
        raise EstimationError(f"{label} did not converge ({exc}); {hint}") from exc
    except (ValueError, np.linalg.LinAlgError) as exc:
        raise EstimationError(f"{label} failed: {exc}; {hint}") from exc
    if not np.isfinite(params).all():
        raise EstimationError(f"{label} returned non-finite scores; {hint}")
    # params.mean() without numpy's Python-level _mean: the same add.reduce over the count
    mean = np.float64(np.add.reduce(params, axis=None) / params.size)
    return np.asarray(params - mean, dtype=np.float64)
