"""A ledger's units and federations as a script uses them: refusals that name the ledger which takes the run, a
copied ledger that spends on its own, and a sweep's client-level total that needs to know its federation."""
import copy
import math
import re

import dp_accounting
import pandas as pd
import pytest

from dpcore.accounting import Neighbouring, PrivacyLedger, common_unit, epsilon_of_event
from dpcore.exceptions import BudgetExceededError, DPCoreWarning, DPTypeError, DPValueError
from dpcore.learners.base import RunResult
from dpcore.sweep.summary import composition

FEDERATION = "10 clients (IID), the 100 training rows dealt out with seed 0"


def _run(learner, *, unit, neighbouring, federation=None, epsilon=0.5):
    """A run's result as run_learner gives it: the event of a Laplace mechanism of that epsilon."""
    return RunResult(learner, "data", "classification", {}, epsilon, 0.0,
                     event=dp_accounting.LaplaceDpEvent(1 / epsilon), neighbouring=Neighbouring.of(neighbouring),
                     unit=unit, federation=federation)


@pytest.mark.parametrize("ledger, run", [
    # local DP in federated learning protects a client replaced: the ledger to use is of clients and replace-one
    (dict(unit="clients"), _run("fedavg-local-dp", unit="clients", neighbouring="replace-one", federation=FEDERATION)),
    (dict(), _run("fedavg-local-dp", unit="clients", neighbouring="replace-one", federation=FEDERATION)),
    # label DP protects a label replaced: a ledger of labels under add/remove, or one of clients, names both
    (dict(unit="labels"), _run("label-dp-rr", unit="labels", neighbouring="replace-one")),
    (dict(unit="clients"), _run("label-dp-rr", unit="labels", neighbouring="replace-one")),
    (dict(unit="clients"), _run("erm-objective", unit="records", neighbouring="replace-one")),
])
def test_a_refused_run_is_taken_by_the_ledger_its_refusal_names(ledger, run):
    """Each refusal names a ledger to build; that ledger, built as written, takes the run. They named one half of
    it: a local-DP federated run in a ledger of clients was told to use PrivacyLedger(neighbouring='replace-one'), a
    ledger of records, which refuses it in turn; label DP in a ledger of clients was told PrivacyLedger(unit='labels'),
    which refuses a label replaced."""
    with pytest.raises(DPValueError) as refusal:
        PrivacyLedger(delta=1e-5, **ledger).spend(run)
    named = re.search(r"PrivacyLedger\([^)]*\)", str(refusal.value))
    assert named, str(refusal.value)
    suggested = eval(named.group(0).replace("PrivacyLedger(", "PrivacyLedger(delta=1e-5, "))  # noqa: S307
    assert suggested.spend(run) == pytest.approx(run.epsilon)


def test_a_refusal_for_a_client_replaced_speaks_of_clients():
    """A ledger of clients counts a client added or removed, and says so (it said "one record")."""
    run = _run("fedavg-local-dp", unit="clients", neighbouring="replace-one", federation=FEDERATION)
    with pytest.raises(DPValueError, match="protects one client replaced, and this ledger counts one client added"):
        PrivacyLedger(delta=1e-5, unit="clients").epsilon_if(run)


def test_a_copied_ledger_spends_on_its_own():
    """copy.copy of a ledger shared its list of events: what the copy spent appeared in the original's events (and
    its event, which an auditor would recompute) while the original's epsilon left it out."""
    ledger = PrivacyLedger(delta=1e-5, unit="clients")
    first = _run("dp-fedavg", unit="clients", neighbouring="add-remove", federation=FEDERATION)
    ledger.spend(first)
    twin = copy.copy(ledger)
    twin.spend(_run("dp-fedavg", unit="clients", neighbouring="add-remove", federation=FEDERATION, epsilon=2.0))
    assert (len(ledger), len(twin)) == (1, 2)
    assert ledger.epsilon == pytest.approx(0.5) and twin.epsilon == pytest.approx(2.5)
    assert epsilon_of_event(ledger.event, delta=1e-5) == pytest.approx(ledger.epsilon)
    assert twin.federation == ledger.federation == FEDERATION


def test_client_runs_that_do_not_say_their_federation_compose_to_no_guarantee():
    """A ledger of clients refuses a run without its federation; a sweep table's composition summed such runs as
    if they were one federation's. Their clients may be different groups of records: no one guarantee."""
    t = pd.DataFrame({"epsilon": [1.0, 1.0], "delta": [1e-5, 1e-5], "neighbouring": ["add-remove"] * 2,
                      "unit": ["clients"] * 2})
    assert composition(t) == (math.inf, 1.0, False, None)
    assert composition(t.assign(federation=[FEDERATION, ""])).unit is None
    assert composition(t.assign(federation=["", ""])).unit is None
    assert composition(t.assign(federation=[FEDERATION] * 2))[:2] == (2.0, 2e-5)


def test_common_unit_of_one_string_is_refused_by_name():
    """common_unit('records') read the string's letters as units and said it got 'r'."""
    with pytest.raises(DPTypeError, match=r"units must be a list.*\['records'\]"):
        common_unit("records")
    assert common_unit(["records"]) == "records"


def test_a_total_whose_deltas_use_up_the_ledgers_delta_says_why_it_is_infinite():
    """DP-SGD's (1, 1e-5) under add/remove holds for a record replaced at (2, 3.7e-5), more than a replace-one
    ledger's delta of 1e-5: the total is infinity (never a smaller number), and it said nothing about why."""
    run = RunResult("dpsgd", "data", "classification", {}, 1.0, 1e-5, event=dp_accounting.GaussianDpEvent(5.0),
                    neighbouring=Neighbouring.ADD_REMOVE)
    ledger = PrivacyLedger(delta=1e-5, neighbouring="replace-one")
    with pytest.warns(DPCoreWarning, match=r"delta = 3\.72e-05 together, at least the delta = 1e-05"):
        assert math.isinf(ledger.spend(run))
    assert any("larger delta" in c for c in ledger.caveats)
    assert ledger.epsilon_at(1e-4) == pytest.approx(2.0)


def test_a_mechanism_spent_in_a_ledger_composes_its_event_under_the_relation_it_protects():
    # spend(RandomizedResponse(...)) failed with "neighbouring must be 'add-remove' or 'replace-one', got
    # \"replace-one (one record's category changes)\"", and a Gaussian likewise with its description
    from dpcore import Gaussian, RandomizedResponse
    from dpcore.mechanisms import Exponential

    g = Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    assert PrivacyLedger(delta=1e-5).spend(g) == epsilon_of_event(g.dp_event, delta=1e-5)
    rr = RandomizedResponse(epsilon=1.0, k=3)
    for mechanism in (rr, Exponential(epsilon=0.5)):
        with pytest.raises(DPValueError, match=r"protects one record's value changed.*neighbouring='replace-one'"):
            PrivacyLedger(delta=1e-5).spend(mechanism)
    assert PrivacyLedger(delta=1e-5, neighbouring="replace-one").spend(Exponential(epsilon=0.5)) >= 0.5
    # drawn at ε = 1 under a budget of 1: the accountant's rounding up (1.0000000000000004) read "1, over the budget 1"
    ledger = PrivacyLedger(delta=1e-5, neighbouring="replace-one", budget=1.0)
    assert ledger.spend(rr) >= 1.0
    with pytest.raises(BudgetExceededError, match=r"would bring epsilon to 2, over the budget 1"):
        ledger.spend(rr)


def test_a_mechanism_class_spent_for_an_instance_is_refused_as_a_class():
    # PrivacyLedger.spend(Laplace) read the class's description of its relation as one and said "neighbouring must
    # be 'add-remove' ... got 'add/remove or replace-one (sensitivity defines it)'"
    from dpcore.mechanisms import Laplace

    ledger = PrivacyLedger(delta=0.0)
    with pytest.raises(DPTypeError, match=r"the class Laplace itself: spend an instance \(Laplace\(epsilon="):
        ledger.spend(Laplace)
    with pytest.raises(DPTypeError, match="got the class Laplace itself"):
        ledger.epsilon_if(Laplace)
    assert len(ledger) == 0 and ledger.spend(Laplace(epsilon=0.5)) == 0.5
