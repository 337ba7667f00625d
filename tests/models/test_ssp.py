"""Gaussian sufficient-statistics perturbation (SSP / AdaSSP): sensitivities, calibration, noise, utility, inputs."""
import itertools
import math

import dp_accounting
import numpy as np
import pytest
from scipy.stats import norm

from dpcore.accounting import epsilon_of_event
from dpcore.exceptions import DPCoreWarning, DPValueError, PrivacyLeakWarning
from dpcore.models import SSPRegressor, ssp_noise_multipliers, ssp_sensitivities
from dpcore.models.linear import psd_repair
from dpcore.models.ssp import SSP_SHARES
from dpcore.validation import clip_to_norm

rng0 = np.random.default_rng(0)
X = rng0.uniform(0, 10, size=(400, 2))
Y = 3 + 0.5 * X[:, 0] - 0.2 * X[:, 1] + 0.1 * rng0.normal(size=400)
BX, BY = (0.0, 10.0), (-5.0, 15.0)


def _delta_of_gaussian(sigma: float, eps: float) -> float:
    """Balle & Wang (2018) Theorem 8 for sensitivity 1, written out here independently."""
    return norm.cdf(0.5 / sigma - eps * sigma) - math.exp(eps) * norm.cdf(-0.5 / sigma - eps * sigma)


def _stats(Xc, yc):
    xtx = Xc.T @ Xc
    return {"n": float(len(Xc)), "sum_x": Xc.sum(0), "sum_y": yc.sum(), "xtx": xtx[np.triu_indices(Xc.shape[1])],
            "xty": Xc.T @ yc, "lambda_min": np.linalg.eigvalsh(xtx)[0]}


@pytest.mark.parametrize("d,R", [(2, 1.0), (3, 0.7)])
def test_sensitivities_hold_when_a_record_is_added(d, R):
    sens = ssp_sensitivities(d, R)
    rng = np.random.default_rng(d)
    base_X = rng.uniform(-1, 1, size=(5, d))
    base_y = rng.uniform(-1, 1, size=5)
    # candidate records: box corners and random points, labels at the extremes
    pts = [np.array(p, float) for p in itertools.product([-1.0, 1.0], repeat=d)] + list(rng.uniform(-1, 1, (30, d)))
    worst = dict.fromkeys(sens, 0.0)
    for x, y in itertools.product(pts, [-1.0, 1.0]):
        # the count and raw sums are taken in the box; X^T X, X^T y, lambda_min after centring at a public c
        # and clipping to norm R (so the added row is clipped too)
        before, after = _stats(base_X, base_y), _stats(np.vstack([base_X, x]), np.r_[base_y, y])
        c = np.full(d, 0.3)
        Xc = clip_to_norm(base_X - c, R)
        xc = clip_to_norm((x - c)[None, :], R)
        yc = np.clip(base_y - 0.1, -1, 1)
        b2, a2 = _stats(Xc, yc), _stats(np.vstack([Xc, xc]), np.r_[yc, np.clip(y - 0.1, -1, 1)])
        for k in ("n", "sum_x", "sum_y"):
            worst[k] = max(worst[k], float(np.linalg.norm(np.atleast_1d(after[k] - before[k]))))
        for k in ("xtx", "xty", "lambda_min"):
            worst[k] = max(worst[k], float(np.linalg.norm(np.atleast_1d(a2[k] - b2[k]))))
    for k, bound in sens.items():
        assert worst[k] <= bound + 1e-12, k
    assert worst["sum_x"] == pytest.approx(sens["sum_x"])  # attained at a corner
    assert worst["xtx"] >= 0.9 * sens["xtx"]  # nearly attained (exactly by a row of norm R along an axis)
    assert worst["xty"] == pytest.approx(sens["xty"])


@pytest.mark.parametrize("eps,delta,adaptive", [(0.5, 1e-5, False), (1.0, 1e-5, True), (4.0, 1e-6, False)])
def test_composition_is_calibrated_to_the_target(eps, delta, adaptive):
    mult = ssp_noise_multipliers(eps, delta, adaptive=adaptive)
    assert ("lambda_min" in mult) == adaptive
    # shares: s_i = s / sqrt(w_i), the w_i summing to 1
    w = {k: v**-2 for k, v in mult.items()}
    sigma = sum(w.values()) ** -0.5
    assert _delta_of_gaussian(sigma, eps) == pytest.approx(delta, rel=1e-4)
    ratios = {k: w[k] / sum(w.values()) for k in w}
    for k in ("n", "sum_x", "sum_y"):
        assert ratios[k] == pytest.approx(SSP_SHARES[k])
    # dp_accounting's PLD on the composed event gives the target epsilon back
    ev = dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(m) for m in mult.values()])
    assert epsilon_of_event(ev, delta=delta, accountant="pld") == pytest.approx(eps, rel=0.01)


def test_opacus_rdp_bound_is_above_and_close():
    from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent

    mult = ssp_noise_multipliers(1.0, 1e-5)
    orders = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
    rdp = sum(np.asarray(compute_rdp(q=1.0, noise_multiplier=m, steps=1, orders=orders)) for m in mult.values())
    eps_opacus, _ = get_privacy_spent(orders=orders, rdp=rdp, delta=1e-5)
    assert 1.0 <= eps_opacus <= 1.4  # RDP is an upper bound on the exact (analytic) composition


def test_fit_records_the_event_and_the_noise_it_used():
    m = SSPRegressor(epsilon=2.0, delta=1e-5, bounds_X=BX, bounds_y=BY, data_norm=0.8, random_state=0).fit(X, Y)
    sens = ssp_sensitivities(2, 0.8)
    assert m.noise_stds_ == pytest.approx({k: m.noise_multipliers_[k] * sens[k] for k in m.noise_multipliers_})
    assert m.neighbouring_ == "add_remove" and m.epsilon_spent_ == 2.0 and m.delta_ == 1e-5
    assert epsilon_of_event(m.dp_event_, delta=1e-5, accountant="pld") == pytest.approx(2.0, rel=0.01)
    assert m.ridge_ == pytest.approx(2 * math.sqrt(2) * m.noise_stds_["xtx"])


def test_released_matrix_noise_has_the_stated_std():
    Xs, ys = X[:50], Y[:50]
    kw = dict(epsilon=1.0, delta=1e-5, bounds_X=BX, bounds_y=BY)
    draws = np.array([SSPRegressor(**kw, random_state=s).fit(Xs, ys).statistics_["xtx"] for s in range(300)])
    # the released matrix is symmetric and its entries scatter with the stated std around a centred X^T X
    assert np.allclose(draws, np.transpose(draws, (0, 2, 1)))
    std = SSPRegressor(**kw, random_state=0).fit(Xs, ys).noise_stds_["xtx"]
    assert draws[:, 0, 1].std() == pytest.approx(std, rel=0.15)
    assert draws[:, 1, 1].std() == pytest.approx(std, rel=0.2)  # + the spread of the noisy centre


def test_adaptive_ridge_follows_adassp():
    # collinear features: lambda_min(X^T X) = 0, so the shifted noisy estimate is 0 (unless Z > sqrt(log(6/delta)))
    # and AdaSSP's ridge is its full value sqrt(d log(2 d^2 / rho)) sigma_xtx
    Xc = np.c_[X[:, 0], X[:, 0]]
    m = SSPRegressor(epsilon=1.0, delta=1e-5, bounds_X=BX, bounds_y=BY, adaptive=True, random_state=0).fit(Xc, Y)
    assert len(m.dp_event_.events) == 6
    assert m.ridge_ == pytest.approx(math.sqrt(2 * math.log(2 * 4 / 0.05)) * m.noise_stds_["xtx"])
    # many well-spread rows: lambda_min far above the noise, so no ridge beyond the solver's floor
    Xw = np.random.default_rng(3).uniform(0, 10, size=(200_000, 2))
    m = SSPRegressor(epsilon=1.0, delta=1e-7, bounds_X=BX, bounds_y=BY, adaptive=True,
                     random_state=0).fit(Xw, 3 + 0.5 * Xw[:, 0])
    assert m.ridge_ == pytest.approx(1e-9 * m.statistics_["n"])


def test_accuracy_at_large_epsilon_and_on_diabetes_at_one():
    Xb = rng0.uniform(0, 10, size=(20000, 2))
    Yb = 3 + 0.5 * Xb[:, 0] - 0.2 * Xb[:, 1]
    m = SSPRegressor(epsilon=5.0, delta=1e-5, bounds_X=BX, bounds_y=BY, data_norm=1.5, random_state=0).fit(Xb, Yb)
    assert m.score(Xb, Yb) > 0.95
    assert m.coef_ == pytest.approx([0.5, -0.2], abs=0.05)
    from dpcore.datasets import load_dataset, train_test_split

    ds = load_dataset("diabetes")
    r2 = [SSPRegressor(epsilon=1.0, delta=1e-5, bounds_X=ds.bounds, bounds_y=ds.label_range, random_state=s)
          .fit((sp := train_test_split(ds, seed=s)).X_train, sp.y_train).score(sp.X_test, sp.y_test) for s in range(5)]
    assert np.mean(r2) >= 0.3  # useful at epsilon = 1 (delta = 1e-5, add/remove), where the functional mechanism is ~0


def test_coef_and_intercept_describe_predictions_inside_the_norm_bound():
    m = SSPRegressor(epsilon=3.0, delta=1e-5, bounds_X=BX, bounds_y=(-50, 50), data_norm=5.0, random_state=0).fit(X, Y)
    assert m.n_rows_clipped_ == 0
    assert m.predict(X[:20]) == pytest.approx(X[:20] @ m.coef_ + m.intercept_)


def test_bad_inputs_and_warnings():
    with pytest.raises(DPValueError, match="epsilon"):
        SSPRegressor(epsilon=0, bounds_X=BX, bounds_y=BY).fit(X, Y)
    with pytest.raises(DPValueError, match="delta must be > 0"):
        SSPRegressor(epsilon=1, delta=0, bounds_X=BX, bounds_y=BY).fit(X, Y)
    with pytest.raises(DPValueError, match="data_norm"):
        SSPRegressor(epsilon=1, bounds_X=BX, bounds_y=BY, data_norm=0).fit(X, Y)
    with pytest.raises(DPValueError, match="adaptive must be True or False, got 'maybe'"):
        SSPRegressor(epsilon=1, bounds_X=BX, bounds_y=BY, adaptive="maybe").fit(X, Y)
    with pytest.raises(DPValueError, match="at least 2"):
        SSPRegressor(epsilon=1, bounds_X=BX, bounds_y=BY).fit(X[:1], Y[:1])
    with pytest.warns(DPCoreWarning, match="clipped"):
        SSPRegressor(epsilon=1, bounds_X=(0, 5), bounds_y=BY, random_state=0).fit(X, Y)
    with pytest.warns(PrivacyLeakWarning):
        SSPRegressor(epsilon=1, random_state=0).fit(X, Y)
    with pytest.warns(DPCoreWarning, match="1/n"):
        SSPRegressor(epsilon=1, delta=0.01, bounds_X=BX, bounds_y=BY, random_state=0).fit(X, Y)


def test_the_solved_system_does_not_reveal_the_true_count():
    # with the adaptive ridge at 0, a floor of 1e-9 n let n be read back from the model
    for n in (2999, 3000):
        Xn = np.random.default_rng(1).uniform(0, 10, size=(n, 2))
        Yn = 3 + 0.5 * Xn[:, 0] - 0.2 * Xn[:, 1]
        m = SSPRegressor(epsilon=1.0, delta=1e-5, bounds_X=BX, bounds_y=BY, adaptive=True, random_state=0).fit(Xn, Yn)
        A = psd_repair(m.statistics_["xtx"]) + m.ridge_ * np.eye(2)
        assert A @ m.w_unit_ == pytest.approx(m.statistics_["xty"])  # ridge_ is the ridge actually used
        assert m.ridge_ == pytest.approx(1e-9 * m.statistics_["n"], rel=1e-9)  # the floor, on the noisy count
        assert abs(m.statistics_["n"] - n) > 1e-3


def test_a_data_norm_whose_square_underflows_is_refused_by_name():
    X = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises(DPValueError, match=r"data_norm=1e-300 is too small.*at least 1e-150"):
        SSPRegressor(epsilon=1.0, delta=1e-5, data_norm=1e-300, random_state=0).fit(X, X[:, 0])


@pytest.mark.parametrize("R", [0.7, 1.1, 1.7, 2.3, 3.7])
def test_the_sensitivity_of_xtx_is_never_below_the_exact_square_of_the_row_bound(R):
    """X^T X and its smallest eigenvalue move by at most ||x||^2 <= R^2 (Wang 2018): R * R in floating point lay below
    the exact square for these R, a hair less noise than that bound needs."""
    from fractions import Fraction

    sens = ssp_sensitivities(3, R)
    assert Fraction(sens["xtx"]) >= Fraction(R) ** 2 and Fraction(sens["lambda_min"]) >= Fraction(R) ** 2
