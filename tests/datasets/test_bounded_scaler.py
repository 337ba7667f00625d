"""BoundedScaler is a well-behaved scikit-learn transformer (it passes scikit-learn's own estimator checks)."""
from __future__ import annotations

import warnings

from sklearn.utils.estimator_checks import parametrize_with_checks

from dpcore.datasets import BoundedScaler


@parametrize_with_checks([BoundedScaler(bounds=(-1e3, 1e3))])
def test_bounded_scaler_passes_scikit_learns_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checks' random values may lie outside the bounds: clipped, with a word
        check(estimator)
