"""Helpers shared by the estimators in :mod:`dpcore.models` (validation, bounds, noise vectors)."""
from __future__ import annotations

import warnings

import numpy as np

from ..exceptions import DPCoreWarning, DPValueError, PrivacyLeakWarning
from ..validation import clip_to_bounds, clip_to_norm, check_array, check_bounds, check_positive

__all__ = [
    "resolve_bounds",
    "box_to_unit",
    "log_box_to_unit",
    "unit_to_box",
    "clip_rows_l2",
    "check_X",
    "check_fitted_X",
    "check_n_at_least",
    "plain",
]


def plain(value):
    """A numpy scalar as the Python value it holds (for messages: ``1``, not ``np.int64(1)``).

    >>> plain(np.int64(1)), plain("a")
    (1, 'a')
    """
    return value.item() if isinstance(value, np.generic) else value


def check_X(X, name: str = "X") -> np.ndarray:
    """Validate a 2-D float feature matrix (1-D input is read as one feature)."""
    X = check_array(X, name)
    if X.ndim == 1:
        X = X.reshape(-1, 1)
    if X.ndim != 2:
        raise DPValueError(f"{name} must be 2-dimensional (n_samples, n_features), got shape {X.shape}")
    return X


def check_fitted_X(estimator, X, attribute: str) -> np.ndarray:
    """``X`` validated for a fitted ``estimator`` (NotFittedError before fit; a clear error on a wrong width)."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator, attribute)
    X = check_X(X)
    if X.shape[1] != estimator.n_features_in_:
        raise DPValueError(f"X has {X.shape[1]} features, but the model was fitted with {estimator.n_features_in_}")
    return X


def check_n_at_least(n: int, minimum: int, what: str) -> None:
    if n < minimum:
        raise DPValueError(f"{what}: got {n} sample(s), need at least {minimum}")


def resolve_bounds(X: np.ndarray, bounds, *, name: str = "bounds") -> tuple[np.ndarray, np.ndarray]:
    """Return declared ``(lower, upper)`` per feature, or infer them from ``X`` with a PrivacyLeakWarning.

    Inferring bounds from the private data is not differentially private (the
    minimum and maximum are exact statistics of the data), so every inference
    warns, as diffprivlib does.
    """
    d = X.shape[1]
    if bounds is None:
        warnings.warn(
            f"{name} were not declared, so they were inferred from the private data (min and max): this leaks "
            f"privacy beyond the stated epsilon. Declare {name}=(lower, upper) from domain knowledge.",
            PrivacyLeakWarning,
            stacklevel=3,
        )
        lo, hi = X.min(axis=0).astype(float), X.max(axis=0).astype(float)
        hi = np.where(hi > lo, hi, lo + 1.0)
        return lo, hi
    return check_bounds(bounds, d, name=name)


def clip_with_warning(X: np.ndarray, lo: np.ndarray, hi: np.ndarray, name: str) -> np.ndarray:
    """Clip to the declared box; warn (never silently) when values were outside it."""
    return clip_to_bounds(X, lo, hi, name, stacklevel=4)


def box_to_unit(X: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Affine map of the box ``[lo, hi]`` onto ``[-1, 1]^d`` (uses only the public bounds)."""
    return (2.0 * X - (hi + lo)) / (hi - lo)


def log_box_to_unit(X: np.ndarray, lo: np.ndarray, hi: np.ndarray, *, offset: float = 0.1) -> np.ndarray:
    """Log-scale each feature between its public bounds onto ``[-1, 1]`` (data-independent).

    ``z = log(x - lo + s)`` with ``s = offset * (hi - lo)``, then the affine map of
    ``[log s, log(hi - lo + s)]`` onto ``[-1, 1]``. Positive, heavy-tailed features
    (sizes, areas, counts) mostly sit near their lower bound, so the linear map of
    :func:`box_to_unit` crowds the rows into one corner; the log map spreads them
    while using only the declared bounds (no statistic of the private rows).
    ``offset`` -> infinity recovers the linear map. ``X`` must already lie in the box.

    >>> log_box_to_unit(np.array([[0.0], [10.0]]), np.array([0.0]), np.array([10.0])).ravel().tolist()
    [-1.0, 1.0]
    """
    offset = check_positive(offset, "offset")
    s = offset * (hi - lo)
    a, b = np.log(s), np.log(hi - lo + s)
    # the clip only removes floating-point overshoot at the bounds (X lies in the box)
    return np.clip((2.0 * np.log(X - lo + s) - (a + b)) / (b - a), -1.0, 1.0)


def unit_to_box(Z: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Inverse of :func:`box_to_unit`."""
    return 0.5 * (Z * (hi - lo) + (hi + lo))


def clip_rows_l2(X: np.ndarray, max_norm: float, *, name: str = "X", warn: bool = True) -> tuple[np.ndarray, int]:
    """:func:`~dpcore.validation.clip_to_norm` in L2 with a warning when rows moved; returns rows and how many."""
    Z, n_over = clip_to_norm(X, max_norm, name="data_norm", return_count=True)
    if n_over and warn:
        warnings.warn(
            f"{n_over} row(s) of {name} had an L2 norm above data_norm={max_norm:g} and were scaled down to it; "
            "this is what bounds the sensitivity (raise data_norm to clip fewer rows, at the cost of more noise)",
            DPCoreWarning,
            stacklevel=3,
        )
    return Z, n_over
