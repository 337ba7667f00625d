"""Secure noise: the exact discrete Laplace sampler, its stated privacy, and Mironov's attack on both modes.

The samplers draw from the OS's cryptographic source, so these statistical checks are not seeded; each uses a
threshold a correct sampler fails with probability below 1e-6.
"""
from __future__ import annotations

import math
from fractions import Fraction

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from dpcore.audit.floating_point import floating_point_attack, reachable_by_textbook_laplace
from dpcore.exceptions import DPValueError
from dpcore.mechanisms import Laplace
from dpcore.mechanisms.secure import SecureLaplace, bernoulli_exp, default_granularity, discrete_laplace


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(23, 10)])
def test_bernoulli_exp_is_true_with_probability_exp_minus_gamma(gamma):
    n = 20000
    hits = sum(bernoulli_exp(gamma) for _ in range(n))
    p = math.exp(-float(gamma))
    assert abs(hits / n - p) <= 5.5 * math.sqrt(p * (1 - p) / n) + 1e-12


@pytest.mark.parametrize("scale", [Fraction(1, 2), Fraction(3), Fraction(1025, 1)])
def test_discrete_laplace_draws_follow_the_exact_law(scale):
    """Chi-square of 8000 draws against P[Z = z] = (1 - q)/(1 + q) q^|z|, q = exp(-1/scale)."""
    n = 8000
    draws = np.array([discrete_laplace(scale) for _ in range(n)])
    q = math.exp(-1.0 / float(scale))
    def p_abs_at_least(a):  # P[|Z| >= a] = 2 q^a / (1 + q) for a >= 1
        return 1.0 if a == 0 else 2 * q**a / (1 + q)

    # bins [lo, hi) on |z| of roughly equal mass (the last one open), so every expected count is large; the first
    # starts at 0 even when no draw is 0 (at scale 1025, P[Z = 0] ~ 1/2050: about 1 run in 50 draws none)
    lows = np.unique(np.r_[0, np.quantile(np.abs(draws), np.linspace(0, 1, 9)[1:-1]).astype(int)])
    highs = [*lows[1:], None]
    observed = [int(((np.abs(draws) >= lo) & (True if hi is None else np.abs(draws) < hi)).sum())
                for lo, hi in zip(lows, highs)]
    expected = [n * (p_abs_at_least(lo) - (0.0 if hi is None else p_abs_at_least(hi))) for lo, hi in zip(lows, highs)]
    _, p_value = stats.chisquare(observed, expected)
    assert p_value > 1e-6
    # symmetric: the sign is a fair coin among non-zero draws
    nonzero = draws[draws != 0]
    assert abs((nonzero > 0).mean() - 0.5) <= 5.5 * math.sqrt(0.25 / max(len(nonzero), 1))


def test_neighbouring_answers_change_any_output_probability_by_exactly_e_to_the_epsilon():
    """Rounding moves neighbours at most floor(Δ/g) + 1 grid steps apart; the pmf ratio over that shift is e^ε."""
    m = SecureLaplace(epsilon=0.7, sensitivity=3.0)
    k = np.arange(-50, 50)
    ratio = m.pmf(k) / m.pmf(k + m.grid_sensitivity)
    assert np.max(ratio) == pytest.approx(math.exp(0.7), rel=1e-9)
    # and no answer pair within the sensitivity is rounded further apart than that
    gen = np.random.default_rng(0)
    a = gen.uniform(-100, 100, 5000)
    b = a + gen.uniform(-3.0, 3.0, 5000)
    assert np.max(np.abs(np.rint(a / m.granularity) - np.rint(b / m.granularity))) <= m.grid_sensitivity


def test_the_accountant_reads_exactly_epsilon_from_the_secure_mechanism():
    m = SecureLaplace(epsilon=1.3, sensitivity=2.0)
    acc = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(m.dp_event)
    assert acc.get_epsilon(1e-9) == pytest.approx(1.3, abs=2e-3)


def test_grid_rounding_costs_at_most_a_fraction_of_a_percent_and_says_so():
    for sensitivity in (1.0, 3.0, 0.01, 250.0):
        m = SecureLaplace(epsilon=1.0, sensitivity=sensitivity)
        assert m.granularity == default_granularity(sensitivity)
        assert 1.0 < m.scale_increase <= 1.0 + 2.0 / 1024
        assert m.scale == pytest.approx(sensitivity / 1.0 * m.scale_increase)


def test_every_release_is_a_grid_point_near_the_answer():
    m = SecureLaplace(epsilon=2.0, sensitivity=1.0)
    out = m.randomise(np.full(3000, 41.3))
    assert np.all(out / m.granularity == np.rint(out / m.granularity))
    assert np.mean(out) == pytest.approx(41.3, abs=5 * math.sqrt(m.variance() / 3000) + m.granularity)
    assert np.var(out) == pytest.approx(m.variance(), rel=0.15)


def test_secure_noise_refuses_a_seed_and_says_why():
    with pytest.raises(DPValueError, match="rng.*cryptographic"):
        SecureLaplace(epsilon=1.0).randomise(1.0, rng=0)


@pytest.mark.parametrize("kwargs,match", [({"granularity": 0.001}, "power of two"),
                                          ({"epsilon": 0.0}, "epsilon"), ({"sensitivity": -1.0}, "sensitivity")])
def test_bad_secure_settings_are_refused_by_name(kwargs, match):
    with pytest.raises(DPValueError, match=match):
        SecureLaplace(**{"epsilon": 1.0, **kwargs})


def test_a_noise_too_wide_for_the_exact_grid_is_refused_by_name():
    # epsilon 1e-17: the discrete Laplace's scale is 1e20 grid steps, its draws do not fit a 64-bit integer, and the
    # release died of "OverflowError: Python int too large to convert to C long"; the grid is exact to 2**52 steps
    with pytest.raises(DPValueError, match="epsilon=1e-17.*grid steps"):
        SecureLaplace(epsilon=1e-17)
    assert SecureLaplace(epsilon=1e-9).scale == pytest.approx(1025 * 2.0**-10 / 1e-9)  # still served


def test_answers_beyond_the_exact_grid_are_refused():
    with pytest.raises(DPValueError, match="within"):
        SecureLaplace(epsilon=1.0).randomise(1e13)


def test_the_attack_inverts_the_textbook_sampler_exactly():
    """Every release the seeded Laplace makes from x is reachable from x (no false 'impossible')."""
    m = Laplace(epsilon=1.0)
    gen = np.random.default_rng(11)
    for y in m.randomise(np.full(300, 5.0), rng=gen):
        assert reachable_by_textbook_laplace(float(y), 5.0, m.scale)


@pytest.mark.parametrize("epsilon", [0.1, 1.0])
def test_mironovs_attack_breaks_textbook_floating_point_laplace_far_beyond_its_epsilon(epsilon):
    res = floating_point_attack(Laplace(epsilon=epsilon), releases=1500, seed=4)
    assert res.certain_when_x_prime == 0  # the attacker is never wrong ...
    assert res.certain_rate > 0.5  # ... and certain for most releases (Mironov 2012 reports the same)
    assert res.breaks_claim and res.epsilon_lower_bound > 5.0


def test_mironovs_attack_learns_nothing_from_secure_noise():
    res = floating_point_attack(SecureLaplace(epsilon=1.0), releases=1500)
    assert res.certain_when_x == 0 and res.certain_when_x_prime == 0
    assert res.epsilon_lower_bound <= 1.0 and not res.breaks_claim
