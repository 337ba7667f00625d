"""A scikit-learn transformer that scales by declared bounds: the private-data counterpart of MinMaxScaler."""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..exceptions import DPValueError
from ..types import ArrayLike
from .transforms import _bounds_arrays, _clip_counting_rows


class BoundedScaler(TransformerMixin, BaseEstimator):
    """Map every feature from its declared ``bounds`` onto ``feature_range``, clipping outliers with a warning.

    Put it where a ``StandardScaler`` or ``MinMaxScaler`` would go in a Pipeline before a private estimator
    (:class:`~dpcore.models.PrivateERMClassifier` ...). Those scalers *fit* on the training rows: their mean,
    variance, minimum and maximum are statistics of the private data that no ε accounts for, and the estimator's
    sensitivity argument assumes the scaled rows lie in bounds chosen without looking at them. This one reads
    nothing from the rows but their width (and a DataFrame's column names): ``fit`` costs no privacy, and the
    scaled rows are guaranteed to lie in ``feature_range``. dpcore cannot see the steps before an estimator in a
    Pipeline, so it cannot warn about a StandardScaler there; this note is the warning.

    Parameters
    ----------
    bounds : mapping, text or pair
        Declared ranges, in any of the forms of :data:`dpcore.datasets.BOUNDS_FORMS`: ``(low, high)`` with
        numbers or one number per feature, ``{column: (low, high)}`` (``"*"`` for every other column) or
        ``"age=17:90, *=0:1"``. For an array, columns are named ``x0, x1, ...``.
    feature_range : (float, float)
        Where the bounds are mapped: ``(-1, 1)`` by default (rows then have L2 norm at most sqrt(d)).
    clip : bool
        Clip values outside the bounds (with a warning saying how many rows moved). ``False`` refuses them.

    Attributes
    ----------
    lower_, upper_ : ndarray of shape (n_features,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input only)

    Examples
    --------
    >>> BoundedScaler(bounds=(0, 10)).fit_transform([[0.0, 5.0], [10.0, 2.5]]).tolist()
    [[-1.0, 0.0], [1.0, -0.5]]
    """

    def __init__(self, bounds=None, *, feature_range: tuple[float, float] = (-1.0, 1.0), clip: bool = True) -> None:
        self.bounds = bounds
        self.feature_range = feature_range
        self.clip = clip

    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> "BoundedScaler":
        """Check the bounds against the columns of ``X``; no statistic of its values is kept (they are only
        checked to be numbers, as scikit-learn's validation does)."""
        from ..models._utils import validate_X

        if self.bounds is None:
            raise DPValueError("BoundedScaler needs bounds=: the range each feature can take, declared without "
                               "looking at the data (bounds read from private rows leak privacy)")
        lo, hi = (float(v) for v in self.feature_range)
        if not lo < hi:
            raise DPValueError(f"feature_range must be (low, high) with low < high, got {self.feature_range!r}")
        A = validate_X(self, X, reset=True)  # sets n_features_in_ (and feature_names_in_ for a DataFrame)
        names = getattr(self, "feature_names_in_", None)
        self.lower_, self.upper_ = _bounds_arrays(A, self.bounds, None if names is None else list(names))
        return self

    def transform(self, X: ArrayLike) -> np.ndarray:
        """Scale ``X`` by the declared bounds onto ``feature_range``."""
        from ..models._utils import check_fitted_X

        A = check_fitted_X(self, X, "lower_")
        if self.clip:
            A = _clip_counting_rows(A, self.lower_, self.upper_)
        elif np.any((A < self.lower_) | (A > self.upper_)):
            raise DPValueError("X has values outside the declared bounds and clip=False; widen the bounds or clip")
        lo, hi = (float(v) for v in self.feature_range)
        return lo + (hi - lo) * (A - self.lower_) / (self.upper_ - self.lower_)

    def inverse_transform(self, X: ArrayLike) -> np.ndarray:
        """Map scaled rows back to the bounds' units."""
        check_is_fitted(self, "lower_")
        lo, hi = (float(v) for v in self.feature_range)
        return self.lower_ + (np.asarray(X, dtype=float) - lo) * (self.upper_ - self.lower_) / (hi - lo)

    def get_feature_names_out(self, input_features: ArrayLike | None = None) -> np.ndarray:
        check_is_fitted(self, "lower_")
        if input_features is not None:
            return np.asarray(input_features, dtype=object)
        names = getattr(self, "feature_names_in_", None)
        return names if names is not None else np.asarray([f"x{j}" for j in range(self.n_features_in_)],
                                                          dtype=object)
