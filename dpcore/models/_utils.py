"""Helpers shared by the estimators in :mod:`dpcore.models` (input validation, bounds, clipping)."""
from __future__ import annotations

import contextlib
import warnings
from collections.abc import Mapping

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..exceptions import DPCoreError, DPCoreWarning, DPTypeError, DPValueError, PrivacyLeakWarning, user_stacklevel
from ..validation import (
    check_array,
    check_bounds,
    check_positive,
    clip_to_bounds,
    clip_to_norm,
    refuse_text_columns,
)

__all__ = [
    "resolve_bounds",
    "box_to_unit",
    "log_box_to_unit",
    "unit_to_box",
    "clip_rows_l2",
    "validate_X",
    "validate_X_y",
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


@contextlib.contextmanager
def _as_dpcore_errors():
    """Re-raise scikit-learn's TypeError / ValueError as dpcore's (the pages and the CLI catch DPCoreError)."""
    try:
        yield
    except DPCoreError:
        raise
    except TypeError as exc:
        raise DPTypeError(str(exc)) from None
    except ValueError as exc:
        raise DPValueError(str(exc)) from None


def _refuse_1d(X) -> None:
    """A 1-D array or flat list is ambiguous (one feature or one sample?): say so without echoing the values.

    Other array-likes are left to ``validate_data``, which refuses 1-D input too.
    """
    flat_list = isinstance(X, (list, tuple)) and len(X) > 0 and np.isscalar(X[0])
    if getattr(X, "ndim", None) == 1 or flat_list:
        raise DPValueError(
            f"X must be 2-D (n_samples, n_features), got a 1-D array of {len(X)} values. Reshape your data: "
            "X.reshape(-1, 1) if it holds one feature, X.reshape(1, -1) if it holds one sample"
        )


def validate_X(estimator, X, *, reset: bool) -> np.ndarray:
    """``X`` as a 2-D float array, checked by scikit-learn's ``validate_data``.

    ``reset=True`` (in ``fit``) records ``n_features_in_``; ``reset=False`` (after fit)
    checks the width against it. Sparse, complex, empty and 1-D input are refused with
    a message saying so, NaN and infinity with dpcore's message; errors are dpcore's.
    """
    _refuse_1d(X)
    refuse_text_columns(X)
    with _as_dpcore_errors():
        A = validate_data(estimator, X, reset=reset, dtype=np.float64, ensure_all_finite=False)
    return _finite(A, X)


def _finite(A: np.ndarray, X) -> np.ndarray:
    """``A``, the validated ``X``, refused if it holds NaN or infinity with ``X``'s own column names where it is a
    DataFrame (the validated array's columns are numbers only)."""
    if hasattr(X, "columns") and not np.all(np.isfinite(A)):
        check_array(X, "X")
    return check_array(A, "X")


def validate_X_y(estimator, X, y, *, classifier: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` for ``fit``: X as in :func:`validate_X`; y 1-D, one per row, finite (numeric for regressors,
    discrete classes for classifiers; a column vector is accepted with scikit-learn's DataConversionWarning)."""
    _refuse_1d(X)
    refuse_text_columns(X)
    X_given = X
    with _as_dpcore_errors():
        X, y = validate_data(estimator, X, y, dtype=np.float64, ensure_all_finite=False, y_numeric=not classifier)
        if classifier:
            check_classification_targets(y)
    if not classifier and np.asarray(y).dtype.kind not in "biuf":
        shown = ", ".join(repr(v) for v in list(dict.fromkeys(np.asarray(y).ravel().tolist()))[:3])
        raise DPValueError(f"y holds {shown} ...: a regressor's targets must be numbers; for classes use a classifier "
                           "(PrivateERMClassifier)")
    return _finite(X, X_given), y


def check_fitted_X(estimator, X, attribute: str) -> np.ndarray:
    """``X`` validated for a fitted ``estimator`` (NotFittedError before fit; a clear error on a wrong width)."""
    check_is_fitted(estimator, attribute)
    return validate_X(estimator, X, reset=False)


def check_n_at_least(n: int, minimum: int, what: str) -> None:
    if n < minimum:
        raise DPValueError(f"{what}: got {n} sample(s), need at least {minimum}")


def resolve_bounds(X: np.ndarray, bounds, *, name: str = "bounds", columns=None) -> tuple[np.ndarray, np.ndarray]:
    """Return declared ``(lower, upper)`` per feature, or infer them from ``X`` with a PrivacyLeakWarning.

    ``bounds`` is a pair ``(lower, upper)`` (numbers, or one per feature), or ``{column: (low, high)}`` /
    ``"age=17:90, *=0:1"`` naming ``columns`` (a DataFrame's, from ``fit``; else ``x0, x1, ...``), as a
    :class:`~dpcore.datasets.BoundedScaler` takes them. A list of ``(low, high)`` pairs by position is refused
    with the named form offered: with two features it reads as ``(lower, upper)``.

    Inferring bounds from the private data is not differentially private (the
    minimum and maximum are exact statistics of the data), so every inference
    warns, as diffprivlib does.
    """
    d = X.shape[1]
    if isinstance(bounds, (str, Mapping)):
        from ..datasets import bounds_by_column

        names = [str(c) for c in columns] if columns is not None else [f"x{j}" for j in range(d)]
        declared = bounds_by_column(bounds, names)
        unknown = [c for c in declared if c not in names and c != "*"]
        missing = [c for c in names if c not in declared and "*" not in declared]
        if unknown or missing:
            said = (f"name column(s) {', '.join(map(repr, unknown))} that X does not have" if unknown else
                    f"give no range for column(s) {', '.join(map(repr, missing))} (add '*': (low, high) for every "
                    "other column)")
            raise DPValueError(f"{name} {said}; X's columns: {', '.join(names)}")
        pairs = [declared.get(c, declared.get("*")) for c in names]
        return check_bounds(([p[0] for p in pairs], [p[1] for p in pairs]), d, name=name)
    if bounds is None:
        warnings.warn(
            f"{name} were not declared, so they were inferred from the private data (min and max): this leaks "
            f"privacy beyond the stated epsilon. Declare {name}=(lower, upper) from domain knowledge"
            + (" (or {column: (low, high)})." if d > 1 else "."),
            PrivacyLeakWarning,
            stacklevel=user_stacklevel(),
        )
        lo, hi = X.min(axis=0).astype(float), X.max(axis=0).astype(float)
        hi = np.where(hi > lo, hi, lo + 1.0)
        return lo, hi
    try:
        return check_bounds(bounds, d, name=name)
    except DPTypeError as exc:  # one (low, high) per feature: by name, which no order of the pairs can confuse
        if d < 2:
            raise
        raise DPTypeError(f"{exc}; or one (low, high) per column by name, {{column: (low, high)}} (a DataFrame's "
                          "column names, or x0, x1, ... for an array)") from None


def clip_with_warning(X: np.ndarray, lo: np.ndarray, hi: np.ndarray, name: str) -> np.ndarray:
    """Clip to the declared box; warn (never silently) when values were outside it."""
    return clip_to_bounds(X, lo, hi, name)


def box_to_unit(X: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Affine map of the box ``[lo, hi]`` onto ``[-1, 1]^d`` (uses only the public bounds), its values held in
    ``[-1, 1]``: computed in floating point, a value at a bound landed up to 1.7e-12 beyond +-1 where the box is
    narrow beside its distance from 0 (-1.00000000000018 at lo = -9.9 of [-9.9, -9.89]), past the bound of 1 every
    sensitivity of the scaled rows assumes (SSP's sums, the functional mechanism's coefficients, DPLloyd's sums).

    >>> box_to_unit(np.array([[-7.7], [-7.6]]), np.array([-7.7]), np.array([-7.6])).ravel().tolist()
    [-0.9999999999999911, 1.0]
    """
    return np.clip((2.0 * X - (hi + lo)) / (hi - lo), -1.0, 1.0)


def log_box_to_unit(X: np.ndarray, lo: np.ndarray, hi: np.ndarray, *, offset: float = 0.1) -> np.ndarray:
    """Log-scale each feature between its public bounds onto ``[-1, 1]`` (data-independent).

    ``z = log(x - lo + s)`` with ``s = offset * (hi - lo)``, then the affine map of
    ``[log s, log(hi - lo + s)]`` onto ``[-1, 1]``. Positive, heavy-tailed features
    (sizes, areas, counts) mostly sit near their lower bound, so the linear map of
    :func:`box_to_unit` crowds the rows into one corner; the log map spreads them
    while using only the declared bounds (no statistic of the private rows).
    ``offset`` -> infinity recovers the linear map. ``X`` must already lie in the box.

    A feature whose declared range reaches below 0 is no size, area or count (a difference, a standardised
    score, a log-ratio): it gets the linear map of :func:`box_to_unit`, still from its bounds alone. The log map
    assumes the mass sits near the lower bound; on a symmetric feature it squeezes the upper half, and on a table
    of four such features with a 90/10 label it made objective perturbation answer the common class for every row
    up to ε = 10, where the linear map found 74 % of the rare class.

    >>> log_box_to_unit(np.array([[0.0], [10.0]]), np.array([0.0]), np.array([10.0])).ravel().tolist()
    [-1.0, 1.0]
    >>> log_box_to_unit(np.array([[0.0, 0.0]]), np.array([-5.0, 0.0]), np.array([5.0, 10.0])).round(3).tolist()
    [[0.0, -1.0]]
    """
    offset = check_positive(offset, "offset")
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    s = offset * (hi - lo)
    a, b = np.log(s), np.log(hi - lo + s)
    # the clip only removes floating-point overshoot at the bounds (X lies in the box)
    z = np.clip((2.0 * np.log(X - lo + s) - (a + b)) / (b - a), -1.0, 1.0)
    signed = lo < 0  # can be negative: the linear map (decided by the declared bounds alone)
    return np.where(signed, np.clip(box_to_unit(X, lo, hi), -1.0, 1.0), z) if np.any(signed) else z


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
            stacklevel=user_stacklevel(),
        )
    return Z, n_over
