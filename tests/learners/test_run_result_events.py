"""Every registered learner returns its privacy event as a composable dp_accounting object."""
from __future__ import annotations

import json
import math
import pickle
import warnings

import dp_accounting
import pytest

from dpcore.accounting import ACCOUNTANTS, Neighbouring, PrivacyLedger, epsilon_of_event
from dpcore.learners import learners, run_learner

#: Small settings so every learner runs in a second or two (the accounting does not depend on them).
FAST = {
    "dpsgd": {"epochs": 2}, "non-private": {"epochs": 2}, "output-perturbation": {"epochs": 2},
    "label-dp-laplace": {"epochs": 2}, "label-dp-rr": {"epochs": 2},
    "pate": {"teachers": 4, "queries": 20},
    "dp-fedavg": {"clients": 5, "rounds": 3}, "fedavg-local-dp": {"clients": 5, "rounds": 3},
    "fedavg": {"clients": 5, "rounds": 3},
}
#: Learners whose RunResult.epsilon is exact by a closed form (SSP: the analytic Gaussian of Balle and Wang 2018
#: on the mu-GDP composition) where dp_accounting's accountants give upper bounds: the PLD's pessimistic grid lands
#: a hair above, RDP further.
CLOSED_FORM = {"ssp": 1e-6}


def _data(spec) -> str:
    if spec.images_only:
        return "digits"
    return "iris" if "classification" in spec.tasks else "diabetes"


def _run(name: str, **kw):
    spec = learners()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # leak / convergence warnings are tested where they are raised
        return run_learner(name, _data(spec), epsilon=kw.get("epsilon", 2.0), delta=1e-5, seed=0,
                           params={**FAST.get(name, {}), **kw.get("params", {})})


@pytest.fixture(scope="module")
def results():
    return {}


@pytest.mark.parametrize("name", sorted(learners()))
def test_event_is_a_dp_event_whose_epsilon_is_the_reported_one(name, results):
    res = results.setdefault(name, _run(name))
    if not learners()[name].private:
        assert res.event is None and res.neighbouring is None
        return
    assert isinstance(res.event, dp_accounting.DpEvent), type(res.event)
    assert isinstance(res.neighbouring, Neighbouring)
    assert not any(isinstance(v, (dp_accounting.DpEvent, str)) and "DpEvent" in str(v) for v in res.extras.values())
    spent = {acct: epsilon_of_event(res.event, delta=res.delta, accountant=acct, neighbouring=res.neighbouring)
             for acct in ACCOUNTANTS}
    tol = CLOSED_FORM.get(name, 1e-9)
    closest = min(spent.values(), key=lambda e: abs(e - res.epsilon))
    assert closest == pytest.approx(res.epsilon, rel=tol), spent
    assert min(spent.values()) <= res.epsilon * (1 + tol)  # the run never reports less than its event spends


@pytest.mark.parametrize("name", sorted(n for n, s in learners().items() if s.private))
def test_result_with_event_pickles_and_serialises(name, results):
    res = results.setdefault(name, _run(name))
    back = pickle.loads(pickle.dumps(res))
    assert back.event == res.event and back.neighbouring is res.neighbouring
    json.dumps(res.to_json_dict())


def test_runs_compose_on_one_ledger():
    """Two DP-SGD runs and a DPLloyd run on the same data: the ledger's total equals one accountant on all three."""
    runs = [_run("dpsgd", epsilon=1.0), _run("dpsgd", epsilon=1.0, params={"epochs": 3}), _run("dplloyd")]
    assert {r.neighbouring for r in runs} == {Neighbouring.ADD_REMOVE}
    ledger = PrivacyLedger(delta=1e-5)
    for r in runs:
        ledger.spend(r.event)
    rdp = dp_accounting.rdp.RdpAccountant(orders=list(range(2, 200)) + [256, 512, 1024])
    for r in runs:
        rdp.compose(r.event)
    pure_dplloyd = runs[2].epsilon
    assert ledger.epsilon < runs[0].epsilon + runs[1].epsilon + pure_dplloyd  # composes better than summing
    assert ledger.epsilon == pytest.approx(rdp.get_epsilon(1e-5), rel=0.02)  # an independent order grid


def test_dpsgd_without_noise_says_not_private():
    res = _run("dpsgd", params={"noise_multiplier": 0.0})
    assert math.isinf(res.epsilon)
    assert isinstance(res.event, dp_accounting.NonPrivateDpEvent)
    assert math.isinf(epsilon_of_event(res.event, delta=1e-5))


@pytest.mark.parametrize("params", [{"mechanism": "laplace", "budget": "pixel"}, {"mechanism": "dppix", "m": 4},
                                    {"mechanism": "gaussian", "budget": "pixel"},
                                    {"mechanism": "laplace", "label_share": 0.25}])
def test_noisy_input_event_is_the_per_image_guarantee(params):
    res = _run("noisy-input", epsilon=0.5, params={**params, "baseline": False})
    pld = epsilon_of_event(res.event, delta=res.delta, accountant="pld", neighbouring=res.neighbouring)
    # pure parts exactly; the Gaussian's analytic epsilon (Balle and Wang 2018) against dp_accounting's PLD
    assert pld == pytest.approx(res.epsilon, rel=1e-3 if params["mechanism"] == "gaussian" else 1e-9)
