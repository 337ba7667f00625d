"""Square roots behind a sensitivity, a noise scale or a stated epsilon round the way that fails closed.

``math.sqrt`` rounds to nearest: for about half of all non-squares d it returns a double below the exact root (d = 3,
6, 11, ...). A sensitivity ``sqrt(d)`` stated that way is below the exact one, and noise calibrated to it, or an
epsilon computed from it, is a hair less private than stated. Every comparison here is exact: in rationals, or
against 60-digit values (mpmath) where a logarithm or an exponential enters.
"""
from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

from dpcore.accounting import advanced_composition
from dpcore.mechanisms.additive import secure_grid
from dpcore.mechanisms.base import sqrt_down, sqrt_up
from dpcore.mechanisms.gaussian import analytic_gaussian_sigma, classic_gaussian_sigma
from dpcore.models.ssp import ssp_noise_multipliers, ssp_sensitivities
from dpcore.pate import confident

mpmath.mp.dps = 60

#: d below 200 whose double-precision root, rounded to nearest, lies below the exact root (found with rationals)
ROOTS_BELOW = [d for d in range(2, 200) if Fraction(math.sqrt(d)) ** 2 < d]


def test_some_rounded_roots_lie_below_the_exact_root():
    assert 3 in ROOTS_BELOW and len(ROOTS_BELOW) > 50


def test_sqrt_up_and_down_are_the_nearest_doubles_around_the_exact_root():
    for x in list(range(0, 2000)) + [Fraction(1, 3), Fraction(10**40, 7), 1e-320, 2.0**-1074, 1.7e308]:
        up, down = sqrt_up(x), sqrt_down(x)
        assert Fraction(down) ** 2 <= Fraction(x) <= Fraction(up) ** 2
        assert up == down if Fraction(up) ** 2 == Fraction(x) else math.nextafter(down, math.inf) == up


def test_ssp_sum_sensitivity_is_at_least_the_exact_root_of_d():
    for d in ROOTS_BELOW:
        assert Fraction(ssp_sensitivities(d, 1.0)["sum_x"]) ** 2 >= d


@pytest.mark.parametrize("adaptive", [False, True])
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 3.0, 8.0])
def test_ssp_multipliers_compose_to_no_less_than_the_calibrated_noise(epsilon, adaptive):
    # mu-GDP composition: the releases together are the Gaussian of multiplier (sum s_i^-2)^(-1/2), which must be
    # at least the analytic Gaussian's s for (epsilon, delta) (to nearest, AdaSSP's split fell below it at each)
    s = Fraction(analytic_gaussian_sigma(epsilon=epsilon, delta=1e-5))
    multipliers = ssp_noise_multipliers(epsilon, 1e-5, adaptive=adaptive)
    assert sum(Fraction(m) ** -2 for m in multipliers.values()) <= s**-2


def test_secure_grid_noise_covers_the_rounded_answers_l2_sensitivity():
    for coordinates in ROOTS_BELOW:
        grid = secure_grid(sensitivity=1.0, scale=1.0, coordinates=coordinates, norm=2)
        exact = 1 + mpmath.mpf(grid.granularity) * mpmath.sqrt(coordinates)
        assert mpmath.mpf(grid.scale_increase) >= exact
        assert mpmath.mpf(grid.steps_scale(1.0)) >= exact / mpmath.mpf(grid.granularity)


@pytest.mark.parametrize("delta", [1e-5, 1e-6, 3e-5, 1e-9])
@pytest.mark.parametrize("epsilon", [0.1, 0.25, 0.5, 0.7, 0.9])
def test_classic_gaussian_sigma_is_at_least_the_exact_calibration(epsilon, delta):
    # Dwork & Roth 2014, Theorem A.1: sigma = Delta sqrt(2 ln(1.25 / delta)) / epsilon
    for sensitivity in (1.0, 3.0, 0.7):
        exact = mpmath.mpf(sensitivity) * mpmath.sqrt(2 * mpmath.log(mpmath.mpf(1.25) / mpmath.mpf(delta))) \
            / mpmath.mpf(epsilon)
        assert mpmath.mpf(classic_gaussian_sigma(epsilon=epsilon, delta=delta, sensitivity=sensitivity)) >= exact


@pytest.mark.parametrize("k", [1, 2, 10, 1000])
@pytest.mark.parametrize("epsilon", [0.01, 0.1, 0.5, 1.0])
def test_advanced_composition_states_no_less_than_the_theorem(k, epsilon):
    # Dwork, Rothblum & Vadhan 2010: sqrt(2 k ln(1/delta')) eps + k eps (e^eps - 1)
    for slack in (1e-5, 1e-6, 5e-6):
        e = mpmath.mpf(epsilon)
        exact = mpmath.sqrt(2 * k * mpmath.log(1 / mpmath.mpf(slack))) * e + k * e * mpmath.expm1(e)
        assert mpmath.mpf(advanced_composition(epsilon=epsilon, delta=0.0, k=k, delta_slack=slack)[0]) >= exact


def test_confident_check_is_accounted_at_no_more_than_sqrt_2_sigma1(monkeypatch):
    # Papernot et al. 2018, Section 4.1: the check is GNMax's Theorem 6 at sigma = sqrt 2 sigma1; a larger sigma
    # states a smaller RDP, and math.sqrt(2.0) is above the exact root
    seen = []
    monkeypatch.setattr(confident, "gnmax_data_dependent_rdp", lambda log_q, *, sigma, orders: seen.append(sigma))
    for sigma1 in (1.0, 150.0, 3.0, 0.7):
        confident.check_data_dependent_rdp(-3.0, sigma1=sigma1)
    assert all(Fraction(s) ** 2 <= 2 * Fraction(sigma1) ** 2 for s, sigma1 in zip(seen, (1.0, 150.0, 3.0, 0.7)))
