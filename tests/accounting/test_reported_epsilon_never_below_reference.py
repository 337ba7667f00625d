"""The ledger's epsilons against references computed independently of it, over random and extreme parameters: each is
an upper bound, so it is never below the exact epsilon where one is known, nor below the RDP accountant's own
conversion of an RDP curve computed elsewhere.

* a Gaussian composed k times is one Gaussian of noise sigma / sqrt(k): its exact delta(epsilon) is Balle & Wang's
  (2018, Theorem 8), in mpmath;
* k uses of an epsilon-DP randomized response: the exact delta(epsilon) of their composition (Kairouz, Oh & Viswanath
  2015, Theorem 3.3), which bounds every epsilon-DP mechanism's;
* one step of DP-SGD (a Poisson-subsampled Gaussian): the exact hockey-stick divergence of the two mixtures, in mpmath;
* DP-SGD over many steps: the RDP curve of Opacus (``opacus.accountants.analysis.rdp``, Mironov, Talwar & Zhang
  2019), converted by dp_accounting's ``compute_epsilon`` at the ledger's orders.
"""
from __future__ import annotations

import math
import warnings

import dp_accounting
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.accounting import calibrate, calibrate_noise_multiplier, dpsgd_epsilon, dpsgd_event, epsilon_of_event
from dpcore.accounting.accountants import RDP_ORDERS
from dpcore.exceptions import DPCoreWarning, DPValueError
from dpcore.mechanisms.base import pure_epsilon_event

mp = pytest.importorskip("mpmath")

FUZZ = settings(max_examples=20, deadline=None, derandomize=True, database=None)


def log_uniform(lo: float, hi: float):
    return st.floats(math.log10(lo), math.log10(hi)).map(lambda x: 10.0**x)


def gaussian_delta(sigma: float, epsilon: float):
    """delta(epsilon) of a Gaussian of noise ``sigma`` and sensitivity 1 (Balle & Wang 2018, Theorem 8)."""
    with mp.workdps(60):
        s, e = mp.mpf(sigma), mp.mpf(epsilon)
        return mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s)


def randomized_response_delta(epsilon0: float, k: int, epsilon: float):
    """delta(epsilon) of k uses of binary randomized response at epsilon0 (Kairouz et al. 2015, Theorem 3.3)."""
    with mp.workdps(60):
        e0, e = mp.mpf(epsilon0), mp.mpf(epsilon)
        total = mp.fsum(mp.binomial(k, i) * (mp.exp((k - i) * e0) - mp.exp(e + i * e0))
                        for i in range(k + 1) if (k - 2 * i) * e0 > e)
        return total / (1 + mp.exp(e0)) ** k


def subsampled_gaussian_delta(q: float, sigma: float, epsilon: float):
    """delta(epsilon) of one Poisson-subsampled Gaussian under add/remove: the larger hockey-stick divergence of
    (1 - q) N(0, s^2) + q N(1, s^2) and N(0, s^2), either way round, at the point where their ratio is e^epsilon."""
    with mp.workdps(60):
        q, s, e = mp.mpf(q), mp.mpf(sigma), mp.mpf(epsilon)
        x0 = s * s * mp.log((mp.exp(e) - 1 + q) / q) + mp.mpf(1) / 2  # the mixture over N(0) passes e^eps at x0
        out = (1 - q) * mp.ncdf(-x0 / s) + q * mp.ncdf(-(x0 - 1) / s) - mp.exp(e) * mp.ncdf(-x0 / s)
        if (r := (mp.exp(-e) - 1 + q) / q) > 0:  # N(0) over the mixture passes e^eps below x1
            x1 = s * s * mp.log(r) + mp.mpf(1) / 2
            out = max(out, mp.ncdf(x1 / s) - mp.exp(e) * ((1 - q) * mp.ncdf(x1 / s) + q * mp.ncdf((x1 - 1) / s)))
        return out


@FUZZ
@given(sigma=log_uniform(0.1, 1e3), k=st.integers(1, 10_000), delta=log_uniform(1e-12, 0.3),
       accountant=st.sampled_from(["rdp", "pld"]))
def test_a_composed_gaussian_epsilon_is_never_below_the_exact_one(sigma, k, delta, accountant):
    event = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sigma), k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)  # a hand-over to RDP is said; the number is what is checked
        epsilon = epsilon_of_event(event, delta=delta, accountant=accountant, pld_discretization=1e-3)
    assert gaussian_delta(sigma / math.sqrt(k), epsilon) <= delta


@FUZZ
@given(epsilon0=log_uniform(1e-3, 3.0), k=st.integers(1, 200), delta=log_uniform(1e-12, 0.3),
       accountant=st.sampled_from(["rdp", "pld"]))
def test_composed_pure_epsilon_releases_are_never_below_the_exact_composition(epsilon0, k, delta, accountant):
    event = dp_accounting.SelfComposedDpEvent(pure_epsilon_event(epsilon0), k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        epsilon = epsilon_of_event(event, delta=delta, accountant=accountant, neighbouring="replace-one",
                                   pld_discretization=1e-3)
    assert randomized_response_delta(epsilon0, k, epsilon) <= delta


@FUZZ
@given(q=log_uniform(1e-4, 1.0), sigma=log_uniform(0.5, 30.0), delta=log_uniform(1e-10, 0.1),
       accountant=st.sampled_from(["rdp", "pld"]))
def test_one_dpsgd_step_is_never_below_its_exact_epsilon(q, sigma, delta, accountant):
    epsilon = epsilon_of_event(dpsgd_event(noise_multiplier=sigma, sample_rate=q, steps=1), delta=delta,
                               accountant=accountant)
    assert subsampled_gaussian_delta(q, sigma, epsilon) <= delta


@FUZZ
@given(sigma=log_uniform(0.3, 1e4), q=log_uniform(1e-9, 1.0), steps=st.integers(1, 10_000_000),
       delta=log_uniform(1e-300, 0.5))
def test_a_dpsgd_epsilon_is_never_below_opacus_rdp_curve_converted(sigma, q, steps, delta):
    analysis = pytest.importorskip("opacus.accountants.analysis.rdp")
    orders = np.array(RDP_ORDERS)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        curve = analysis.compute_rdp(q=q, noise_multiplier=sigma, steps=steps, orders=orders)
        reference = dp_accounting.rdp.compute_epsilon(orders, np.where(np.isnan(curve), np.inf, curve), delta)[0]
        epsilon = dpsgd_epsilon(noise_multiplier=sigma, sample_rate=q, steps=steps, delta=delta)
    assert epsilon >= reference * (1 - 1e-12)


def test_a_calibration_the_rdp_conversion_cannot_reach_says_so_and_what_to_use():
    # at delta 1e-10 no noise gets the RDP accountant below epsilon 0.0147 (its largest order, 1024): the search ran
    # to its top noise and said "even 1e+07 does not reach it", as if a larger noise would
    with pytest.raises(DPValueError, match=r"RDP accountant's conversion .* no epsilon below 0\.01476 .*"
                                           r"accountant='pld'"):
        calibrate_noise_multiplier(target_epsilon=0.01, delta=1e-10, sample_rate=0.01, steps=100)
    # the PLD accountant hands a delta below 1e-11 to RDP: the same reason, said
    with pytest.raises(DPValueError, match=r"PLD accountant cannot resolve a delta below 1e-11 .* no epsilon below "
                                           r"0\.01926"):
        calibrate_noise_multiplier(target_epsilon=0.01, delta=1e-12, sample_rate=0.01, steps=100, accountant="pld")
    # a pure epsilon-DP release gets below it by basic composition, which the ledger takes where it is smaller
    laplace = calibrate(lambda b: dp_accounting.LaplaceDpEvent(b), target_epsilon=0.01, delta=1e-10)
    assert 100.0 <= laplace < 100.001
