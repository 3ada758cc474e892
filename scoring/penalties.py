"""Rank-deviation penalties ``rho`` (docs/measures.md, "RDQ").

A penalty takes ``(i, g_star, g, n_ref)`` - the output position, the ideal ORL
rank at that position, the ORL rank of the item shown there and ``|R|`` - and
returns a factor in ``[0, 1]``, equal to 1 when ``g == g_star``. The built-in
penalties accept NumPy arrays so the batch path can evaluate every position of
every query in one call; user penalties are called on scalars.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from scoring.errors import ScoringError

__all__ = [
    "BUILT_IN_PENALTIES",
    "PENALTIES",
    "Penalty",
    "get_penalty",
    "m1_penalty",
    "m2_penalty",
    "register_penalty",
]

PenaltyFn = Callable[..., Any]


def m1_penalty(i: Any, g_star: Any, g: Any, n_ref: Any) -> Any:
    """M1, the asymmetric rank ratio ``min(1, g* / g)``.

    Only an item shown above its reference level (``g > g*``, a worse item
    promoted) is charged; no ORL-size term.
    """
    return np.minimum(1.0, np.asarray(g_star, dtype=np.float64) / g)


def m2_penalty(
    i: Any, g_star: Any, g: Any, n_ref: Any, *, alpha: float = 1.0, lam: float = 0.2
) -> Any:
    """M2, symmetric and size-normalised: ``exp(-lam |g - g*| / (alpha sqrt(|R|)))``.

    ``alpha`` is the tolerance (larger is milder), ``lam`` the rate. This closed
    form follows the paper's description; see docs/measures.md, "RDQ" (the M2 caveat) for the one
    documented difference from a printed value.
    """
    dist = np.abs(np.asarray(g, dtype=np.float64) - g_star)
    return np.exp(-lam * dist / (alpha * np.sqrt(n_ref)))


@dataclass(frozen=True)
class Penalty:
    """A named penalty.

    Attributes
    ----------
    name
        Registry name (``m1``, ``m2`` or a user name).
    fn
        The callable ``(i, g_star, g, n_ref) -> float``.
    vectorised
        Whether ``fn`` accepts NumPy arrays (built-ins do).
    uses_alpha_lam
        Whether ``alpha`` and ``lam`` are passed to ``fn`` as keywords.
    """

    name: str
    fn: PenaltyFn
    vectorised: bool = False
    uses_alpha_lam: bool = False

    def __call__(self, i: Any, g_star: Any, g: Any, n_ref: Any, *, alpha: float, lam: float) -> Any:
        """Evaluate on scalars or arrays; user penalties are checked to stay in [0, 1]."""
        kwargs = {"alpha": alpha, "lam": lam} if self.uses_alpha_lam else {}
        if self.vectorised:
            return self.fn(i, g_star, g, n_ref, **kwargs)
        out = np.vectorize(lambda a, b, c, d: float(self.fn(a, b, c, d, **kwargs)), otypes=[float])(
            i, g_star, g, n_ref
        )
        arr = np.asarray(out, dtype=np.float64)
        if arr.size and (not np.all(np.isfinite(arr)) or arr.min() < 0 or arr.max() > 1):
            bad = arr[~((arr >= 0) & (arr <= 1))][0]
            raise ScoringError(f"penalty {self.name!r} returned {bad!r}, outside [0, 1]")
        return arr if arr.ndim else float(arr)


PENALTIES: dict[str, Penalty] = {
    "m1": Penalty("m1", m1_penalty, vectorised=True),
    "m2": Penalty("m2", m2_penalty, vectorised=True, uses_alpha_lam=True),
}
#: The penalties that ship with scoring: their names are reserved and never change meaning.
BUILT_IN_PENALTIES = frozenset(PENALTIES)


def _validate_penalty(name: str, fn: PenaltyFn) -> None:
    """Probe ``fn`` on a grid of plausible inputs; every value must lie in [0, 1]."""
    for n_ref in (1, 2, 5, 20, 100):
        for i in (1, 2, 3, 7, 20):
            for g_star in (1, 2, 3, 10, n_ref + 1):
                for g in (1, 2, 3, 5, 10, 50):
                    try:
                        value = float(fn(i, g_star, g, n_ref))
                    except Exception as exc:  # a user callable may raise anything
                        raise ScoringError(
                            f"penalty {name!r} failed on (i={i}, g_star={g_star}, g={g}, "
                            f"n_ref={n_ref}): {exc}"
                        ) from exc
                    if not (0.0 <= value <= 1.0):
                        raise ScoringError(
                            f"penalty {name!r} must return values in [0, 1]; "
                            f"(i={i}, g_star={g_star}, g={g}, n_ref={n_ref}) gave {value!r}"
                        )


def register_penalty(name: str, fn: PenaltyFn, *, replace: bool = False) -> None:
    """Register a user penalty under ``name`` for ``rdq`` and ``RDQ(penalty=name)``.

    Parameters
    ----------
    name
        Identifier used in measure names; ``m1`` and ``m2`` are reserved.
    fn
        ``fn(i, g_star, g, n_ref) -> float`` with values in ``[0, 1]``; it is
        probed on a grid of inputs at registration and checked at every call.
    replace
        Allow replacing an earlier user registration of the same name.

    Raises
    ------
    ScoringError
        For a reserved or invalid name, or a callable that leaves ``[0, 1]``.
    """
    if name in BUILT_IN_PENALTIES:
        raise ScoringError(f"penalty name {name!r} is reserved for the built-in penalty")
    if not name or not name.replace("_", "").replace("-", "").isalnum():
        raise ScoringError(f"penalty name must be alphanumeric (with - or _), got {name!r}")
    if name in PENALTIES and not replace:
        raise ScoringError(f"penalty {name!r} is already registered (pass replace=True)")
    if not callable(fn):
        raise ScoringError(f"penalty {name!r} must be callable")
    _validate_penalty(name, fn)
    PENALTIES[name] = Penalty(name, fn)


def get_penalty(name: str) -> Penalty:
    """Look up a registered penalty by name (error lists the registered ones)."""
    try:
        return PENALTIES[name]
    except KeyError:
        raise ScoringError(
            f"unknown penalty {name!r}; registered: {', '.join(PENALTIES)}"
        ) from None
