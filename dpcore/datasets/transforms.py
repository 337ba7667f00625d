"""Data-independent preprocessing: only declared bounds are used, never private statistics."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..exceptions import BoundsError, DPCoreWarning, user_stacklevel
from ..types import ArrayLike, BoundsLike
from ..validation import check_bounds, clip_to_norm, within_bounds
from .csv_upload import BOUNDS_FORMS, bounds_by_column


def _bounds_arrays(X, bounds, columns=None) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` per column of ``X`` from declared bounds in any of :data:`BOUNDS_FORMS`.

    A mapping or text names columns: those of a DataFrame ``X`` (or ``columns``), else ``x0, x1, ...``; every
    column needs a range (``*`` covers the ones not named)."""
    n = np.shape(X)[1]
    if bounds is None or isinstance(bounds, (str, dict)) or hasattr(bounds, "keys"):
        names = [str(c) for c in (columns if columns is not None else
                                  X.columns if isinstance(X, pd.DataFrame) else [f"x{j}" for j in range(n)])]
        declared = bounds_by_column(bounds, names)
        unknown = sorted(set(declared) - set(names) - {"*"})
        if unknown:
            raise BoundsError(f"bounds name column(s) {', '.join(map(repr, unknown))} that the data does not have; "
                             f"its columns: {', '.join(names)}")
        missing = [c for c in names if c not in declared and "*" not in declared]
        if missing:
            raise BoundsError(f"bounds give no range for column(s) {', '.join(map(repr, missing))}; name them or add "
                             "'*': (low, high) for every other column (bounds read from the data would leak "
                             "privacy)")
        pairs = [declared.get(c, declared.get("*")) for c in names]
        return np.array([p[0] for p in pairs], dtype=float), np.array([p[1] for p in pairs], dtype=float)
    try:
        return check_bounds(bounds, n)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"bounds must be {BOUNDS_FORMS}; {exc}") from None


def _clip_counting_rows(X: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Clip ``X`` to the bounds, warning (at the caller's own line, outside dpcore) with how many rows (and values)
    moved."""
    clipped = np.clip(X, lower, upper)
    moved = clipped != X
    if moved.any():
        rows = int(moved.any(axis=1).sum())
        warnings.warn(f"{rows} of {X.shape[0]} rows ({int(moved.sum())} values) lay outside the declared bounds and "
                      "were clipped to them; widen the bounds if that is not intended"
                      + (" (every row was: are the bounds in the data's units?)" if rows == X.shape[0] else ""),
                      DPCoreWarning, stacklevel=user_stacklevel())
    return clipped


def scale_to_unit_interval(X: ArrayLike, bounds: BoundsLike, *, lo: float = 0.0, hi: float = 1.0,
                           warn: bool = True) -> np.ndarray:
    """Map each feature from its declared ``bounds`` onto ``[lo, hi]`` (clipping outliers, with a warning).

    ``bounds`` takes every form of :data:`~dpcore.datasets.csv_upload.BOUNDS_FORMS`: ``(low, high)`` (numbers
    or one per column), or ``{column: (low, high)}`` / ``"col=low:high"`` for a DataFrame's columns (``x0, x1,
    ...`` for an array). ``warn=False`` clips silently (for rows already clipped and warned about, such as test
    rows scaled like their training rows).

    >>> scale_to_unit_interval([[0.0], [10.0]], (0.0, 10.0), lo=-1.0).ravel().tolist()
    [-1.0, 1.0]
    >>> scale_to_unit_interval([[5.0]], {"x0": (0, 10)}).ravel().tolist()
    [0.5]
    """
    lower, upper = _bounds_arrays(X, bounds)
    X = np.asarray(X, dtype=float)
    X = _clip_counting_rows(X, lower, upper) if warn else np.clip(X, lower, upper)
    return lo + (hi - lo) * (X - lower) / (upper - lower)


def standardize_with_bounds(X: ArrayLike, bounds: BoundsLike, *, warn: bool = True,
                            dtype: "np.dtype | type" = np.float64) -> np.ndarray:
    """Centre each feature at the middle of its bounds and divide by the half-range: values land in [-1, 1].

    Rows outside the bounds are clipped to them with a warning that says how many (``warn=False`` to silence it).
    The arithmetic is in double precision; ``dtype`` is the result's (rounded once, as ``.astype(dtype)`` would).

    >>> standardize_with_bounds([[0.0, 5.0]], (0.0, 10.0)).tolist()
    [[-1.0, 0.0]]
    """
    lower, upper = _bounds_arrays(X, bounds)
    X = np.asarray(X, dtype=float)
    if not within_bounds(X, lower, upper):
        X = _clip_counting_rows(X, lower, upper) if warn else np.clip(X, lower, upper)
    return scale_within_bounds(X, lower, upper, dtype=dtype)


def scale_within_bounds(X: np.ndarray, lower: np.ndarray, upper: np.ndarray, *,
                        dtype: "np.dtype | type" = np.float64) -> np.ndarray:
    """``-1 + 2 (X - lower) / (upper - lower)`` of a float ``X`` already within its bounds (no check, no clipping:
    :func:`standardize_with_bounds` does both), computed in place on one new array and stored as ``dtype``."""
    out = np.subtract(X, lower)
    out *= 2.0
    out /= upper - lower
    if np.dtype(dtype) == out.dtype:
        out += -1.0
        return out
    return np.add(out, -1.0, out=np.empty(out.shape, dtype=dtype), casting="same_kind")


def clip_rows_to_norm(X: ArrayLike, max_norm: float = 1.0) -> np.ndarray:
    """Scale down every row whose L2 norm exceeds ``max_norm`` (per-example clipping; see
    :func:`dpcore.validation.clip_to_norm`)."""
    return clip_to_norm(X, max_norm)
