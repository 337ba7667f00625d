"""Data-independent preprocessing: only declared bounds are used, never private statistics."""
from __future__ import annotations

import numpy as np

from ..validation import check_bounds, clip_to_bounds, clip_to_norm


def scale_to_unit_interval(X, bounds, *, lo: float = 0.0, hi: float = 1.0, warn: bool = True) -> np.ndarray:
    """Map each feature from its declared ``bounds`` onto ``[lo, hi]`` (clipping outliers, with a warning).

    >>> scale_to_unit_interval([[0.0], [10.0]], (0.0, 10.0), lo=-1.0).ravel().tolist()
    [-1.0, 1.0]
    """
    X = np.asarray(X, dtype=float)
    lower, upper = check_bounds(bounds, X.shape[1])
    if warn:
        X = clip_to_bounds(X, lower, upper)
    else:
        X = np.clip(X, lower, upper)
    return lo + (hi - lo) * (X - lower) / (upper - lower)


def standardize_with_bounds(X, bounds) -> np.ndarray:
    """Centre each feature at the middle of its bounds and divide by the half-range: values land in [-1, 1]."""
    return scale_to_unit_interval(X, bounds, lo=-1.0, hi=1.0, warn=False)


def clip_rows_to_norm(X, max_norm: float = 1.0) -> np.ndarray:
    """Scale down every row whose L2 norm exceeds ``max_norm`` (per-example clipping; see
    :func:`dpcore.validation.clip_to_norm`)."""
    return clip_to_norm(X, max_norm)
