"""Why an epsilon is infinity, or the RDP accountant's, is said to every caller that gets that number: not once per
process (a Streamlit server is one process for a whole class), and not once per epoch either."""
from __future__ import annotations

import math
import warnings

import dp_accounting
import pytest

from dpcore.accounting import PrivacyLedger, calibrate_noise_multiplier, dpsgd_epsilon, dpsgd_event, epsilon_curve
from dpcore.accounting.ledger import reasons_unsaid
from dpcore.exceptions import DPCoreWarning
from dpcore.runtime.thread_warnings import caught

INFINITY = "reported as infinity"
HANDED_OVER = "from the RDP accountant instead"


def _said(seen, text: str) -> list[str]:
    return [str(w.message) for w in seen if text in str(w.message)]


def test_two_accountings_of_a_noise_too_small_for_any_guarantee_each_say_why_it_is_infinity():
    for _ in range(2):  # the second finds the curve in the cache: it says the reason cached with it
        with caught() as seen:
            eps = dpsgd_epsilon(noise_multiplier=1e-160, sample_rate=0.01, steps=100, delta=1e-5)
        assert eps == float("inf")
        assert len(_said(seen, INFINITY)) == 1 and "noise_multiplier=1e-160" in _said(seen, INFINITY)[0]


@pytest.mark.parametrize("kw", [dict(noise_multiplier=1e-6, delta=1e-5), dict(noise_multiplier=3.0, delta=1e-13)],
                         ids=["a-grid-too-large", "a-delta-too-small-for-a-pld"])
def test_two_pld_accountings_handed_to_rdp_each_say_so(kw):
    numbers = []
    for _ in range(2):
        with caught() as seen:
            numbers.append(dpsgd_epsilon(**kw, sample_rate=0.01, steps=1000, accountant="pld"))
        assert len(_said(seen, HANDED_OVER)) == 1
    assert numbers[0] == numbers[1] == dpsgd_epsilon(**kw, sample_rate=0.01, steps=1000, accountant="rdp")


def test_an_odometer_read_after_each_of_many_epochs_says_its_reason_once():
    for accountant, sigma, text in [("rdp", 1e-160, INFINITY), ("pld", 1e-6, HANDED_OVER)]:
        ledger = PrivacyLedger(delta=1e-5, accountant=accountant)
        with caught() as seen:
            for _ in range(300):
                ledger.epsilon_if(dpsgd_event(noise_multiplier=sigma, sample_rate=0.01, steps=10))
                ledger.spend(dpsgd_event(noise_multiplier=sigma, sample_rate=0.01, steps=10))
                _ = ledger.epsilon, ledger.accountant_used
        assert len(_said(seen, text)) == 1, accountant
        assert ledger.caveats == tuple(_said(seen, text))  # kept with the ledger's numbers, for a run's result
        again = PrivacyLedger(delta=1e-5, accountant=accountant)  # the next run's odometer: says it too
        with caught() as seen:
            again.spend(dpsgd_event(noise_multiplier=sigma, sample_rate=0.01, steps=10))
        assert len(_said(seen, text)) == 1


def test_an_epsilon_curve_of_many_points_says_its_reason_once():
    with caught() as seen:
        curve = epsilon_curve(noise_multiplier=1e-160, sample_rate=0.01, delta=1e-5, steps=list(range(0, 5000, 10)))
    assert curve[0] == 0 and (curve[1:] == float("inf")).all()
    assert len(_said(seen, INFINITY)) == 1


def test_an_ordinary_ledger_has_no_caveats_and_warns_nothing():
    ledger = PrivacyLedger(delta=1e-5, accountant="pld")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DPCoreWarning)
        ledger.spend(dpsgd_event(noise_multiplier=1.0, sample_rate=0.01, steps=1000))
    assert ledger.caveats == ()


def test_a_calibration_says_the_reason_of_the_noise_it_answers_and_none_of_its_trials():
    kw = dict(target_epsilon=1e300, delta=1e-5, sample_rate=0.01, steps=100, accountant="pld")
    for _ in range(2):
        with caught() as seen:
            sigma = calibrate_noise_multiplier(**kw)
        with caught() as reported:
            dpsgd_epsilon(noise_multiplier=sigma, sample_rate=0.01, steps=100, delta=1e-5, accountant="pld")
        # not the search's coarse grid (ten times fewer points at the same noise): no epsilon is reported on it
        assert _said(seen, HANDED_OVER) == _said(reported, HANDED_OVER) and len(_said(reported, HANDED_OVER)) == 1


def test_inside_reasons_unsaid_a_number_keeps_its_reason_without_saying_it():
    ledger = PrivacyLedger(delta=1e-5)
    with caught() as seen, reasons_unsaid():
        ledger.spend(dp_accounting.GaussianDpEvent(1e-160))
    assert seen == [] and len(ledger.caveats) == 1
    with caught() as seen:
        ledger.spend(dp_accounting.GaussianDpEvent(1e-160))  # outside: said now, to the caller that gets it
    assert len(_said(seen, INFINITY)) == 1


def test_a_scripts_loop_shows_the_reason_once_by_pythons_own_filter():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")  # Python's default: a text once per place
        for _ in range(5):
            dpsgd_epsilon(noise_multiplier=1e-160, sample_rate=0.02, steps=50, delta=1e-5)
    assert len(_said(seen, INFINITY)) == 1
    assert seen[0].filename == __file__  # named at the script's own line


def test_a_ledger_without_dp_accountings_internals_says_why_its_epsilon_is_infinite(monkeypatch):
    """Where dp_accounting's internals moved (no PLD to chain), the ledger composes with fresh accountants; a delta
    too small for a PLD to resolve there gave infinity without a word, where every other infinity says why."""
    import dpcore.accounting.ledger as ledger_module

    monkeypatch.setattr(ledger_module, "_pld_of", lambda *a, **k: None)
    ledger = PrivacyLedger(delta=1e-5, accountant="pld")
    ledger.spend(dpsgd_event(noise_multiplier=1.0, sample_rate=0.01, steps=10))
    assert math.isfinite(ledger.epsilon) and ledger.caveats == ()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert ledger.epsilon_at(1e-14) == math.inf
    assert any("cannot resolve delta=1e-14" in r and "infinity" in r for r in ledger.caveats)
    assert any("cannot resolve delta=1e-14" in str(w.message) for w in seen)


@pytest.mark.parametrize("spend", [lambda ledger: ledger.spend(dp_accounting.GaussianDpEvent(2.0)),
                                   lambda ledger: ledger.spend(dpsgd_event(noise_multiplier=1.0, sample_rate=0.1,
                                                                           steps=10))],
                         ids=["gaussian", "dp-sgd"])
def test_a_pure_ledger_given_a_mechanism_without_pure_epsilon_says_why_its_total_is_infinite(spend):
    # a ledger read at delta = 0 that met Gaussian noise answered infinity with no caveat and no warning
    ledger = PrivacyLedger(delta=0.0)
    ledger.spend(dp_accounting.LaplaceDpEvent(1.0))
    with caught() as seen:
        eps = spend(ledger)
    assert eps == math.inf
    said = _said(seen, INFINITY)
    assert len(said) == 1 and "delta = 0" in said[0] and "epsilon_at" in said[0]
    assert ledger.caveats == tuple(said)


def test_a_pure_ledger_of_laplace_releases_says_nothing():
    ledger = PrivacyLedger(delta=0.0)
    with caught() as seen:
        assert ledger.spend(dp_accounting.LaplaceDpEvent(2.0)) == 0.5
        assert ledger.spend(dp_accounting.LaplaceDpEvent(1.0)) == 1.5
    assert not seen and ledger.caveats == ()
