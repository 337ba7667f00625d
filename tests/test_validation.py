"""Validators: messages name the parameter, the value and what to do."""
from __future__ import annotations

import numpy as np
import pytest

from dpcore.exceptions import DPCoreWarning, DPTypeError, DPValueError
from dpcore.rng import as_generator
from dpcore.validation import (
    check_array,
    check_bounds,
    check_delta,
    check_epsilon,
    check_fraction,
    check_int,
    check_positive,
    clip_to_bounds,
    clip_to_norm,
)


def test_epsilon():
    assert check_epsilon(2) == 2.0
    with pytest.raises(DPValueError, match=r"epsilon must be > 0, got -1.0"):
        check_epsilon(-1.0)
    with pytest.raises(DPValueError, match="finite"):
        check_epsilon(float("inf"))
    with pytest.raises(DPTypeError):
        check_epsilon("1")
    with pytest.raises(DPTypeError):
        check_epsilon(True)


def test_delta_and_its_warning():
    assert check_delta(0) == 0.0
    with pytest.raises(DPValueError, match="0 <= delta < 1"):
        check_delta(1.0)
    with pytest.raises(DPValueError, match="Gaussian mechanism needs delta > 0"):
        check_delta(0.0, allow_zero=False)
    with pytest.warns(DPCoreWarning, match=r"larger than 1/n = 0.0002"):
        check_delta(0.01, n=5000)


def test_other_validators():
    assert check_positive(0.5, "clip_norm") == 0.5
    with pytest.raises(DPValueError, match="clip_norm must be > 0, got 0.0"):
        check_positive(0, "clip_norm")
    assert check_int(3.0, "k") == 3
    with pytest.raises(DPTypeError, match="k must be an integer"):
        check_int(2.5, "k")
    with pytest.raises(DPValueError, match="k must be >= 2"):
        check_int(1, "k", minimum=2)
    with pytest.raises(DPValueError, match=r"client_fraction must be in \(0, 1\]"):
        check_fraction(0, "client_fraction")
    with pytest.raises(DPValueError, match="NaN or infinite"):
        check_array([1.0, np.nan])


def test_bounds():
    lo, hi = check_bounds((0, 1), 3)
    assert lo.tolist() == [0, 0, 0] and hi.tolist() == [1, 1, 1]
    with pytest.raises(DPValueError, match="feature 1 has 2.0 >= 1.0"):
        check_bounds(([0, 2], [1, 1]))
    with pytest.raises(DPValueError, match="inferring them from private data leaks privacy"):
        check_bounds(None)
    # a (low, high) pair per feature, the form a data frame's bounds often take, was refused as "must be a pair
    # (lower, upper)" without the per-feature form check_bounds takes
    with pytest.raises(DPTypeError, match=r"or of one value per feature \(\(\[low_1, low_2, \.\.\.\], \[high_1"):
        check_bounds([(0, 1), (0, 1), (0, 1)], 3)
    with pytest.warns(DPCoreWarning, match="1 value"):
        out = clip_to_bounds(np.array([0.5, 2.0]), 0.0, 1.0)
    assert out.tolist() == [0.5, 1.0]


@pytest.mark.parametrize("ord", [1, 2])
def test_clip_to_norm_bounds_every_row_and_leaves_inner_rows_alone(ord):
    rng = np.random.default_rng(ord)
    X = np.vstack([rng.normal(scale=3.0, size=(200, 5)), np.zeros((2, 5)), [[1.0, 0, 0, 0, 0]]])
    bound = 2.0
    norms = np.linalg.norm(X, ord=ord, axis=1)
    out, n_clipped = clip_to_norm(X, bound, ord=ord, return_count=True)
    after = np.linalg.norm(out, ord=ord, axis=1)
    assert after.max() <= bound * (1 + 1e-12)
    inside = norms <= bound
    assert np.array_equal(out[inside], X[inside])  # bit for bit, zero rows included
    assert n_clipped == np.count_nonzero(~inside) > 0
    # clipped rows keep their direction and land on the sphere
    assert np.allclose(after[~inside], bound)
    assert np.allclose(out[~inside] * norms[~inside, None] / bound, X[~inside])
    assert np.array_equal(clip_to_norm(X, bound, ord=ord), out)
    # a row on the sphere itself is not counted as clipped
    assert clip_to_norm([[2.0, 0.0]], 2.0, ord=ord, return_count=True)[1] == 0


@pytest.mark.parametrize("ord", [1, 2])
def test_a_clipped_row_has_an_exact_norm_never_above_the_bound(ord):
    """The bound behind every sensitivity of dpcore.models (Chaudhuri et al. 2011, Wang 2018, Su et al. 2016) holds
    for the exact norm of the doubles released: scaled by max_norm / (the computed norm), about half the clipped rows
    had an L2 norm a few units of 2**-52 above it. Rows already inside the sphere, on it exactly, or a hair over it
    (judged exactly) are handled row by row."""
    from fractions import Fraction

    def exact(row):
        return sum(abs(Fraction(float(v))) ** ord for v in row)

    rng = np.random.default_rng(7)
    X = rng.normal(scale=3.0, size=(400, 6))
    bound = 1.7
    out = clip_to_norm(X, bound, ord=ord)
    assert all(exact(row) <= Fraction(bound) ** ord for row in out)
    unit = X / np.linalg.norm(X, ord=ord, axis=1, keepdims=True)  # on the sphere up to rounding, either side
    over = [exact(row) > 1 for row in unit]
    out, n_clipped = clip_to_norm(unit, 1.0, ord=ord, return_count=True)
    assert any(over) and n_clipped == sum(over)
    assert all(exact(row) <= 1 for row in out)
    assert np.array_equal(out[~np.array(over)], unit[~np.array(over)])


def test_clip_to_norm_rejects_bad_arguments():
    with pytest.raises(DPValueError, match="data_norm must be > 0, got 0.0"):
        clip_to_norm([[1.0]], 0.0, name="data_norm")
    with pytest.raises(DPValueError, match="ord must be 1 or 2"):
        clip_to_norm([[1.0]], 1.0, ord=3)
    with pytest.raises(DPValueError, match="2-D"):
        clip_to_norm([1.0, 2.0], 1.0)


def test_rng():
    g = as_generator(5)
    assert as_generator(g) is g
    assert as_generator(5).random() == as_generator(5).random()
    with pytest.raises(TypeError):
        as_generator("5")


def test_delta_0_is_refused_with_the_alternative_each_gaussian_learner_has():
    from dpcore.federated.fedavg import FedAvgConfig
    from dpcore.models.ssp import SSPRegressor
    from dpcore.pate.pipeline import PateConfig

    with pytest.raises(DPValueError, match="choose the LNMax aggregator"):
        PateConfig(target_epsilon=1.0, delta=0.0)
    assert PateConfig(target_epsilon=1.0, delta=0.0, aggregator="lnmax").delta == 0.0
    with pytest.raises(DPValueError, match="federated learning's noise is Gaussian") as err:
        FedAvgConfig(target_epsilon=1.0, delta=0.0)
    assert "Laplace" not in str(err.value)  # no Laplace choice to point at
    with pytest.raises(DPValueError, match="the functional mechanism"):
        SSPRegressor(epsilon=1.0, delta=0.0).fit(np.zeros((4, 2)), np.zeros(4))


def test_features_within_their_bounds_are_scaled_as_the_formula_says_and_outliers_clipped_with_a_warning():
    """The in-place arithmetic gives -1 + 2 (x - lower) / (upper - lower) to the last bit, clipped or not."""
    import warnings

    from dpcore.datasets.transforms import standardize_with_bounds

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5)) * 3
    lo, hi = np.full(5, -20.0), np.array([20.0, 15.0, 30.0, 12.5, 40.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing lies outside: nothing said
        inside = standardize_with_bounds(X, (lo, hi))
    assert inside.tobytes() == (-1.0 + 2.0 * (X - lo) / (hi - lo)).tobytes()
    narrow = (np.full(5, -2.0), np.full(5, 2.0))
    with pytest.warns(DPCoreWarning, match="outside the declared bounds"):
        clipped = standardize_with_bounds(X, narrow)
    assert clipped.tobytes() == (-1.0 + 2.0 * (np.clip(X, -2.0, 2.0) + 2.0) / 4.0).tobytes()
    X[0, 0] = np.nan  # a NaN is not "within": it takes the clipping path, which counts it
    with pytest.warns(DPCoreWarning, match="1 of 300 rows"):
        standardize_with_bounds(X, (lo, hi))


def test_clipping_values_already_within_bounds_returns_a_copy_and_says_nothing():
    import warnings

    from dpcore.validation import clip_to_bounds, within_bounds

    X = np.array([[0.0, 1.0], [0.5, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = clip_to_bounds(X, np.array([0.0, 0.0]), np.array([1.0, 2.0]))
    assert out is not X and np.array_equal(out, X)
    assert within_bounds(X, 0.0, 2.0) and not within_bounds(X, 0.0, 1.5) and not within_bounds(X[:0], 0.0, 1.0)


def test_a_data_frame_of_text_or_missing_cells_is_refused_by_its_columns_with_what_to_do():
    # "X must be numeric, could not convert: could not convert string to float: 'north'" named neither the column
    # nor what to do with it, and "X contains NaN" not where
    import pandas as pd

    df = pd.DataFrame({"age": [30.0, np.nan, 50.0], "region": ["north", "south", "north"],
                       "plan": pd.Categorical(["a", "b", "a"]), "visits": [1, 2, 3]})
    with pytest.raises(DPTypeError, match=r"X must be numeric.*Column\(s\) 'region', 'plan' are not numbers: encode "
                                          r"each as one 0/1 column per category.*run_learner\(\.\.\., label=\.\.\., "
                                          r"categories="):
        check_array(df, "X", ndim=2)
    with pytest.raises(DPValueError, match=r"X contains NaN or infinite values in column\(s\) 'age' \(1 of 3 rows\); "
                                           "remove or impute them"):
        check_array(df[["age", "visits"]], "X", ndim=2)
    with pytest.raises(DPValueError, match=r"in column\(s\) 0, 2 \(2 of 2 rows\)"):
        check_array(np.array([[np.nan, 1.0, 2.0], [1.0, 1.0, np.inf]]), "X", ndim=2)


def test_a_ledger_or_gaussian_made_at_a_delta_no_data_set_can_use_says_so_where_no_n_is_known():
    """PrivacyLedger(delta=0.5) and the Gaussian mechanisms at delta 0.2 were taken without a word: no n is known
    there, but such a delta is above 1/n for every data set of more than 1/delta records (a guarantee that allows
    publishing whole records); 1e-5 says nothing, and a caller that compared delta with its own n is not told twice."""
    import warnings

    from dpcore.accounting import PrivacyLedger
    from dpcore.exceptions import DPCoreWarning
    from dpcore.mechanisms import Gaussian, SecureGaussian
    from dpcore.validation import delta_checked

    with pytest.warns(DPCoreWarning, match=r"delta=0.5 is above 1/n for every data set of more than 2 records"):
        PrivacyLedger(delta=0.5)
    for mechanism in (Gaussian, SecureGaussian):
        with pytest.warns(DPCoreWarning, match=r"delta=0.2 is above 1/n for every data set of more than 5 records"):
            mechanism(epsilon=1.0, delta=0.2, sensitivity=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DPCoreWarning)
        PrivacyLedger(delta=1e-5)
        Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)
        with delta_checked():
            PrivacyLedger(delta=0.5)
