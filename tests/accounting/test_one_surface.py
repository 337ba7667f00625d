"""One calibration, one ledger, one neighbouring relation: checked against dp_accounting, Opacus and closed forms."""
from __future__ import annotations

import math
import warnings

import dp_accounting
import numpy as np
import pytest

from dpcore.accounting import (
    EpsilonDeltaDpEvent,
    Neighbouring,
    PrivacyLedger,
    calibrate,
    calibrate_noise_multiplier,
    dpsgd_event,
    epsilon_of_event,
    make_accountant,
)
from dpcore.exceptions import BudgetExceededError, DPCoreError, DPValueError
from dpcore.federated import dp_fedavg_event, local_dp_event
from dpcore.pate import calibrate_noise_scale, pate_event

# ------------------------------------------------------------------------------------------- calibration
#: (caller, event builder, keyword arguments of calibrate, the value the caller's own calibrator returned before
#: there was one calibrate(): dpcore.accounting.calibrate_noise_multiplier, federated.calibrate_dp_fedavg /
#: calibrate_local_dp and pate.calibrate_noise_scale, each with its own search and nudge loop)
CALLERS = [
    ("dpsgd rdp", lambda s: dpsgd_event(noise_multiplier=s, sample_rate=0.01, steps=1000),
     dict(target_epsilon=1.0, delta=1e-5), 1.513262),
    ("dpsgd rdp large q", lambda s: dpsgd_event(noise_multiplier=s, sample_rate=0.25, steps=240),
     dict(target_epsilon=8.0, delta=1e-5), 2.633569),
    ("dpsgd pld", lambda s: dpsgd_event(noise_multiplier=s, sample_rate=0.02, steps=500),
     dict(target_epsilon=1.0, delta=1e-5, accountant="pld"), 1.879562),
    ("dp-fedavg", lambda s: dp_fedavg_event(noise_multiplier=s, sample_rate=0.2, rounds=50),
     dict(target_epsilon=4.0, delta=1e-5), 1.945605),
    ("local dp", lambda s: local_dp_event(noise_multiplier=s, participations=12),
     dict(target_epsilon=8.0, delta=1e-5, neighbouring="replace-one"), 4.417988),
    ("pate gnmax", lambda s: pate_event(aggregator="gnmax", noise_scale=s, queries=50),
     dict(target_epsilon=5.0, delta=1e-5), 9.526410),
    ("pate lnmax", lambda s: pate_event(aggregator="lnmax", noise_scale=s, queries=100),
     dict(target_epsilon=2.0, delta=1e-5), 41.908596),
    ("pate lnmax pure", lambda s: pate_event(aggregator="lnmax", noise_scale=s, queries=100),
     dict(target_epsilon=2.0, delta=0.0), 100.0),
]


@pytest.mark.parametrize("caller,make,kw,before", CALLERS, ids=[c[0] for c in CALLERS])
def test_every_caller_spends_at_most_the_target_and_agrees_with_its_old_calibrator(caller, make, kw, before):
    x = calibrate(make, **kw)
    spent = epsilon_of_event(make(x), delta=kw["delta"], accountant=kw.get("accountant", "rdp"),
                             neighbouring=kw.get("neighbouring", "add-remove"))
    assert spent <= kw["target_epsilon"]
    # not wastefully noisy (PLD: searched on a 1e-3 grid, read on the finer 1e-4 grid of reported epsilons)
    assert spent >= kw["target_epsilon"] * (1 - (1e-3 if kw.get("accountant") == "pld" else 1e-4))
    assert x == pytest.approx(before, rel=5e-4)


@pytest.mark.parametrize("caller,make,kw,before", [c for c in CALLERS if "pld" not in c[0] and c[2]["delta"] > 0],
                         ids=[c[0] for c in CALLERS if "pld" not in c[0] and c[2]["delta"] > 0])
def test_calibrate_agrees_with_dp_accountings_own_search(caller, make, kw, before):
    """dp_accounting.calibrate_dp_mechanism (Brent on the parameter itself, tol 1e-7) finds the same noise."""
    rel = Neighbouring.of(kw.get("neighbouring", "add-remove"))
    ref = dp_accounting.calibrate_dp_mechanism(
        lambda: make_accountant("rdp", neighbouring=Neighbouring.ADD_REMOVE if "local" in caller else rel),
        make, kw["target_epsilon"], kw["delta"], bracket_interval=dp_accounting.LowerEndpointAndGuess(1e-3, 1.0),
        tol=1e-7)
    assert calibrate(make, **kw) == pytest.approx(ref, rel=1e-5)


@pytest.mark.parametrize("target,q,steps", [(1.0, 0.01, 1000), (3.0, 0.004, 10000), (8.0, 0.25, 240)])
def test_dpsgd_noise_agrees_with_opacus(target, q, steps):
    """Opacus's get_noise_multiplier (its own RDP analysis and search) lands within its tolerance of ours."""
    from opacus.accountants.utils import get_noise_multiplier

    ours = calibrate_noise_multiplier(target_epsilon=target, delta=1e-5, sample_rate=q, steps=steps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Opacus warns when its best order is its largest
        theirs = get_noise_multiplier(target_epsilon=target, target_delta=1e-5, sample_rate=q, steps=steps,
                                      accountant="rdp", epsilon_tolerance=0.001)
    assert ours == pytest.approx(theirs, rel=5e-3)


def test_pate_wrapper_is_the_one_calibration():
    assert calibrate_noise_scale(aggregator="gnmax", target_epsilon=5.0, delta=1e-5, queries=50) == calibrate(
        lambda s: pate_event(aggregator="gnmax", noise_scale=s, queries=50), target_epsilon=5.0, delta=1e-5,
        guess=10.0)
    with pytest.raises(DPValueError, match="delta > 0"):
        calibrate_noise_scale(aggregator="gnmax", target_epsilon=5.0, delta=0.0, queries=50)


def test_calibrate_explains_an_unreachable_target():
    with pytest.raises(DPValueError, match="Gaussian mechanism needs delta > 0"):
        calibrate(lambda s: dp_accounting.GaussianDpEvent(s), target_epsilon=1.0, delta=0.0, upper=1e3)
    with pytest.raises(DPCoreError, match="target_epsilon"):
        calibrate(lambda s: dp_accounting.GaussianDpEvent(s), target_epsilon=-1.0, delta=1e-5)


def test_calibrate_returns_the_least_noise_when_any_meets_the_target():
    assert calibrate(lambda s: dp_accounting.LaplaceDpEvent(s), target_epsilon=1e4, delta=0.0) == 1e-3


# ------------------------------------------------------------------------------------------- epsilon of an event
def test_pure_compositions_add_up_at_delta_zero():
    lap = dp_accounting.LaplaceDpEvent(0.5)  # 2-DP
    rr = dp_accounting.RandomizedResponseDpEvent(noise_parameter=0.5, num_buckets=10)  # ln 11 (k-ary RR)
    ev = dp_accounting.ComposedDpEvent([dp_accounting.SelfComposedDpEvent(lap, 3), rr, EpsilonDeltaDpEvent(0.25)])
    assert epsilon_of_event(ev, delta=0.0, neighbouring="replace-one") == pytest.approx(6 + math.log(11) + 0.25)
    assert math.isinf(epsilon_of_event(dp_accounting.GaussianDpEvent(3.0), delta=0.0))


@pytest.mark.parametrize("eps,k", [(0.3, 2), (1.0, 3), (math.log(11), 10), (4.0, 26)])
def test_randomized_response_closed_form(eps, k):
    """k-ary RR keeping the value w.p. e^eps / (e^eps + k - 1) is exactly eps-DP: ln(p_keep / p_other)."""
    from dpcore.mechanisms import RandomizedResponse

    rr = RandomizedResponse(epsilon=eps, k=k)
    assert epsilon_of_event(rr.dp_event, delta=0.0, neighbouring=Neighbouring.REPLACE_ONE) == pytest.approx(eps)
    pld = make_accountant("pld", neighbouring="replace-one").compose(rr.dp_event)
    assert pld.get_epsilon(0.0) == pytest.approx(eps, abs=1e-3)  # dp_accounting's own PLD agrees


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_at_positive_delta_pure_parts_never_cost_more_than_their_sum(accountant):
    lap = dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(10.0), 400)  # 400 x 0.1 = 40 by summing
    e = epsilon_of_event(lap, delta=1e-5, accountant=accountant)
    ref = make_accountant(accountant).compose(lap).get_epsilon(1e-5)
    assert e == pytest.approx(min(40.0, ref))
    assert e < 40.0  # many small Laplace releases: the accountant beats basic composition
    # an event carries noise / sensitivity under its own relation: a Laplace event means the same under both
    # (dp_accounting's PLD refuses a LaplaceDpEvent under its REPLACE_ONE, which would double the shift)
    assert epsilon_of_event(dp_accounting.LaplaceDpEvent(2.0), delta=1e-5, accountant="pld",
                            neighbouring="replace-one") == epsilon_of_event(dp_accounting.LaplaceDpEvent(2.0),
                                                                            delta=1e-5, accountant="pld")


def test_epsilon_delta_events_compose_by_basic_composition():
    sgd = dpsgd_event(noise_multiplier=1.0, sample_rate=0.01, steps=1000)
    ev = dp_accounting.ComposedDpEvent([sgd, EpsilonDeltaDpEvent(0.5, 2e-6)])
    rest = make_accountant("rdp").compose(sgd).get_epsilon(1e-5 - 2e-6)
    # rel 1e-9: the ledger allows for dp_accounting's rounding at every step (trusted_step_rdp), never below it
    assert 0.5 + rest <= epsilon_of_event(ev, delta=1e-5) == pytest.approx(0.5 + rest, rel=1e-9)
    assert math.isinf(epsilon_of_event(ev, delta=1e-6))  # its own delta is more than the whole budget
    with pytest.raises(DPValueError, match="finite epsilon"):
        EpsilonDeltaDpEvent(math.inf)


def test_an_event_no_accountant_models_is_refused_clearly():
    with pytest.raises(DPValueError, match="cannot compose"):
        epsilon_of_event(dpsgd_event(noise_multiplier=1.0, sample_rate=0.1, steps=10), delta=1e-5,
                         neighbouring="replace-one")  # dp_accounting's RDP subsamples under add/remove only
    assert epsilon_of_event(dpsgd_event(noise_multiplier=1.0, sample_rate=0.1, steps=10), delta=1e-5,
                            accountant="pld", neighbouring="replace-one") > 0


def test_replace_one_does_not_double_an_already_doubled_sensitivity():
    """Events carry noise / sensitivity under their own relation: a plain Gaussian reads the same under both."""
    g = dp_accounting.GaussianDpEvent(2.0)
    for acct in ("rdp", "pld"):
        assert epsilon_of_event(g, delta=1e-5, accountant=acct, neighbouring="replace-one") == pytest.approx(
            epsilon_of_event(g, delta=1e-5, accountant=acct), rel=1e-12)


# ------------------------------------------------------------------------------------------- the ledger
def test_ledger_mixes_mechanisms_and_refuses_a_spend_past_its_budget():
    led = PrivacyLedger(delta=1e-5, budget=2.0)
    sgd = dpsgd_event(noise_multiplier=1.5, sample_rate=0.01, steps=500)
    lap = dp_accounting.LaplaceDpEvent(4.0)
    assert led.epsilon == 0.0 and len(led) == 0
    first = led.spend(sgd)
    ahead = led.epsilon_if(lap)
    assert led.epsilon == first and len(led) == 1  # asking did not spend
    assert led.spend(lap) == ahead
    whole = make_accountant("rdp").compose(dp_accounting.ComposedDpEvent([sgd, lap])).get_epsilon(1e-5)
    assert whole <= led.epsilon == pytest.approx(whole, rel=1e-9)  # and each step's rounding (trusted_step_rdp)
    with pytest.raises(BudgetExceededError, match="budget"):
        led.spend(dp_accounting.SelfComposedDpEvent(lap, 100))
    assert len(led) == 2 and led.epsilon == pytest.approx(ahead)
    assert led.event == dp_accounting.ComposedDpEvent([sgd, lap])
    assert led.epsilon_at(1e-3) < led.epsilon


def test_pld_ledger_matches_a_fresh_pld_accountant_on_mixed_events():
    led = PrivacyLedger(delta=1e-6, accountant="pld")
    events = [dpsgd_event(noise_multiplier=2.0, sample_rate=0.05, steps=40), dp_accounting.GaussianDpEvent(5.0),
              dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(3.0), 2)]
    for ev in events:
        led.spend(ev)
    acc = make_accountant("pld")
    for ev in events:
        acc.compose(ev)
    assert led.epsilon == pytest.approx(acc.get_epsilon(1e-6), rel=1e-6)


# ------------------------------------------------------------------------------------------- neighbouring
@pytest.mark.parametrize("spelling,member", [
    ("add_remove", Neighbouring.ADD_REMOVE), ("add-remove", Neighbouring.ADD_REMOVE),
    ("Add/Remove", Neighbouring.ADD_REMOVE), ("add_or_remove_one", Neighbouring.ADD_REMOVE),
    (dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE, Neighbouring.ADD_REMOVE),
    ("replace_one", Neighbouring.REPLACE_ONE), ("replace-one", Neighbouring.REPLACE_ONE),
    ("replace", Neighbouring.REPLACE_ONE), (dp_accounting.NeighboringRelation.REPLACE_ONE, Neighbouring.REPLACE_ONE),
    (Neighbouring.REPLACE_ONE, Neighbouring.REPLACE_ONE),
])
def test_every_old_spelling_converts_once(spelling, member):
    assert Neighbouring.of(spelling) is member


def test_unknown_relations_get_a_clear_error():
    with pytest.raises(DPValueError, match="neighbouring must be 'add-remove'.*'replace-one'.*got 'swap'"):
        Neighbouring.of("swap")
    with pytest.raises(TypeError, match="neighbouring must be a Neighbouring"):
        Neighbouring.of(3)
    with pytest.raises(DPValueError, match="REPLACE_SPECIAL"):
        Neighbouring.of(dp_accounting.NeighboringRelation.REPLACE_SPECIAL)


def test_the_relation_reaches_dp_accounting():
    assert make_accountant("pld", neighbouring=Neighbouring.REPLACE_ONE).neighboring_relation is \
        dp_accounting.NeighboringRelation.REPLACE_ONE
    # Poisson subsampling amplifies differently under the two relations (PLD models both)
    sgd = dpsgd_event(noise_multiplier=1.0, sample_rate=0.05, steps=100)
    a = epsilon_of_event(sgd, delta=1e-5, accountant="pld", neighbouring="add-remove")
    r = epsilon_of_event(sgd, delta=1e-5, accountant="pld", neighbouring="replace-one")
    assert r > a
    np.testing.assert_allclose(r, make_accountant("pld", neighbouring="replace-one").compose(sgd).get_epsilon(1e-5))
