import itertools

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from dpcore.exceptions import DPCoreWarning, DPValueError, PrivacyLeakWarning
from dpcore.models import BoundedLinearRegression, FunctionalMechanismRegressor, SSPRegressor, fm_sensitivities
from dpcore.models._utils import box_to_unit
from dpcore.models.linear import fm_statistics, loose_fm_sensitivities, psd_repair

rng0 = np.random.default_rng(0)
X = rng0.uniform(0, 10, size=(400, 2))
Y = 3 + 0.5 * X[:, 0] - 0.2 * X[:, 1] + 0.1 * rng0.normal(size=400)
BX, BY = (0.0, 10.0), (-5.0, 15.0)


@pytest.mark.parametrize("make", [
    lambda: FunctionalMechanismRegressor(epsilon=1.0, bounds_X=BX, bounds_y=BY, random_state=0),
    lambda: BoundedLinearRegression(bounds_X=BX, bounds_y=BY),
    lambda: SSPRegressor(epsilon=1.0, delta=1e-5, bounds_X=BX, bounds_y=BY, random_state=0),
])
def test_sklearn_conventions(make):
    est = make()
    params = est.get_params()
    assert clone(est).get_params() == params
    with pytest.raises(NotFittedError):
        est.predict(X)
    assert est.fit(X, Y) is est
    assert est.get_params() == params
    assert est.predict(X).shape == (400,)


def test_nonprivate_recovers_coefficients_in_original_units():
    m = BoundedLinearRegression(bounds_X=BX, bounds_y=BY).fit(X, Y)
    assert m.coef_ == pytest.approx([0.5, -0.2], abs=0.01)
    assert m.intercept_ == pytest.approx(3.0, abs=0.05)


def test_sensitivity_bounds_hold_by_brute_force():
    # replace one record by another anywhere in the box (grid over {-1, 0, 1}, where |x_j^2 - x'_j^2| peaks)
    d = 2
    dq, dl = fm_sensitivities(d)
    assert (dq, dl) == (8.0, 6.0)
    sq, sl = loose_fm_sensitivities(d)
    assert dq <= sq and dl <= sl / 2
    base_X = np.zeros((3, d))
    base_y = np.zeros(3)
    pts = [np.array(p, float) for p in itertools.product([-1, 0, 1], repeat=d)]
    worst_q = worst_l = 0.0
    for a, b in itertools.product(pts, repeat=2):
        for ya, yb in itertools.product([-1.0, 0.0, 1.0], repeat=2):
            Xa, Xb = base_X.copy(), base_X.copy()
            Xa[0], Xb[0] = a, b
            ya_, yb_ = base_y.copy(), base_y.copy()
            ya_[0], yb_[0] = ya, yb
            qa, va = fm_statistics(Xa, ya_)
            qb, vb = fm_statistics(Xb, yb_)
            worst_q = max(worst_q, np.abs(qa - qb).sum())
            worst_l = max(worst_l, np.abs(va - vb).sum())
    assert worst_q <= dq + 1e-12 and worst_l <= dl + 1e-12
    assert worst_l == dl  # the linear bound is attained


def test_l1_row_bound_sensitivities_hold_by_brute_force():
    d, R = 3, 1.5
    dq, dl = fm_sensitivities(d, l1_norm=R)
    assert (dq, dl) == (min(d * (d + 2), R * R + 3 * R), 2 + 2 * R)
    grid = [np.array(p) for p in itertools.product([-1, -0.5, 0, 0.5, 1], repeat=d) if np.abs(p).sum() <= R]
    worst_q = worst_l = 0.0
    zeros = np.zeros((2, d))
    for a in grid:
        for b in grid:
            for ya, yb in ((1.0, -1.0), (1.0, 1.0)):
                Xa, Xb = zeros.copy(), zeros.copy()
                Xa[0], Xb[0] = a, b
                qa, va = fm_statistics(Xa, np.array([ya, 0.0]))
                qb, vb = fm_statistics(Xb, np.array([yb, 0.0]))
                worst_q = max(worst_q, np.abs(qa - qb).sum())
                worst_l = max(worst_l, np.abs(va - vb).sum())
    assert worst_q <= dq + 1e-12 and worst_l <= dl + 1e-12
    assert worst_l == pytest.approx(dl)  # attained: y = 1, x = R e_1 vs y = -1, x = -R e_1 ... within the grid
    m = FunctionalMechanismRegressor(epsilon=1.0, bounds_X=BX, bounds_y=BY, l1_norm=0.5, random_state=0).fit(X, Y)
    assert m.sensitivities_["quadratic"] == pytest.approx(0.25 + 1.5)
    assert m.n_rows_clipped_ > 0


def test_noise_ridge_is_public_function_of_scale():
    m = FunctionalMechanismRegressor(epsilon=1.0, bounds_X=BX, bounds_y=BY, ridge=0.0, noise_ridge=2.0,
                                     random_state=0).fit(X, Y)
    bq = m.noise_scales_["quadratic"]
    assert m._ridge_absolute(400) == pytest.approx(2.0 * 2 * bq * np.sqrt(2 * 2))


def test_asymmetric_bounds_case_diffprivlib_gets_wrong():
    # diffprivlib 0.6.6 uses max(|lo|, |lo|)^2 for the x_j^2 coefficient (its GitHub issue
    # IBM/differential-privacy-library#105): with bounds [1, 10] it would add noise for a change of 1, while
    # replacing x = 1 by x = 10 moves sum x^2 by 99.
    lo, hi = 1.0, 10.0
    assert max(abs(lo), abs(lo)) ** 2 < hi**2 - lo**2
    # here every record is first mapped into [-1, 1] by the declared bounds, so the released statistics
    # move by at most the declared sensitivity for any replacement inside [lo, hi]
    Xa = np.full((5, 1), lo)
    Xb = Xa.copy()
    Xb[0] = hi
    y = np.zeros(5)
    qa, va = fm_statistics(box_to_unit(Xa, np.array([lo]), np.array([hi])), y)
    qb, vb = fm_statistics(box_to_unit(Xb, np.array([lo]), np.array([hi])), y)
    dq, _ = fm_sensitivities(1)
    assert np.abs(qa - qb).sum() == pytest.approx(2.0)  # M_01 moves 2, M_11 moves 0
    assert np.abs(qa - qb).sum() <= dq


def test_laplace_scales_and_budget_split():
    m = FunctionalMechanismRegressor(epsilon=2.0, bounds_X=BX, bounds_y=BY, quadratic_fraction=0.6,
                                     intercept_fraction=0.25, l1_norm=None, random_state=0).fit(X, Y)
    split = m.epsilon_split_
    assert split["intercept"] == pytest.approx(0.5)
    assert split["quadratic"] == pytest.approx(0.6 * 1.5)
    assert split["linear"] == pytest.approx(0.4 * 1.5)
    assert sum(split.values()) == pytest.approx(2.0) == m.epsilon_spent_
    d = 2
    assert m.noise_scales_["quadratic"] == pytest.approx(d * (d + 2) / 0.9)
    assert m.noise_scales_["linear"] == pytest.approx(2 * d / 0.6)
    assert m.noise_scales_["intercept"] == pytest.approx(2 / 0.5)
    m2 = FunctionalMechanismRegressor(epsilon=2.0, bounds_X=BX, bounds_y=BY, quadratic_fraction=0.5,
                                      intercept_fraction=0.0, l1_norm=None, random_state=0).fit(X, Y)
    assert m2.noise_scales_["linear"] == pytest.approx(2 * (d + 1) / 1.0)


def test_psd_repair_makes_objective_bounded_below():
    M = np.array([[1.0, 3.0], [3.0, 1.0]])  # eigenvalues 4 and -2
    R = psd_repair(M)
    assert np.linalg.eigvalsh(R).min() >= -1e-12
    assert np.allclose(R, R.T)


def test_predictions_clipped_to_label_bounds_and_accuracy_at_large_epsilon():
    m = FunctionalMechanismRegressor(epsilon=0.01, bounds_X=BX, bounds_y=BY, random_state=0).fit(X, Y)
    p = m.predict(X)
    assert p.min() >= -5 and p.max() <= 15
    Xb = rng0.uniform(0, 10, size=(20000, 2))
    Yb = 3 + 0.5 * Xb[:, 0] - 0.2 * Xb[:, 1]
    good = FunctionalMechanismRegressor(epsilon=50.0, bounds_X=BX, bounds_y=BY, ridge=0.0, random_state=0)
    assert good.fit(Xb, Yb).score(Xb, Yb) > 0.9


def test_bad_inputs_and_warnings():
    with pytest.raises(DPValueError, match="epsilon"):
        FunctionalMechanismRegressor(epsilon=0, bounds_X=BX, bounds_y=BY).fit(X, Y)
    with pytest.raises(DPValueError, match="quadratic_fraction"):
        FunctionalMechanismRegressor(epsilon=1, bounds_X=BX, bounds_y=BY, quadratic_fraction=1.0).fit(X, Y)
    with pytest.warns(DPCoreWarning, match="clipped"):
        FunctionalMechanismRegressor(epsilon=1, bounds_X=(0, 5), bounds_y=BY, random_state=0).fit(X, Y)
    with pytest.warns(PrivacyLeakWarning):
        FunctionalMechanismRegressor(epsilon=1, random_state=0).fit(X, Y)


def test_predict_applies_the_fitted_l1_map():
    m = FunctionalMechanismRegressor(epsilon=5.0, bounds_X=BX, bounds_y=(-50, 50), l1_norm=0.8,
                                     random_state=0).fit(X, Y)
    inside = np.array([[5.0, 5.5], [4.5, 6.0]])  # unit coordinates (0, 0.1) and (-0.1, 0.2): L1 <= 0.8
    assert np.allclose(m.predict(inside), inside @ m.coef_ + m.intercept_)
    outside = np.array([[10.0, 10.0]])  # unit (1, 1), L1 = 2: scaled to (0.4, 0.4) before the linear map
    scaled = np.array([[7.0, 7.0]])
    assert np.allclose(m.predict(outside), m.predict(scaled))


def test_functional_mechanism_in_secure_mode_at_a_tiny_epsilon_solves_instead_of_stopping_on_a_singular_matrix():
    # At epsilon 1e-40 the secure grid's rounding multiplies the Laplace scale by about 1e33, far above the noise
    # ridge computed from the stated scale: A = PSD(C) + ridge I was singular in double precision and about 4 fits in
    # 10 stopped with numpy's LinAlgError. The ridge floor now follows the repaired matrix (post-processing).
    from dpcore.rng import secure_noise

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (100, 3))
    y = X @ [1.0, 2.0, 3.0]
    with secure_noise():
        for _ in range(12):
            fm = FunctionalMechanismRegressor(epsilon=1e-40, bounds_X=(0, 1), bounds_y=(0, 6)).fit(X, y)
            assert np.all(np.isfinite(fm.coef_)) and np.isfinite(fm.intercept_)
            assert np.all((fm.predict(X) >= 0) & (fm.predict(X) <= 6))


@pytest.mark.parametrize("cls", [SSPRegressor, FunctionalMechanismRegressor])
def test_a_regressor_given_text_targets_names_them(cls):
    # it was numpy's "could not convert string to float: np.str_('a')"
    X = np.random.default_rng(0).uniform(-1, 1, size=(50, 2))
    with pytest.raises(DPValueError, match=r"y holds '(yes|no)', '(yes|no)' \.\.\.: a regressor's targets must be "
                                           r"numbers"):
        cls(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(0, 1)).fit(X, np.where(X[:, 0] > 0, "yes", "no"))


def test_functional_mechanism_reports_at_least_the_exact_sum_of_its_shares():
    """The quadratic, linear and intercept releases spend their shares; the epsilon reported is at or above their
    exact sum (basic composition). Added in floating point, epsilon 0.213 with shares 0.7 and 0.1 reported a unit
    in the last place below it."""
    from fractions import Fraction

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (100, 3))
    y = X @ [1.0, 2.0, 3.0] / 6
    for eps, quadratic, intercept in [(0.213, 0.7, 0.1), (0.019, 0.3, 0.2), (2.982, 0.7, 0.2), (1.0, None, 0.0)]:
        fm = FunctionalMechanismRegressor(epsilon=eps, bounds_X=(-1, 1), bounds_y=(-1, 1), random_state=0,
                                          quadratic_fraction=quadratic, intercept_fraction=intercept).fit(X, y)
        parts = fm.epsilon_split_
        assert Fraction(fm.epsilon_spent_) >= sum(Fraction(parts[k]) for k in ("quadratic", "linear", "intercept"))
        assert fm.epsilon_spent_ == pytest.approx(eps, rel=1e-12)


@pytest.mark.parametrize("lo,hi", [(-9.9, -9.89), (-7.7, -7.6)])
def test_rows_scaled_from_their_box_never_leave_the_unit_cube(lo, hi):
    """Every sensitivity of the scaled rows (the functional mechanism's, SSP's sums, DPLloyd's) assumes values in
    [-1, 1]: the affine map computed in floating point put the box's ends at -1.00000000000018 and 1.0000000000000089
    for these narrow boxes far from 0."""
    Z = box_to_unit(np.array([[lo], [hi], [0.5 * (lo + hi)]]), np.array([lo]), np.array([hi]))
    assert np.abs(Z).max() <= 1.0


@pytest.mark.parametrize("l1_norm", [0.3, 0.7, 1.3, 1.7])
def test_functional_mechanism_sensitivities_under_a_row_bound_are_never_below_the_exact_ones(l1_norm):
    """Delta_q = min(d (d + 2), R^2 + 3R) and Delta_l = 2 + 2 min(d, R) from the exact R, rounded up: in floating
    point R^2 + 3R lay below the exact value for R = 0.3, 0.7, 1.7 and 2 + 2R for R = 1.3."""
    from fractions import Fraction

    from dpcore.models.linear import fm_sensitivities

    dq, dl = fm_sensitivities(5, l1_norm=l1_norm)
    r = Fraction(l1_norm)
    assert Fraction(dq) >= r * r + 3 * r and Fraction(dl) >= 2 + 2 * r
