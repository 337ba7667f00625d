"""Validators shared by every public entry point.

Each returns the cleaned value (a Python float/int or a numpy array) and raises a
:class:`~dpcore.exceptions.DPValueError` / :class:`~dpcore.exceptions.DPTypeError`
whose message names the parameter, the value and what to do, in the style of
Opacus's validators.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
import warnings
from typing import Iterator

import numpy as np

from .exceptions import DPCoreWarning, DPTypeError, DPValueError, PrivacyLeakWarning, user_stacklevel

__all__ = [
    "refuse_text_columns",
    "check_epsilon",
    "check_real",
    "check_delta",
    "check_positive",
    "check_nonnegative",
    "check_int",
    "check_probability",
    "check_fraction",
    "check_bounds",
    "clip_to_bounds",
    "clip_to_norm",
    "check_array",
    "check_device",
]


def _as_real(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise DPTypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    out = float(value)
    if math.isnan(out):
        raise DPValueError(f"{name} must be a number, got NaN")
    return out


def check_real(value, name: str) -> float:
    """Return ``value`` as a float after checking that it is a real number, not NaN (any range)."""
    return _as_real(value, name)


def check_epsilon(epsilon, name: str = "epsilon", *, allow_inf: bool = False) -> float:
    """Return ``epsilon`` as a float after checking ``0 < epsilon < inf``.

    >>> check_epsilon(1)
    1.0
    """
    eps = _as_real(epsilon, name)
    if eps <= 0:
        raise DPValueError(f"{name} must be > 0, got {eps!r}; smaller epsilon means more privacy, try 1.0")
    if math.isinf(eps) and not allow_inf:
        raise DPValueError(f"{name} must be finite, got {eps!r}; use the non-private baseline for no privacy")
    return eps


def check_delta(delta, name: str = "delta", *, n: int | None = None, allow_zero: bool = True,
                zero_hint: str = "the Gaussian mechanism needs delta > 0, use Laplace for pure epsilon-DP") -> float:
    """Return ``delta`` after checking ``0 <= delta < 1``; warn when ``delta > 1/n``. ``zero_hint``: what to do
    instead when ``allow_zero`` is False and delta is 0 (the mechanism's own alternative).

    A delta above 1/n allows a mechanism that publishes one whole record at random,
    so we warn (it is legal, but rarely what a person wants).
    """
    d = _as_real(delta, name)
    if not 0.0 <= d < 1.0:
        raise DPValueError(f"{name} must satisfy 0 <= {name} < 1, got {d!r}; a common choice is 1e-5 (below 1/n)")
    if d == 0.0 and not allow_zero:
        raise DPValueError(
            f"{name} must be > 0 here, got 0; {zero_hint}"
        )
    if n is not None and n > 0 and d > 1.0 / n:
        warnings.warn(
            f"{name}={d:g} is larger than 1/n = {1.0 / n:.2g}: this allows leaking whole records; "
            f"choose {name} well below 1/n",
            DPCoreWarning,
            stacklevel=user_stacklevel(),
        )
    return d


#: A delta above this is above 1/n for every data set of more than 100 records: said where no n is known.
LARGE_DELTA = 0.01


def warn_large_delta(delta: float, name: str = "delta") -> float:
    """``delta``, with a warning when it is above :data:`LARGE_DELTA`, for a guarantee made without the data's size
    (a ledger, a mechanism): above 1/n it allows publishing a whole record (Dwork & Roth 2014, Section 2.3), and
    this one is above 1/n for every data set of more than 1/delta records."""
    if delta > LARGE_DELTA and not delta_is_checked():  # a caller that knows n compared delta with 1/n
        warnings.warn(f"{name}={delta:g} is above 1/n for every data set of more than {math.floor(1 / delta):,} "
                      f"records: a guarantee at this {name} allows leaking whole records; choose {name} well below "
                      "1/n (1e-5 is usual)", DPCoreWarning, stacklevel=user_stacklevel())
    return delta


#: True while a caller that already compared delta with 1/n (run_learner) runs the work below it.
_DELTA_CHECKED: contextvars.ContextVar[bool] = contextvars.ContextVar("dpcore_delta_checked", default=False)


@contextlib.contextmanager
def delta_checked() -> Iterator[None]:
    """Inside it, :func:`delta_is_checked` is True: a caller that warned about delta > 1/n once (``run_learner``)
    keeps the functions it calls (``train``) from saying it again."""
    token = _DELTA_CHECKED.set(True)
    try:
        yield
    finally:
        _DELTA_CHECKED.reset(token)


def delta_is_checked() -> bool:
    """Whether a caller has already compared delta with 1/n (see :func:`delta_checked`)."""
    return _DELTA_CHECKED.get()


def check_positive(value, name: str, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float after checking it is > 0 (and finite unless allowed)."""
    v = _as_real(value, name)
    if v <= 0:
        raise DPValueError(f"{name} must be > 0, got {v!r}")
    if math.isinf(v) and not allow_inf:
        raise DPValueError(f"{name} must be finite, got {v!r}")
    return v


def check_nonnegative(value, name: str) -> float:
    """Return ``value`` as a float after checking it is finite and >= 0."""
    v = _as_real(value, name)
    if v < 0 or math.isinf(v):
        raise DPValueError(f"{name} must be a finite number >= 0, got {v!r}")
    return v


def check_int(value, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an int after checking its type and range."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise DPTypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    v = int(value)
    if minimum is not None and v < minimum:
        raise DPValueError(f"{name} must be >= {minimum}, got {v}")
    if maximum is not None and v > maximum:
        raise DPValueError(f"{name} must be <= {maximum}, got {v}")
    return v


def check_probability(value, name: str) -> float:
    """Return ``value`` after checking ``0 <= value <= 1``."""
    v = _as_real(value, name)
    if not 0.0 <= v <= 1.0:
        raise DPValueError(f"{name} must be in [0, 1], got {v!r}")
    return v


def check_fraction(value, name: str) -> float:
    """Return ``value`` after checking ``0 < value <= 1`` (a sampling rate or a client fraction)."""
    v = _as_real(value, name)
    if not 0.0 < v <= 1.0:
        raise DPValueError(f"{name} must be in (0, 1], got {v!r}")
    return v


def check_array(X, name: str = "X", *, ndim: int | None = None, allow_empty: bool = False) -> np.ndarray:
    """Return ``X`` as a float64 array, rejecting NaN/inf and (unless allowed) empty input. A DataFrame's refusals
    name its columns (those of text, those with a cell missing), an array's the columns by number."""
    try:
        arr = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DPTypeError(f"{name} must be numeric, could not convert: {exc}{_text_columns(X)}") from None
    if ndim is not None and arr.ndim != ndim:
        raise DPValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if arr.size == 0 and not allow_empty:
        raise DPValueError(f"{name} is empty; it needs at least one value")
    if not np.all(np.isfinite(arr)):
        raise DPValueError(f"{name} contains NaN or infinite values{_bad_columns(X, arr)}; remove or impute them "
                           "first (with values fixed in advance, not read from the rows)")
    return arr


def _column_names(X, idx) -> str:
    """Columns ``idx`` of ``X`` by name (a DataFrame's) or by number, the first five."""
    names = list(X.columns) if hasattr(X, "columns") else None
    shown = [repr(names[i]) if names is not None else str(i) for i in idx[:5]]
    return ", ".join(shown) + (f" and {len(idx) - 5} more" if len(idx) > 5 else "")


def _text_columns(X) -> str:
    """Where a DataFrame's columns hold text: which, and how to make them numbers."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(X, "columns"):
        return ""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype  # X has dtypes: pandas is loaded

    idx = [i for i, t in enumerate(dtypes) if not (is_numeric_dtype(t) or is_bool_dtype(t))]
    if not idx:
        return ""
    return (f". Column(s) {_column_names(X, idx)} are not numbers: encode each as one 0/1 column per category, "
            "from a list of categories declared in advance (not read from the rows), or give the DataFrame to "
            "run_learner(..., label=..., categories={column: [values]}), which does")


def _bad_columns(X, arr: np.ndarray) -> str:
    """`` in column(s) ...`` of a 2-D input: which columns hold a NaN or an infinity, and in how many rows."""
    if arr.ndim != 2:
        return ""
    bad = ~np.isfinite(arr)
    idx = np.flatnonzero(bad.any(axis=0)).tolist()
    return f" in column(s) {_column_names(X, idx)} ({int(bad.any(axis=1).sum())} of {arr.shape[0]} rows)"


def refuse_unknown_fields(cls, given) -> None:
    """Refuse, by name, keyword arguments a config dataclass ``cls`` has no field for, with the nearest field names
    (``TrainConfig(epsilon=1)``: its field is ``target_epsilon``); Python's own TypeError named the argument but not
    the one meant. Called from the dataclass's ``__new__``, before its generated ``__init__``."""
    import dataclasses
    import difflib

    names = [f.name for f in dataclasses.fields(cls) if f.init]
    unknown = [k for k in given if k not in names]
    if not unknown:
        return
    hints = {"epsilon": "target_epsilon", "sigma": "noise_multiplier", "lr": "learning_rate", "C": "clip_norm"}
    said = []
    for k in unknown:
        near = [hints[k]] if hints.get(k) in names else difflib.get_close_matches(k, names, n=2, cutoff=0.6)
        said.append(f"{k!r}" + (f" (did you mean {' or '.join(map(repr, near))}?)" if near else ""))
    raise DPValueError(f"{cls.__name__} has no parameter {', '.join(said)}; its parameters: {', '.join(names)}")


def check_device(device, name: str = "device"):
    """Return ``device`` (a name such as ``"cpu"``, ``"cuda:1"``, a ``torch.device`` or a GPU index) as a
    ``torch.device`` this machine has, or say why not: a name torch does not know, or a GPU torch cannot reach
    here (a CPU-only build of torch, no GPU visible, an index past the last one).

    Examples
    --------
    >>> check_device("cpu")
    device(type='cpu')
    """
    import torch  # here, not at the top: validation is imported by commands that never load torch

    if isinstance(device, bool) or not isinstance(device, (str, torch.device, int)):
        raise DPTypeError(f"{name} must be a device name such as 'cpu' or 'cuda', a torch.device or a GPU index, "
                          f"got {type(device).__name__} {device!r}")
    try:
        dev = torch.device("cuda", device) if isinstance(device, int) else torch.device(device)  # an index: a GPU's
    except (RuntimeError, ValueError):
        raise DPValueError(f"{name}={device!r} is not a device torch knows; use 'cpu', or 'cuda' / 'cuda:N' for a "
                           "GPU") from None
    if dev.type == "cpu":
        return dev
    if dev.type == "meta":  # shapes without values: nothing can be trained or noised there
        raise DPValueError(f"{name}={device!r} cannot be used: torch's meta device holds shapes, not values, so "
                           f"nothing can be trained there; use {name}='cpu' (or a GPU's name)")
    backend = getattr(torch, dev.type, None)
    if dev.type == "cuda" and torch.version.cuda is None and torch.version.hip is None:
        why = f"this torch ({torch.__version__}) is a CPU-only build"
    elif backend is None or not hasattr(backend, "is_available") or not backend.is_available():
        why = f"torch sees no {dev.type} device on this machine"
    elif dev.index is not None and hasattr(backend, "device_count") and dev.index >= backend.device_count():
        why = f"torch sees {backend.device_count()} {dev.type} device(s), numbered from 0"
    else:
        return dev
    raise DPValueError(f"{name}={device!r} cannot be used: {why}; use {name}='cpu' (or install a torch build for "
                       "your GPU)")


def check_bounds(bounds, n_features: int | None = None, name: str = "bounds") -> tuple[np.ndarray, np.ndarray]:
    """Return ``(lower, upper)`` float arrays after checking ``lower < upper`` everywhere.

    ``bounds`` is a pair ``(lower, upper)`` of scalars or per-feature sequences.
    Scalars are broadcast to ``n_features`` when it is given.
    """
    if bounds is None:
        raise DPValueError(f"{name} must be given as (lower, upper); inferring them from private data leaks privacy")
    try:
        lower, upper = bounds
    except (TypeError, ValueError):
        raise DPTypeError(f"{name} must be a pair (lower, upper) of numbers, or of one value per feature "
                          f"(([low_1, low_2, ...], [high_1, high_2, ...])), got {bounds!r}") from None
    lo = np.atleast_1d(np.asarray(lower, dtype=float))
    hi = np.atleast_1d(np.asarray(upper, dtype=float))
    if n_features is not None:
        if lo.size == 1:
            lo = np.full(n_features, lo.item())
        if hi.size == 1:
            hi = np.full(n_features, hi.item())
        if lo.size != n_features or hi.size != n_features:
            raise DPValueError(
                f"{name} must have one (lower, upper) per feature: expected {n_features}, got {lo.size} and {hi.size}"
            )
    if lo.shape != hi.shape:
        raise DPValueError(f"{name}: lower and upper have different shapes {lo.shape} and {hi.shape}")
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise DPValueError(f"{name} must be finite, got lower={lo} upper={hi}")
    if np.any(lo >= hi):
        j = int(np.argmax(lo >= hi))
        pairs = (" (a pair of sequences reads as ([low_1, low_2, ...], [high_1, high_2, ...]), not as one (low, "
                 "high) per feature)" if lo.size == 2 and np.all(np.r_[lo[0], hi[0]] < np.r_[lo[1], hi[1]]) else "")
        raise DPValueError(f"{name}: lower must be < upper for every feature; feature {j} has {lo[j]} >= {hi[j]}"
                           + pairs)
    return lo, hi


def within_bounds(X: np.ndarray, lower, upper) -> bool:
    """Whether every value of a 2-D ``X`` lies in ``[lower, upper]`` (bounds per column or scalars), from its
    column minima and maxima (no temporary as large as ``X``). False for a NaN, and for any other shape.

    >>> within_bounds(np.array([[0.0, 2.0]]), 0.0, 2.0), within_bounds(np.array([[0.0, np.nan]]), 0.0, 2.0)
    (True, False)
    """
    if not isinstance(X, np.ndarray) or X.ndim != 2 or X.shape[0] == 0 or X.dtype.kind not in "fiu":
        return False
    return bool(np.all(X.min(axis=0) >= lower) and np.all(X.max(axis=0) <= upper))


def clip_to_bounds(
    X: np.ndarray, lower: np.ndarray, upper: np.ndarray, name: str = "X", *, stacklevel: int | None = None
) -> np.ndarray:
    """Clip ``X`` to ``[lower, upper]``, warning (never silently) when anything was clipped; the warning names
    ``stacklevel``'s line, by default the caller's own outside dpcore."""
    if within_bounds(X, lower, upper):  # the usual case: a copy, without clipping and comparing every value
        return np.array(X, dtype=np.result_type(X, lower, upper))
    clipped = np.clip(X, lower, upper)
    n_out = int(np.count_nonzero(clipped != X))
    if n_out:
        warnings.warn(
            f"{n_out} value(s) of {name} lay outside the declared bounds and were clipped to them; "
            "widen the bounds if that is not intended",
            DPCoreWarning,
            stacklevel=user_stacklevel() if stacklevel is None else stacklevel,
        )
    return clipped


def _exact_norm_above(row: np.ndarray, bound: float, ord: int) -> bool:
    """Whether the exact ``ord``-norm of the doubles in ``row`` is above ``bound``: every double is an integer m
    times 2**e (53-bit m), so the sum of their squares (or absolute values) is an integer times a power of two, added
    exactly in Python's integers."""
    values = np.append(np.abs(row[row != 0]), bound)
    mantissa, exponent = np.frexp(values)
    ints = (mantissa * 2.0**53).astype(np.int64).tolist()
    powers = ((exponent.astype(np.int64) - 53) * ord).tolist()
    low = min(powers)
    terms = [(m ** ord) << (p - low) for m, p in zip(ints, powers)]
    return sum(terms[:-1]) > terms[-1]


def clip_to_norm(X, max_norm: float, *, ord: int = 2, name: str = "max_norm", return_count: bool = False):
    """Scale every row of ``X`` whose ``ord``-norm exceeds ``max_norm`` down onto that sphere.

    Rows already inside the ball (zero rows included) are returned unchanged, so a
    row's image depends on that row alone. A row is clipped exactly when its norm is
    larger than ``max_norm`` (judged exactly where the computed norm is too close to tell); the division is done
    only for those rows, whose norm is then positive, so no stabilising constant is needed. A clipped row lands a
    few units of 2**-52 times d inside the sphere, so that its exact norm is never above ``max_norm``. Used for the
    per-record bounds behind every sensitivity in :mod:`dpcore.models` (L2 for DP-ERM and SSP, L1 for DPLloyd and
    the functional mechanism) and for per-example clipping.

    Parameters
    ----------
    X : array-like of shape (n_rows, n_features)
    max_norm : float > 0
    ord : {1, 2}
        The norm bounded: 2 (Euclidean) or 1.
    name : str
        Name of the bound in error messages (``data_norm``, ``l1_norm`` ...).
    return_count : bool
        Also return how many rows were scaled down.

    Returns
    -------
    ndarray, or (ndarray, int) with ``return_count``

    References
    ----------
    Abadi et al. Deep learning with differential privacy. CCS 2016 (per-example clipping);
    IBM diffprivlib, ``validation.clip_to_norm``.

    Examples
    --------
    >>> clip_to_norm([[6.0, 8.0], [0.3, 0.4], [0.0, 0.0]], 5.0).round(12).tolist()  # 3 and 4 less 1e-14 relative
    [[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]]
    >>> rows, n_clipped = clip_to_norm([[2.0, -2.0], [0.5, 0.0]], 2.0, ord=1, return_count=True)
    >>> rows.round(12).tolist(), n_clipped
    ([[1.0, -1.0], [0.5, 0.0]], 1)
    """
    max_norm = check_positive(max_norm, name)
    if ord not in (1, 2):
        raise DPValueError(f"ord must be 1 or 2 (the L1 or L2 norm), got {ord!r}")
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise DPValueError(f"rows to clip must form a 2-D array (n_rows, n_features), got shape {X.shape}")
    norms = np.linalg.norm(X, ord=ord, axis=1)
    # A norm computed in floating point is within d + 2 units of 2**-53 of the exact one (relative), and so is a row
    # scaled by max_norm / that norm: scaled as it stood, about half the clipped rows had an exact norm a few units
    # above max_norm (6e-16 relative), the bound every sensitivity behind them assumes. Rows clearly over are scaled
    # to a margin inside the sphere; rows within the margin of it are judged by their exact norm
    margin = (X.shape[1] + 8) * 2.0**-52
    over = norms > max_norm * (1 + margin)
    near = ~over & (norms >= max_norm * (1 - margin))
    for i in np.flatnonzero(near):
        over[i] = _exact_norm_above(X[i], max_norm, ord)
    scale = np.ones_like(norms)
    scale[over] = max_norm / norms[over] * (1 - 4 * margin)
    out = X * scale[:, None]
    return (out, int(np.count_nonzero(over))) if return_count else out


def warn_inferred_bounds(what: str = "bounds") -> None:
    """Warn that a bound was computed from the private data itself (diffprivlib does the same)."""
    warnings.warn(
        f"{what} were inferred from the private data: this leaks privacy beyond the stated epsilon. "
        f"Declare {what} from domain knowledge to get the guarantee.",
        PrivacyLeakWarning,
        stacklevel=user_stacklevel(),
    )


def _reads_as_numbers(column: np.ndarray) -> bool:
    """False where a cell is text that is not a number (a cell of another type is left to the caller's checks)."""
    try:
        np.asarray(column, dtype=float)
    except ValueError:
        return False
    except TypeError:
        return True
    return True


def refuse_text_columns(X) -> None:
    """A DataFrame's (or a 2-D array's) columns that hold text are named (scikit-learn's message names a cell:
    "could not convert string to float: 'b'"), with how to encode them without reading the categories from the
    private rows."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(X, "columns"):
        if isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype.kind in "USO":  # text, or numbers written out
            cols = [j for j in range(X.shape[1]) if not _reads_as_numbers(X[:, j])]
            if not cols:
                return
            raise DPValueError(
                f"X's column(s) {', '.join(map(str, cols[:5]))}{' ...' if len(cols) > 5 else ''} (counted from 0) "
                "hold text, which no model here reads: encode them as numbers first (a category as 0/1 columns, "
                "with the categories listed from what the column means, not read from the rows), or leave them out")
        return
    import pandas as pd

    text = [str(c) for c, t in zip(X.columns, dtypes)
            if not (pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t))
            and X[c].map(lambda v: isinstance(v, str)).any()]
    if text:
        raise DPValueError(
            f"X's column(s) {', '.join(map(repr, text[:5]))}{' ...' if len(text) > 5 else ''} hold text, which no "
            "model here reads: encode them as numbers first (a category as 0/1 columns, e.g. "
            "OneHotEncoder(categories=[[...]]) with the categories listed from what the column means, not read from "
            "the rows, in a ColumnTransformer), or leave them out")
