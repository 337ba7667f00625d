"""The analytic Gaussian mechanism's noise and epsilon against Balle & Wang's (2018, Theorem 8) delta computed in
80-digit arithmetic (mpmath): the noise is never below the exact calibration, the epsilon never below the exact one."""
from __future__ import annotations

import math

import pytest

from dpcore.mechanisms.gaussian import analytic_gaussian_epsilon, analytic_gaussian_sigma

mp = pytest.importorskip("mpmath")


def exact_delta(sigma: float, epsilon: float, sensitivity: float = 1.0):
    with mp.workdps(80):
        s, e, d = mp.mpf(sigma), mp.mpf(epsilon), mp.mpf(sensitivity)
        a, b = d / (2 * s), e * s / d
        return mp.ncdf(a - b) - mp.exp(e) * mp.ncdf(-a - b)


@pytest.mark.parametrize("epsilon,delta,sensitivity", [
    (1e-9, 1e-300, 1.0), (1e-9, 1e-100, 1e100), (1e-9, 1e-20, 1e-100), (1e-4, 1e-300, 1.0), (1e-4, 1e-20, 1.0),
    (1.0, 1e-5, 1.0), (8.0, 1e-6, 2.0), (100.0, 1e-300, 1.0),
])
def test_an_analytic_gaussian_noise_is_never_below_the_exact_calibration(epsilon, delta, sensitivity):
    # the two terms of delta nearly cancel at small epsilon and delta: computed as they stood, the noise for
    # epsilon 1e-9 at delta 1e-300 gave delta 1.18e-300
    sigma = analytic_gaussian_sigma(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    assert exact_delta(sigma, epsilon, sensitivity) <= delta
    # and not much more than needed: where the terms cancel, their rounding errors are added (0.17 % of sigma at
    # epsilon 1e-9, delta 1e-300); elsewhere the answer is exact to far below 1e-6
    loose = 5e-3 if epsilon < 1e-3 else 1e-6
    assert exact_delta(sigma * (1 - loose), epsilon, sensitivity) > delta


@pytest.mark.parametrize("sigma,delta", [(1e10, 1e-300), (1e6, 1e-300), (1e8, 1e-100), (1.0, 1e-5), (0.3, 1e-300)])
def test_an_analytic_gaussian_epsilon_is_never_below_the_exact_one(sigma, delta):
    epsilon = analytic_gaussian_epsilon(sigma=sigma, delta=delta)  # sigma 1e10 at 1e-300 gave delta 1.036e-300
    assert math.isfinite(epsilon) and epsilon > 0
    assert exact_delta(sigma, epsilon) <= delta
    assert exact_delta(sigma, epsilon * (1 - (5e-3 if sigma > 1e4 else 1e-6))) > delta


@pytest.mark.parametrize("epsilon,delta", [(1e-3, 5e-324), (1.0, 5e-324), (1.0, 1e-320), (100.0, 1e-320),
                                           (1e6, 5e-324)])
def test_a_noise_for_a_delta_below_the_least_normal_double_meets_its_delta(epsilon, delta):
    # Phi's tail below 2.2e-308 was read as 0 (scipy's ndtr), so the difference of the two terms was 0 and the noise
    # for epsilon 1 at delta 5e-324 had an exact delta of 8e-316
    sigma = analytic_gaussian_sigma(epsilon=epsilon, delta=delta)
    assert exact_delta(sigma, epsilon) <= delta


@pytest.mark.parametrize("sigma,delta", [(0.05, 5e-324), (1.0, 5e-324), (1.0, 1e-320), (30.0, 1e-320),
                                         (1e6, 5e-324)])
def test_an_epsilon_at_a_delta_below_the_least_normal_double_is_never_below_the_exact_one(sigma, delta):
    epsilon = analytic_gaussian_epsilon(sigma=sigma, delta=delta)  # sigma 1 at 5e-324 gave delta 3e-314
    assert math.isfinite(epsilon)
    assert exact_delta(sigma, epsilon) <= delta
