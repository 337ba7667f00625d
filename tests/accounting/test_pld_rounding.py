"""A PLD's epsilon at a small delta is read fail closed: dp_accounting composes PLDs by FFT, whose round-off (about
1e-17 on every grid point) reaches 1e-13 in a delta, so a delta of 1e-12 read from it gave an epsilon whose exact
delta is 4 % larger. The exact reference is the composed Gaussian (q = 1) of Balle & Wang (2018), in 60 digits."""
from __future__ import annotations

import math
import warnings

import pytest

from dpcore.accounting import dpsgd_accounting, dpsgd_event, privacy_profile
from dpcore.exceptions import DPCoreWarning

mp = pytest.importorskip("mpmath")


def exact_delta(mu: float, epsilon: float):
    with mp.workdps(60):
        m, e = mp.mpf(mu), mp.mpf(epsilon)
        return mp.ncdf(m / 2 - e / m) - mp.exp(e) * mp.ncdf(-m / 2 - e / m)


@pytest.mark.parametrize("delta", [1e-10, 1e-12, 1e-14])
def test_a_pld_epsilon_at_a_delta_below_its_rounding_is_never_below_the_exact_one(delta):
    sigma, steps = 3.0, 1000  # before: 121.828 at 1e-10 (exact delta 1.0003e-10), 128.888 at 1e-12 (1.036e-12)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eps, used = dpsgd_accounting(noise_multiplier=sigma, sample_rate=1.0, steps=steps, delta=delta,
                                     accountant="pld", pld_discretization=0.05)
    assert exact_delta(math.sqrt(steps) / sigma, eps) <= delta
    if delta < 1e-10:  # too small to resolve: RDP answers, and says so
        assert used == "rdp" and any("cannot resolve delta" in str(w.message) for w in caught)
    else:
        assert used == "pld"


def test_an_ordinary_delta_is_still_read_from_the_pld():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DPCoreWarning)
        eps, used = dpsgd_accounting(noise_multiplier=1.5, sample_rate=0.04, steps=2250, delta=1e-5, accountant="pld")
    assert used == "pld" and eps == pytest.approx(6.77, abs=0.01)


def test_a_privacy_profiles_delta_is_never_below_the_exact_one():
    # sampled at rate 1, the steps are composed by FFT (a plain Gaussian event is composed in closed form)
    profile = privacy_profile(dpsgd_event(noise_multiplier=3.0, sample_rate=1.0, steps=1000), pld_discretization=0.05)
    eps = [110.0, 125.0, 128.9, 133.6]
    for e, d in zip(eps, profile.delta(eps)):
        assert d >= exact_delta(math.sqrt(1000) / 3.0, e)


def test_a_pld_of_hundreds_of_mechanisms_is_composed_without_recursion():
    # composed prefix by prefix through recursion (three frames a mechanism), 400 Gaussians composed one by one (a
    # ComposedDpEvent of them, as a session's ledger spends them) died of Python's recursion limit
    import dp_accounting

    from dpcore.accounting import epsilon_of_event

    event = dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(300.0)] * 400)
    pld = epsilon_of_event(event, delta=1e-5, accountant="pld", pld_discretization=0.05)
    # 400 Gaussians of noise 300 are one of noise 15 (exact), whose epsilon the PLD's may not undercut
    assert 0 < pld < math.inf and exact_delta(400**0.5 / 300.0, pld) <= 1e-5


def test_the_rounding_of_a_long_self_composition_is_not_lost_when_the_ledger_composes_it_further():
    """100,000 steps of a Gaussian of noise 100: the self-composed PLD holds 6.8e-12 of negative mass (its FFT's
    round-off), which composing it into the ledger's chain truncated with the tails, leaving the 1e-12 floor: read at
    delta 1e-10, epsilon 24.5558 where the exact composed Gaussian needs 24.5697. Spent at once or in ten parts."""
    from dpcore.accounting import PrivacyLedger

    sigma, steps, delta = 100.0, 100_000, 1e-10
    mu = math.sqrt(steps) / sigma
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        eps, _ = dpsgd_accounting(noise_multiplier=sigma, sample_rate=1.0, steps=steps, delta=delta, accountant="pld")
        ledger = PrivacyLedger(delta=delta, accountant="pld")
        for _ in range(10):
            ledger.spend(dpsgd_event(noise_multiplier=sigma, sample_rate=1.0, steps=steps // 10))
    assert exact_delta(mu, eps) <= delta
    assert exact_delta(mu, ledger.epsilon) <= delta


def test_a_privacy_profile_reads_epsilons_in_any_order():
    # dp_accounting reads them ascending only: [1, 0] raised "Epsilons in get_delta_for_epsilon must be sorted"
    import dp_accounting
    import numpy as np

    profile = privacy_profile(dp_accounting.GaussianDpEvent(1.0), pld_discretization=1e-3)
    ascending = profile.delta([-1.0, 0.0, 1.0, 2.0])
    assert profile.delta([1.0, 0.0, 2.0, -1.0]).tolist() == ascending[[2, 1, 3, 0]].tolist()
    assert profile.delta([[2.0, -1.0], [0.0, 1.0]]).tolist() == [[ascending[3], ascending[0]], ascending[1:3].tolist()]
    assert profile.delta([float("nan"), 1.0]).tolist() == [1.0, ascending[2]]  # nan: no epsilon, no guarantee
    assert np.all(np.diff(ascending) <= 0)
