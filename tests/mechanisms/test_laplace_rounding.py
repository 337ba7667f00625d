"""Laplace noise never rounds below the epsilon stated for it (Dwork et al. 2006: scale sensitivity / epsilon).

Rounded to nearest, sensitivity / epsilon lands below the exact quotient for about half of all epsilons, and
dp_accounting's noise multiplier 1 / epsilon above it: the noise then gives epsilon (1 + 1e-16) while epsilon is
stated. Every comparison here is exact, in rationals.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dpcore.images.mechanisms import DPPix, PixelLaplace
from dpcore.mechanisms import L2LaplaceVector, Laplace
from dpcore.mechanisms.base import laplace_event, noise_scale, pure_laplace_event, round_down, round_up
from dpcore.mechanisms.secure import SecureLaplace

#: 400 epsilons over twelve orders of magnitude: on the former rounding to nearest, about half failed each check
EPSILONS = [float(e) for e in np.geomspace(1e-6, 1e6, 400)]
SENSITIVITIES = (1.0, 3.0, 0.7, 2.0 / 3.0)


def test_rounding_up_and_down_brackets_the_exact_rational():
    for x in (Fraction(1, 3), Fraction(2, 7), Fraction(10**30, 3), Fraction(1, 10**30), Fraction(5)):
        up, down = round_up(x), round_down(x)
        assert Fraction(down) <= x <= Fraction(up)
        assert up == down if Fraction(up) == x else np.nextafter(down, np.inf) == up


@pytest.mark.parametrize("sensitivity", SENSITIVITIES)
def test_laplace_noise_is_at_least_sensitivity_over_epsilon_and_its_event_states_at_least_epsilon(sensitivity):
    below, event_below = [], []
    for eps in EPSILONS:
        m = Laplace(epsilon=eps, sensitivity=sensitivity)
        if Fraction(m.scale) * Fraction(eps) < Fraction(sensitivity):
            below.append(eps)
        # the accountant's epsilon is 1 / multiplier: at least the epsilon the drawn noise gives, s / scale
        if Fraction(m.dp_event.noise_multiplier) * Fraction(sensitivity) > Fraction(m.scale):
            event_below.append(eps)
        assert Fraction(L2LaplaceVector(epsilon=eps, sensitivity=sensitivity).scale) * Fraction(eps) \
            >= Fraction(sensitivity)
        assert Fraction(noise_scale(sensitivity, eps)) * Fraction(eps) >= Fraction(sensitivity)
    assert below == [] and event_below == []


def test_events_stated_at_an_epsilon_read_at_least_that_epsilon():
    for eps in EPSILONS:
        assert Fraction(pure_laplace_event(eps).noise_multiplier) * Fraction(eps) <= 1, eps
        assert Fraction(laplace_event(1.0, eps).noise_multiplier) * Fraction(eps) <= 1, eps


def test_secure_laplace_event_states_at_least_its_exact_discrete_laplace_parameter():
    for eps in EPSILONS[::4]:
        m = SecureLaplace(epsilon=eps, sensitivity=1.0)
        assert Fraction(m.dp_event.noise_parameter) >= 1 / m.grid_scale, eps  # P[z] ∝ exp(-|z| / grid_scale)
        assert m.dp_event.sensitivity == m.grid_sensitivity, eps


@pytest.mark.parametrize("mechanism", [PixelLaplace, DPPix])
def test_a_picture_mechanisms_epsilon_for_the_whole_image_is_never_rounded_down(mechanism):
    shape = (28, 28)
    for eps in EPSILONS[::4]:
        m = mechanism(epsilon=eps, **({} if mechanism is DPPix else {"budget": "pixel"}))  # a pixel's epsilon
        exact = Fraction(eps) * 28 * 28 / (m.m if mechanism is DPPix else 1)
        assert Fraction(m.image_epsilon(shape)) >= exact, eps
        assert Fraction(m.image_dp_event(shape).noise_multiplier) * exact <= 1, eps
        assert Fraction(m.dp_event.noise_multiplier) * Fraction(eps) <= 1, eps


def test_beyond_the_largest_double_the_rounding_answers_infinity_toward_the_larger_epsilon():
    # float() of a rational beyond 1.8e308 raises OverflowError: the whole-image epsilon of a pixel's 1e308 is
    # infinity (no guarantee), and its event is noise of multiplier 0, which the accountants read as infinity
    huge = Fraction(10**400)
    assert round_up(huge) == np.inf and round_down(huge) == np.finfo(float).max
    assert round_up(-huge) == -np.finfo(float).max and round_down(-huge) == -np.inf
    for m in (PixelLaplace(epsilon=1e308, budget="pixel"), DPPix(epsilon=1e308)):
        assert m.image_epsilon((28, 28)) == np.inf
        assert m.image_dp_event((28, 28)).noise_multiplier == 0.0
    # the multiplier of an epsilon below 1 / 1.8e308 is the largest double: its epsilon is still above the asked one
    assert Fraction(pure_laplace_event(5e-324).noise_multiplier) * Fraction(5e-324) <= 1


def test_the_pure_epsilon_event_of_a_tiny_epsilon_is_never_below_it():
    """Binary randomized response bounds a pure epsilon-DP release (Kairouz, Oh & Viswanath 2015) with answer-at-random
    probability 2 / (e^eps + 1), rounded down. Worked out in 50 digits in all, e^eps read as 1 for every epsilon below
    1e-49: the exponential mechanism and the L2 Laplace vector at epsilon 1e-300 had an event of epsilon 0."""
    from dpcore.accounting import epsilon_of_event
    from dpcore.accounting.events import atom_pure_epsilon
    from dpcore.mechanisms import Exponential
    from dpcore.mechanisms.base import pure_epsilon_event

    for eps in (5e-324, 1e-300, 1.2345678901234e-45, 3e-20, 1e-12, 0.01, 1.0, 699.0):
        assert atom_pure_epsilon(pure_epsilon_event(eps)) >= eps
    for mechanism in (Exponential(epsilon=1e-300, sensitivity=1e-300), L2LaplaceVector(epsilon=1e-300,
                                                                                      sensitivity=1e-300)):
        assert epsilon_of_event(mechanism.dp_event, delta=0.0, neighbouring="replace-one") >= 1e-300
