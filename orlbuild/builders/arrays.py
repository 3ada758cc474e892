"""The array types every builder module shares: integer codes and float scores."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["FloatArray", "IntArray"]

#: Item, annotator and unit codes, counts and index arrays.
IntArray = npt.NDArray[np.int64]
#: Scores, weights, variances and probabilities.
FloatArray = npt.NDArray[np.float64]
