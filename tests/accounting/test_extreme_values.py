"""Accounting at the edges of double precision: refused by name, or answered without huge arrays."""
from __future__ import annotations

import warnings

import pytest

from dpcore.accounting import calibrate_noise_multiplier, dpsgd_epsilon
from dpcore.accounting.events import MAX_NOISE_MULTIPLIER
from dpcore.accounting.ledger import PLD_MAX_POINTS, pld_grid_points
from dpcore.exceptions import DPCoreWarning, DPValueError


def test_a_noise_multiplier_beyond_the_accounted_range_is_refused_by_name():
    with pytest.raises(DPValueError, match=r"noise_multiplier must be at most 1e\+12"):
        dpsgd_epsilon(noise_multiplier=1e308, sample_rate=0.01, steps=100, delta=1e-5)
    # at the limit itself epsilon is already 0
    assert dpsgd_epsilon(noise_multiplier=MAX_NOISE_MULTIPLIER, sample_rate=0.01, steps=100, delta=1e-5) == 0.0


@pytest.mark.parametrize(
    "kw,name",
    [
        (dict(noise_multiplier=-1.0, sample_rate=0.1, delta=1e-5), "noise_multiplier"),
        (dict(noise_multiplier=1.0, sample_rate=7.0, delta=1e-5), "sample_rate"),
        (dict(noise_multiplier=1.0, sample_rate=0.1, delta=5.0), "delta"),
    ],
)
def test_invalid_values_are_refused_even_for_zero_steps(kw, name):
    with pytest.raises(DPValueError, match=name):
        dpsgd_epsilon(steps=0, **kw)


def test_zero_steps_spend_nothing():
    assert dpsgd_epsilon(noise_multiplier=1.0, sample_rate=0.1, steps=0, delta=1e-5) == 0.0


@pytest.mark.parametrize(
    "sigma,steps",
    [(1e-6, 100), (1.0, 10**12)],
    ids=["almost-no-noise", "a-trillion-steps"],
)
def test_pld_hands_a_grid_too_large_to_rdp_with_a_warning(sigma, steps):
    kw = dict(noise_multiplier=sigma, sample_rate=0.01, steps=steps, delta=1e-5)
    with pytest.warns(DPCoreWarning, match="from the RDP accountant instead"):
        eps = dpsgd_epsilon(**kw, accountant="pld")
    assert eps == dpsgd_epsilon(**kw, accountant="rdp")


def test_ordinary_runs_stay_with_pld():
    kw = dict(noise_multiplier=1.0, sample_rate=0.01, steps=1000, delta=1e-5)
    assert pld_grid_points(*_atom_and_count(kw), discretization=1e-4) < PLD_MAX_POINTS
    with warnings.catch_warnings():
        warnings.simplefilter("error", DPCoreWarning)
        pld = dpsgd_epsilon(**kw, accountant="pld")
    assert pld == pytest.approx(1.83, abs=0.01)
    assert pld < dpsgd_epsilon(**kw, accountant="rdp")  # PLD is tighter: it really was PLD


def test_grid_estimate_is_within_half_and_three_times_dp_accountings_grid():
    import dp_accounting

    from dpcore.accounting.ledger import _poisson_gaussian_pld
    from dpcore.accounting.neighbouring import Neighbouring

    for sigma, q, steps in [(1.0, 0.01, 1000), (0.7, 0.1, 100), (3.0, 1.0, 10)]:
        pld = _poisson_gaussian_pld(q, sigma, Neighbouring.ADD_REMOVE, 1e-3).self_compose(steps)
        real = len(pld._pmf_remove._probs) if hasattr(pld._pmf_remove, "_probs") else None
        if real is None:
            pytest.skip("dp_accounting's PLD internals moved")
        atom = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
        estimate = pld_grid_points(atom, steps, Neighbouring.ADD_REMOVE, 1e-3)
        assert real / 2 <= estimate <= 3 * real, (sigma, q, steps, real, estimate)


def test_calibration_to_an_astronomical_target_returns_little_noise_without_a_pld_grid():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        sigma = calibrate_noise_multiplier(target_epsilon=1e308, delta=1e-5, sample_rate=0.01, steps=100,
                                           accountant="pld")
    assert sigma == pytest.approx(1e-3)  # the least noise the search allows


def test_calibration_to_a_vanishing_target_never_spends_above_it():
    sigma = calibrate_noise_multiplier(target_epsilon=1e-300, delta=1e-5, sample_rate=0.01, steps=100)
    # at delta = 1e-5 enough noise makes the run (0, delta)-DP: epsilon 0 meets any positive target
    assert dpsgd_epsilon(noise_multiplier=sigma, sample_rate=0.01, steps=100, delta=1e-5) <= 1e-300


def _atom_and_count(kw):
    import dp_accounting

    from dpcore.accounting.neighbouring import Neighbouring

    atom = dp_accounting.PoissonSampledDpEvent(kw["sample_rate"], dp_accounting.GaussianDpEvent(kw["noise_multiplier"]))
    return atom, kw["steps"], Neighbouring.ADD_REMOVE


def test_a_grid_too_large_under_replace_one_also_falls_back_to_rdp():
    import dp_accounting

    from dpcore.accounting import epsilon_of_event

    event = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(1e-6), 100)
    with pytest.warns(DPCoreWarning, match="noise_multiplier=1e-06 over 100 steps"):
        eps = epsilon_of_event(event, delta=1e-5, accountant="pld", neighbouring="replace-one")
    assert eps == epsilon_of_event(event, delta=1e-5, accountant="rdp", neighbouring="replace-one")


def test_more_steps_than_the_pld_accountant_composes_go_to_rdp_with_the_reason():
    """dp_accounting composes a PLD by repeated squaring, and the support grows with the steps: 10^8 steps took more
    than 40 s, and `noise --accountant pld` over 10^9 ran for minutes. Beyond PLD_MAX_STEPS the composition is RDP's
    (a valid upper bound), and the reason is said."""
    import warnings

    from dpcore.accounting import dpsgd_event, epsilon_of_event
    from dpcore.accounting.ledger import PLD_MAX_STEPS

    event = dpsgd_event(noise_multiplier=1000.0, sample_rate=0.01, steps=PLD_MAX_STEPS + 1)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        pld = epsilon_of_event(event, delta=1e-5, accountant="pld", pld_discretization=1e-3)
    assert pld == epsilon_of_event(event, delta=1e-5, accountant="rdp")
    assert any(f"at most {PLD_MAX_STEPS:,} steps" in str(w.message) for w in said)
    fewer = dpsgd_event(noise_multiplier=1000.0, sample_rate=0.01, steps=PLD_MAX_STEPS)
    with warnings.catch_warnings(record=True) as said:  # up to the bound, PLD's own answer
        warnings.simplefilter("always")
        pld = epsilon_of_event(fewer, delta=1e-5, accountant="pld", pld_discretization=1e-3)
    assert pld != epsilon_of_event(fewer, delta=1e-5, accountant="rdp")
    assert not any("steps of one mechanism" in str(w.message) for w in said)


@pytest.mark.parametrize("q", [1e-310, 1e-320])
def test_a_subnormal_sample_rate_goes_from_pld_to_rdp_with_the_reason(q):
    """dp_accounting's PLD of a Poisson-subsampled Gaussian fails on a subnormal q ("a must be greater than b"): the
    PLD ledger hands it to RDP, a valid upper bound, and says why; under replace-one neighbours, where RDP does not
    compose it either, it is refused naming the sample rate."""
    from dpcore.accounting import PrivacyLedger, dpsgd_event

    def eps(accountant, neighbouring="add-remove"):
        ledger = PrivacyLedger(delta=1e-5, accountant=accountant, neighbouring=neighbouring)
        return ledger.spend(dpsgd_event(noise_multiplier=0.8, sample_rate=q, steps=100))

    with pytest.warns(DPCoreWarning, match="cannot hold a sample rate"):
        pld = eps("pld")
    assert pld == eps("rdp")
    with pytest.raises(DPValueError, match="sample rate"):
        eps("pld", "replace-one")
