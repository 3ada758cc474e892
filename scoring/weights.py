"""Output-position weights ``mu_i`` (docs/measures.md, "RDQ").

Weights describe the result layout (how much attention position ``i`` gets),
never the size of the ORL. They must be positive and non-increasing. A weight
list ``w1..wm`` is extended by repeating its last value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scoring.errors import ScoringError

__all__ = ["WEIGHT_PRESETS", "Weights", "resolve_weights"]

#: Named layouts; the last value repeats for every later position.
WEIGHT_PRESETS: dict[str, tuple[float, ...]] = {
    "vertical": (1, 0.9, 0.8, 0.8, 0.7, 0.6, 0.5, 0.5, 0.4, 0.4, 0.4, 0.3, 0.3, 0.2, 0.2, 0.2, 0.1),
    "vertical-short": (1, 0.8, 0.8, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.1),
    "carousel3": (1, 1, 1, 0.1),
    "uniform": (1,),
}


@dataclass(frozen=True)
class Weights:
    """A validated weight scheme.

    Attributes
    ----------
    values
        The explicit weights ``w1..wm``; position ``i > m`` uses ``wm``.
    name
        The preset name, or ``None`` for a custom list.
    """

    values: tuple[float, ...]
    name: str | None = None

    def __post_init__(self) -> None:
        if not self.values:
            raise ScoringError("a weight list needs at least one value")
        arr = np.asarray(self.values, dtype=np.float64)
        if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            raise ScoringError(f"position weights must be positive, got {list(self.values)}")
        if np.any(np.diff(arr) > 0):
            raise ScoringError(f"position weights must be non-increasing, got {list(self.values)}")

    def array(self, k: int) -> np.ndarray:
        """The weights ``mu_1..mu_k`` as a float64 array."""
        values = np.asarray(self.values, dtype=np.float64)
        if k <= len(values):
            return values[:k].copy()
        return np.concatenate([values, np.full(k - len(values), values[-1])])

    def __str__(self) -> str:
        return self.name if self.name is not None else ";".join(f"{v:g}" for v in self.values)


def resolve_weights(weights: str | Sequence[float] | Weights) -> Weights:
    """Turn a preset name, a list of floats or a :class:`Weights` into :class:`Weights`.

    Raises
    ------
    ScoringError
        For an unknown preset (the message lists the presets) or invalid values.
    """
    if isinstance(weights, Weights):
        return weights
    if isinstance(weights, str):
        if weights not in WEIGHT_PRESETS:
            raise ScoringError(
                f"unknown weight preset {weights!r}; presets: {', '.join(WEIGHT_PRESETS)} "
                "(or a list of floats)"
            )
        return Weights(tuple(float(v) for v in WEIGHT_PRESETS[weights]), name=weights)
    return Weights(tuple(float(v) for v in weights))
