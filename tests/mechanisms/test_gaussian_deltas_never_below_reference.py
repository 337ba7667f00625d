"""The Gaussian mechanisms' deltas and epsilons against references computed independently in mpmath, over random and
extreme parameters: the continuous Gaussian's delta of Balle & Wang (2018, Theorem 8), and the discrete Gaussian's of
Canonne, Kamath & Steinke (2020, Theorem 7) summed term by term. A delta or epsilon dpcore states is never below the
reference (fail closed); a noise it calibrates never has a reference delta above the one asked for."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.mechanisms.gaussian import analytic_gaussian_delta, analytic_gaussian_epsilon, analytic_gaussian_sigma
from dpcore.mechanisms.secure import discrete_gaussian_delta

mp = pytest.importorskip("mpmath")

FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None)


def log_uniform(lo: float, hi: float):
    return st.floats(math.log10(lo), math.log10(hi)).map(lambda x: 10.0**x)


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0):
    """Balle & Wang (2018, Theorem 8) in 80 digits."""
    with mp.workdps(80):
        s, e, d = mp.mpf(sigma), mp.mpf(epsilon), mp.mpf(sensitivity)
        a, b = d / (2 * s), e * s / d
        return mp.ncdf(a - b) - mp.exp(e) * mp.ncdf(-a - b)


def discrete_delta(sigma: float, epsilon: float, sensitivity: int):
    """Canonne et al. (2020, Theorem 7), P[X > εσ²/Δ - Δ/2] - e^ε P[X > εσ²/Δ + Δ/2] for X ~ N_Z(0, σ²), each tail
    summed over the integers in 60 digits with the thresholds exact."""
    with mp.workdps(60):
        s, e = mp.mpf(sigma), mp.mpf(epsilon)
        reach = int(60 * sigma + epsilon * sigma**2 / sensitivity + 2 * sensitivity) + 10
        weight = {z: mp.exp(-mp.mpf(z) ** 2 / (2 * s * s)) for z in range(-reach, reach + 1)}
        norm = mp.fsum(weight.values())
        cut = e * s * s / sensitivity

        def tail(c):
            return mp.fsum(w for z, w in weight.items() if z > c) / norm

        return tail(cut - mp.mpf(sensitivity) / 2) - mp.exp(e) * tail(cut + mp.mpf(sensitivity) / 2)


@FUZZ
@given(ratio=log_uniform(1e-12, 1e-3), sensitivity=log_uniform(1e-20, 1e20), delta=log_uniform(1e-300, 0.5))
def test_an_epsilon_of_a_noise_far_below_its_sensitivity_meets_its_delta(ratio, sensitivity, delta):
    # a noise far below its sensitivity has an epsilon of 1e17 and more, where epsilon + log Phi(-a - b) is the
    # difference of two numbers that large: rounded above 700, it was read as certain and the delta as 0
    sigma = ratio * sensitivity
    epsilon = analytic_gaussian_epsilon(sigma=sigma, delta=delta, sensitivity=sensitivity)
    if math.isfinite(epsilon):
        assert gaussian_delta(sigma, epsilon, sensitivity) <= delta


def test_a_gaussian_epsilon_near_1e19_meets_its_delta():
    # sigma 1.03e-6 at sensitivity 3469: epsilon 5.6282225e18, whose exact delta is 0.54 (the target 2.2e-85)
    sigma, delta, sensitivity = 1.0340742354033147e-06, 2.1586243419487114e-85, 3469.383791452858
    epsilon = analytic_gaussian_epsilon(sigma=sigma, delta=delta, sensitivity=sensitivity)
    assert gaussian_delta(sigma, epsilon, sensitivity) <= delta
    assert analytic_gaussian_delta(sigma=sigma, epsilon=5.628222520176919e18, sensitivity=sensitivity) >= 0.5


@FUZZ
@given(ratio=log_uniform(1e-30, 1e6), sensitivity=log_uniform(1e-20, 1e20), epsilon=log_uniform(1e-9, 1e60))
def test_a_gaussian_delta_is_never_below_balle_and_wang(ratio, sensitivity, epsilon):
    sigma = ratio * sensitivity
    exact = gaussian_delta(sigma, epsilon, sensitivity)
    if exact > 1e-300:  # below, a double holds no delta; dpcore may say 0
        assert analytic_gaussian_delta(sigma=sigma, epsilon=epsilon, sensitivity=sensitivity) >= exact * (1 - 1e-15)


@FUZZ
@given(epsilon=log_uniform(1e-6, 1e4), delta=log_uniform(1e-300, 0.5), sensitivity=log_uniform(1e-10, 1e10))
def test_an_analytic_gaussian_noise_meets_its_delta(epsilon, delta, sensitivity):
    sigma = analytic_gaussian_sigma(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    assert gaussian_delta(sigma, epsilon, sensitivity) <= delta


@pytest.mark.parametrize("sigma,epsilon,sensitivity", [
    (1.5, 59.33333333333333, 3),  # epsilon sigma^2 / 3 - 3/2 is 42.9999999999999964, which rounded to 43
    (1.5, 23.333333333333332, 1),  # the exponent of the last terms summed (600) is 600 units of rounding
    (3.0, 8.222222222222221, 2),
])
def test_a_discrete_gaussian_delta_on_an_integer_threshold_is_never_below_the_exact_one(sigma, epsilon, sensitivity):
    assert discrete_gaussian_delta(sigma, epsilon, sensitivity) >= discrete_delta(sigma, epsilon, sensitivity)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(sigma=log_uniform(0.2, 40.0), epsilon=log_uniform(1e-4, 60.0), sensitivity=st.sampled_from([1, 2, 3, 7]))
def test_a_discrete_gaussian_delta_is_never_below_canonne_kamath_and_steinke(sigma, epsilon, sensitivity):
    sigma = math.ceil(sigma * 2**20) / 2**20  # as SecureGaussian holds it
    exact = discrete_delta(sigma, epsilon, sensitivity)
    if exact > 1e-300:
        assert discrete_gaussian_delta(sigma, epsilon, sensitivity) >= exact


@pytest.mark.parametrize("epsilon", [1e3, 1e10, 1e100, 1e308])
def test_the_gaussians_delta_is_never_zero_however_large_epsilon(epsilon):
    # no delta = 0 holds for the Gaussian mechanism: its exact delta is positive at every epsilon, and where both
    # terms underflow the difference read 0 (a pure epsilon-DP claim); the least positive double is above it
    assert analytic_gaussian_delta(sigma=1.0, epsilon=epsilon) > 0.0
