"""PATE accounting: data-independent epsilon vs independent computations; the data-dependent bound."""
from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from dpcore.exceptions import DPValueError
from dpcore.pate import (
    calibrate_noise_scale,
    data_dependent_epsilon,
    data_independent_rdp_epsilon,
    gnmax_data_dependent_rdp,
    gnmax_log_q,
    pate_epsilon,
)
from dpcore.pate.analysis import RDP_ORDERS
from tests.pate.conftest import exact_gaussian_epsilon


@pytest.mark.parametrize("sigma,m", [(40.0, 100), (10.0, 20), (5.0, 1)])
def test_gnmax_epsilon_matches_exact_gaussian_composition(sigma, m):
    """m GNMax answers = a Gaussian on the stacked histograms: L2 sensitivity sqrt(2m), std sigma.

    So the exact epsilon is that of a unit-sensitivity Gaussian with std sigma / sqrt(2m); PLD is
    (nearly) exact and RDP is an upper bound.
    """
    exact = exact_gaussian_epsilon(sigma / math.sqrt(2 * m), 1e-5)
    pld = pate_epsilon(aggregator="gnmax", noise_scale=sigma, queries=m, delta=1e-5, accountant="pld")
    rdp = pate_epsilon(aggregator="gnmax", noise_scale=sigma, queries=m, delta=1e-5, accountant="rdp")
    assert pld == pytest.approx(exact, rel=0.01)
    assert exact <= rdp < 1.6 * exact


def test_gnmax_rdp_is_alpha_over_sigma_squared():
    """Proposition 8: RDP alpha / sigma^2 per query; same conversion as the accountant."""
    sigma, m = 30.0, 50
    acc = dp_accounting.rdp.RdpAccountant(orders=list(RDP_ORDERS))
    acc.compose(dp_accounting.GaussianDpEvent(sigma / math.sqrt(2)), m)
    by_hand = dp_accounting.rdp.compute_epsilon(np.array(RDP_ORDERS), m * np.array(RDP_ORDERS) / sigma**2, 1e-5)[0]
    assert acc.get_epsilon(1e-5) == pytest.approx(by_hand)
    assert pate_epsilon(aggregator="gnmax", noise_scale=sigma, queries=m, delta=1e-5) == pytest.approx(by_hand)
    assert data_independent_rdp_epsilon(sigma=sigma, queries=m, delta=1e-5) == pytest.approx(by_hand)
    # the classical conversion min_a (m a / s^2 + ln(1/delta)/(a - 1)) is an upper bound on it
    classic = min(m * a / sigma**2 + math.log(1e5) / (a - 1) for a in RDP_ORDERS)
    assert by_hand <= classic


def test_lnmax_pure_epsilon_is_two_gamma_per_query():
    assert pate_epsilon(aggregator="lnmax", noise_scale=20.0, queries=7, delta=0.0) == pytest.approx(7 * 2 / 20.0)
    with_delta = pate_epsilon(aggregator="lnmax", noise_scale=20.0, queries=500, delta=1e-5)
    assert with_delta < 500 * 2 / 20.0  # the accountant beats basic composition for many queries
    assert pate_epsilon(aggregator="lnmax", noise_scale=20.0, queries=1, delta=1e-5) <= 0.1 + 1e-12


@pytest.mark.parametrize("agg,delta", [("gnmax", 1e-5), ("lnmax", 1e-5), ("lnmax", 0.0)])
def test_calibration_meets_target(agg, delta):
    s = calibrate_noise_scale(aggregator=agg, target_epsilon=2.0, delta=delta, queries=100)
    eps = pate_epsilon(aggregator=agg, noise_scale=s, queries=100, delta=delta)
    assert 1.97 <= eps <= 2.0


def test_gnmax_needs_delta():
    with pytest.raises(DPValueError, match="delta"):
        pate_epsilon(aggregator="gnmax", noise_scale=5.0, queries=3, delta=0.0)


def test_log_q_is_the_union_bound_of_proposition_7():
    votes, sigma = np.array([30, 12, 5, 3]), 6.0
    expect = sum(0.5 * math.erfc((30 - n) / (2 * sigma)) for n in (12, 5, 3))
    assert math.exp(gnmax_log_q(votes, sigma=sigma)) == pytest.approx(expect, rel=1e-9)
    # capped at 1 - 1/k when the union bound is useless
    assert math.exp(gnmax_log_q([5, 5, 5], sigma=100.0)) == pytest.approx(2 / 3)


def _exact_renyi_two_classes(gap, shift, sigma, lam):
    """D_lambda between GNMax outputs on two classes with vote gaps `gap` and `gap + shift` (exact)."""
    s = math.sqrt(2) * sigma
    lp = np.array([stats.norm.logcdf(gap / s), stats.norm.logsf(gap / s)])
    lq = np.array([stats.norm.logcdf((gap + shift) / s), stats.norm.logsf((gap + shift) / s)])
    return np.logaddexp(lam * lp[0] + (1 - lam) * lq[0], lam * lp[1] + (1 - lam) * lq[1]) / (lam - 1)


def test_data_dependent_bound_upper_bounds_the_true_renyi_divergence():
    """Two classes: the output law is known exactly, so the bound can be checked against the truth.

    A neighbour moves one teacher's vote: the gap changes by +-2 (or +-1 if a vote disappears).
    """
    lam = RDP_ORDERS
    used = 0
    for sigma in (2.0, 5.0, 10.0, 25.0):
        for gap in range(0, 300, 3):
            votes = [gap + 10, 10]
            bound = gnmax_data_dependent_rdp(gnmax_log_q(votes, sigma=sigma), sigma=sigma, orders=lam)
            assert np.all(bound <= lam / sigma**2 + 1e-12)  # never worse than data-independent
            used += int(np.any(bound < lam / sigma**2 - 1e-9))
            for shift in (-2, -1, 1, 2):
                truth = _exact_renyi_two_classes(gap, shift, sigma, lam)
                assert np.all(bound >= truth - 1e-9), (sigma, gap, shift)
    assert used > 100  # the data-dependent bound is actually in force in many of these cases


def test_theorem_6_formula_in_plain_arithmetic():
    """The log-space implementation equals Theorem 6 evaluated directly."""
    sigma, votes = 8.0, [60, 20, 5]
    log_q = gnmax_log_q(votes, sigma=sigma)
    q = math.exp(log_q)
    mu2 = sigma * math.sqrt(math.log(1 / q))
    mu1 = mu2 + 1
    e1, e2 = mu1 / sigma**2, mu2 / sigma**2
    A = (1 - q) / (1 - (q * math.exp(e2)) ** ((mu2 - 1) / mu2))
    B = math.exp(e1) / q ** (1 / (mu1 - 1))
    for lam in (2.0, 5.0, 10.0):
        assert lam <= mu1
        direct = math.log((1 - q) * A ** (lam - 1) + q * B ** (lam - 1)) / (lam - 1)
        got = gnmax_data_dependent_rdp(log_q, sigma=sigma, orders=[lam])[0]
        assert got == pytest.approx(min(direct, lam / sigma**2), rel=1e-9)
        assert direct < lam / sigma**2


def test_strong_consensus_costs_far_less_than_weak():
    sigma, m = 20.0, 100
    ind = data_independent_rdp_epsilon(sigma=sigma, queries=m, delta=1e-5)
    strong, _, per_strong = data_dependent_epsilon(np.tile([200, 0, 0], (m, 1)), sigma=sigma, delta=1e-5)
    weak, _, _ = data_dependent_epsilon(np.tile([70, 66, 64], (m, 1)), sigma=sigma, delta=1e-5)
    assert strong < 0.5 * ind
    assert weak == pytest.approx(ind, rel=1e-9)  # no consensus: nothing to gain
    assert per_strong.shape == (m,)


def _gnmax_output_law(votes, sigma):
    """Exact Pr[GNMax returns j] by one-dimensional integration over the winner's noise."""
    from scipy import integrate

    v = np.asarray(votes, dtype=float)
    out = []
    for j in range(v.size):
        def f(z, j=j):
            p = stats.norm.pdf(z)
            for k in range(v.size):
                if k != j:
                    p *= stats.norm.cdf((v[j] - v[k]) / sigma + z)
            return p
        out.append(integrate.quad(f, -12, 12, epsabs=0.0, epsrel=1e-10, limit=400)[0])
    return np.asarray(out)


def test_data_dependent_bound_three_classes_against_exact_divergence():
    """Three classes: every neighbour (one vote moved between two classes) stays under the bound."""
    lam = np.array([2.0, 4.0, 8.0, 16.0, 32.0])
    active = 0
    for sigma, votes in [(4.0, [40, 5, 5]), (6.0, [30, 15, 5]), (10.0, [80, 10, 10]), (3.0, [20, 14, 6])]:
        bound = gnmax_data_dependent_rdp(gnmax_log_q(votes, sigma=sigma), sigma=sigma, orders=lam)
        active += int(np.sum(bound < lam / sigma**2 - 1e-12))
        p = _gnmax_output_law(votes, sigma)
        for a in range(3):
            for b in range(3):
                if a == b or votes[a] == 0:
                    continue
                w = list(votes)
                w[a] -= 1
                w[b] += 1
                q = _gnmax_output_law(w, sigma)
                logs = lam[:, None] * np.log(p)[None, :] + (1 - lam[:, None]) * np.log(q)[None, :]
                truth = np.logaddexp.reduce(logs, axis=1) / (lam - 1)
                assert np.all(bound >= truth - 1e-7), (sigma, votes, a, b)
    assert active >= 10  # the data-dependent bound is in force for most of these orders


def test_the_data_independent_epsilon_on_orders_of_ones_own_never_reads_a_curve_below_the_exact_one():
    # m alpha / sigma^2 rounded in floating point fell below its exact value on about half of random cases, and the
    # epsilon read from it one unit below the one the exact curve (rounded up) gives
    from fractions import Fraction

    from dpcore.accounting.trusted import rdp_epsilon

    rng = np.random.default_rng(0)
    for _ in range(300):
        sigma, queries = float(rng.uniform(1, 100)), int(rng.integers(1, 5000))
        orders = np.sort(rng.uniform(1.5, 200, 5))
        exact = [Fraction(queries) * Fraction(float(a)) / Fraction(sigma) ** 2 for a in orders]
        up = [float(e) if Fraction(float(e)) >= e else math.nextafter(float(e), math.inf) for e in exact]
        assert (data_independent_rdp_epsilon(sigma=sigma, queries=queries, delta=1e-5, orders=orders)
                >= rdp_epsilon(orders, np.array(up), 1e-5)[0])
