"""The bounded estimators (SSP, the functional mechanism, k-means) take declared bounds by column name, as the
BoundedScaler and run_learner do: a DataFrame's columns, or x0, x1, ... for an array. A list of (low, high) pairs
is refused with the named form offered (with two features it reads as (lower, upper), so pairs by position can be
taken the wrong way round)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.exceptions import DPTypeError, DPValueError
from dpcore.models import DPLloydKMeans, FunctionalMechanismRegressor, SSPRegressor
from dpcore.validation import check_bounds


def _frame(n=300):
    g = np.random.default_rng(0)
    df = pd.DataFrame({"age": g.uniform(20, 80, n), "income": g.uniform(0, 100, n), "kids": g.integers(0, 4, n)})
    return df, 0.1 * df.age - 0.05 * df.income + g.normal(size=n)


BY_POSITION = ([20, 0, 0], [80, 100, 3])


@pytest.mark.parametrize("make", [lambda b: SSPRegressor(epsilon=1.0, bounds_X=b, bounds_y=(-10, 10), random_state=0),
                                  lambda b: FunctionalMechanismRegressor(epsilon=1.0, bounds_X=b, bounds_y=(-10, 10),
                                                                         random_state=0)],
                         ids=["ssp", "functional-mechanism"])
def test_a_regressor_takes_bounds_by_column_name_as_by_position(make):
    X, y = _frame()
    expected = make(BY_POSITION).fit(X, y).coef_
    by_name = make({"income": (0, 100), "age": (20, 80), "kids": (0, 3)}).fit(X, y)
    assert np.array_equal(by_name.coef_, expected)
    assert np.array_equal(make("age=20:80, income=0:100, *=0:3").fit(X, y).coef_, expected)
    assert np.array_equal(make({"x0": (20, 80), "x1": (0, 100), "x2": (0, 3)}).fit(X.to_numpy(), y).coef_, expected)


def test_kmeans_takes_bounds_by_column_name():
    X, _ = _frame()
    by_name = DPLloydKMeans(n_clusters=2, epsilon=1.0, bounds={"*": (0, 100), "kids": (0, 3)}, random_state=0).fit(X)
    by_position = DPLloydKMeans(n_clusters=2, epsilon=1.0, bounds=([0, 0, 0], [100, 100, 3]), random_state=0).fit(X)
    assert np.array_equal(by_name.cluster_centers_, by_position.cluster_centers_)


def test_bounds_by_name_that_miss_or_invent_a_column_are_refused_by_name():
    X, y = _frame()
    with pytest.raises(DPValueError, match=r"bounds_X give no range for column\(s\) 'kids'.*'\*'"):
        SSPRegressor(bounds_X={"age": (20, 80), "income": (0, 100)}, bounds_y=(-10, 10)).fit(X, y)
    with pytest.raises(DPValueError, match=r"bounds_X name column\(s\) 'salary' that X does not have"):
        SSPRegressor(bounds_X={"salary": (0, 1), "*": (0, 100)}, bounds_y=(-10, 10)).fit(X, y)


def test_pairs_by_position_are_refused_with_the_named_form_offered():
    X, y = _frame()
    with pytest.raises(DPTypeError, match=r"must be a pair \(lower, upper\).*\{column: \(low, high\)\}"):
        SSPRegressor(bounds_X=[(20, 80), (0, 100), (0, 3)], bounds_y=(-10, 10)).fit(X, y)


def test_two_pairs_read_as_lower_and_upper_say_so_when_that_reading_fails():
    # [(0, 10), (-5, 5)] meant per feature reads as lower (0, 10), upper (-5, 5)
    with pytest.raises(DPValueError, match=r"feature 0 has 0.0 >= -5.0 \(a pair of sequences reads as \(\[low_1"):
        check_bounds([(0, 10), (-5, 5)], 2)
    with pytest.raises(DPValueError, match=r"feature 1 has 2.0 >= 1.0$"):  # not a pair of pairs: no such note
        check_bounds(([0, 2], [1, 1]))

