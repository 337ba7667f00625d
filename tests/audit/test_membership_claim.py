"""A membership audit is read against a claim about what it tests: whole records added or removed."""
from __future__ import annotations

import math
import warnings
from types import SimpleNamespace

import pytest

from dpcore.accounting.neighbouring import Neighbouring
from dpcore.audit import input_canary_audit, membership_audit, membership_claim


def _run(epsilon=1.0, neighbouring=Neighbouring.ADD_REMOVE, unit="records"):
    return SimpleNamespace(epsilon=epsilon, neighbouring=neighbouring, unit=unit)


def test_only_a_guarantee_for_whole_records_added_or_removed_is_a_membership_claim():
    assert membership_claim(_run()) == (1.0, "")
    assert membership_claim(_run(), private=False) == (math.inf, "")
    assert membership_claim(_run(epsilon=math.inf)) == (math.inf, "")
    assert membership_claim(_run(neighbouring=None)) == (1.0, "")  # a claim with no relation: held to it
    for run, words in [(_run(neighbouring=Neighbouring.REPLACE_ONE), "one record replaced by another"),
                       (_run(neighbouring="replace_one"), "one record replaced by another"),
                       (_run(neighbouring=Neighbouring.REPLACE_ONE, unit="labels"), "only each record's label"),
                       (_run(unit="images"), "only each record's image"),
                       (_run(unit="clients"), "each client's whole data")]:
        claim, note = membership_claim(run)
        assert claim == math.inf and words in note and "ε = 1" in note and "no claim (∞)" in note


@pytest.mark.parametrize(("learner", "dataset", "words"), [
    ("label-dp-rr", "breast_cancer", "label"), ("erm-objective", "breast_cancer", "replaced"),
    ("dp-fedavg", "breast_cancer", "client")])
def test_a_learner_protecting_other_neighbours_is_audited_against_no_claim_and_keeps_its_own_epsilon(
        learner, dataset, words):
    knobs = {"rounds": 5, "clients": 100} if learner == "dp-fedavg" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        audit = membership_audit(learner, dataset, epsilon=1.0, params=knobs, attack="loss", seed=0)
        canaries = input_canary_audit(learner, dataset, epsilon=1.0, params=knobs, canaries=40, seed=0)
    assert audit.result.epsilon == math.inf and words in audit.result.claim_note
    assert audit.target.epsilon <= 1.0 + 1e-9  # what the run released, for the session's total
    assert audit.result.to_json_dict()["claim_note"] == audit.result.claim_note
    assert canaries.result.epsilon == math.inf and words in canaries.result.claim_note
    assert canaries.run_epsilon == pytest.approx(1.0, rel=1e-6)


def test_dpsgd_is_audited_against_its_own_epsilon():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        audit = membership_audit("dpsgd", "iris", epsilon=1.0, attack="loss", seed=0)
    assert audit.result.epsilon == audit.target.epsilon <= 1.0 + 1e-9 and audit.result.claim_note == ""


def test_the_epsilon_a_claim_note_names_is_rounded_up_not_to_the_nearest():
    """The note says what the run's guarantee is: 1.2349 read "ε = 1.23" (":.3g", to the nearest), below it."""
    _, note = membership_claim(_run(epsilon=1.2349, unit="clients"))
    assert "ε = 1.24 " in note


@pytest.mark.parametrize("audit_of", [
    lambda learner, delta: input_canary_audit(learner, "digits", epsilon=1.0, delta=delta, canaries=200, seed=0),
    lambda learner, delta: membership_audit(learner, "iris", epsilon=1.0, delta=delta, attack="loss", seed=0)])
def test_a_run_with_no_guarantee_is_read_at_the_delta_of_the_private_runs_beside_it(audit_of):
    # the non-private twin was read at its own delta = 0: on the Attack page's 500 records the most any attack could
    # prove was 3.95 beside the private run's 3.92, and the twin's own reading 3.01 where at delta 1e-5 it is 3.00
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        private, twin = audit_of("dpsgd", 1e-5), audit_of("non-private", 1e-5)
        pure = audit_of("output-perturbation", 1e-5)
    assert math.isinf(twin.result.epsilon) and twin.result.delta == private.result.delta == 1e-5
    assert twin.result.most_provable() == private.result.most_provable()
    assert pure.result.delta == 0.0  # a finite claim is read at its own delta: (1, 0)-DP is what it claims


def test_a_run_read_at_the_audits_delta_is_still_released_at_its_own_delta():
    # erm-objective protects one record replaced, so the audit tests no claim of it and reads it at the delta asked
    # for; what the session's total counts is the run's own (epsilon, 0)
    from dpcore.ui.audit import audit_release

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        audit = input_canary_audit("erm-objective", "digits", epsilon=1.0, delta=1e-5, canaries=200, seed=0)
    assert math.isinf(audit.result.epsilon) and audit.result.delta == 1e-5
    release = audit_release(audit)
    assert release["epsilon"] == 1.0 and release["delta"] == 0.0
