"""AuditResult: what a page or the command line receives, JSON keys and pickling."""
from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pytest

from dpcore.audit import AuditResult, audit_from_scores, bounds, roc
from dpcore.exceptions import DPCoreError

REQUIRED_KEYS = {
    "epsilon", "epsilon_lower_bound", "confidence", "auc", "tpr_at_fpr",
    "attack", "n_members", "n_nonmembers", "seconds",
}


def _scores(seed=0, epsilon=1.0, n=1000):
    rng = np.random.default_rng(seed)
    return rng.laplace(1.0, 1.0 / epsilon, n), rng.laplace(0.0, 1.0 / epsilon, n + 10)


def _result(**kw):
    members, nonmembers = _scores()
    args = dict(attack="loss-threshold", epsilon=1.0, delta=1e-5, rng=0)
    args.update(kw)
    return audit_from_scores(members, nonmembers, **args), members, nonmembers


def test_json_dict_has_the_documented_keys_and_values():
    result, members, nonmembers = _result()
    d = result.to_json_dict()
    assert REQUIRED_KEYS <= set(d)
    assert list(d["tpr_at_fpr"]) == ["0.001", "0.01"]
    assert d["tpr_at_fpr"]["0.01"] == roc.tpr_at_fpr(members, nonmembers, 0.01)
    assert d["auc"] == pytest.approx(roc.roc_auc(members, nonmembers))
    assert (d["n_members"], d["n_nonmembers"], d["attack"], d["epsilon"]) == (1000, 1010, "loss-threshold", 1.0)
    expected = bounds.epsilon_lower_bound_from_scores(members, nonmembers, delta=1e-5, rng=0).epsilon
    assert d["epsilon_lower_bound"] == expected
    assert d["seconds"] >= 0 and d["confidence"] == 0.95
    json.dumps(d, allow_nan=False)


def test_a_non_private_claim_is_written_as_null():
    result, _, _ = _result(epsilon=float("inf"))
    d = result.to_json_dict()
    assert d["epsilon"] == "inf"  # as train writes a non-private run's
    json.dumps(d, allow_nan=False)


def test_result_pickles_and_is_frozen_with_read_only_curves():
    result, _, _ = _result()
    again = pickle.loads(pickle.dumps(result))
    assert again.to_json_dict() == result.to_json_dict()
    np.testing.assert_array_equal(again.fpr, result.fpr)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.auc = 0.0  # type: ignore[misc]
    with pytest.raises(ValueError):
        result.tpr[0] = 1.0
    assert result.fpr[0] == 0.0 and result.tpr[-1] == 1.0


def test_a_broken_mechanism_shows_a_bound_above_its_claim():
    members, nonmembers = _scores(seed=1, epsilon=4.0)
    result = audit_from_scores(members, nonmembers, attack="canary", epsilon=1.0, delta=0.0, rng=1)
    assert result.epsilon_lower_bound > result.epsilon


def test_seconds_spent_before_the_audit_are_kept():
    result, _, _ = _result(seconds=12.5)
    assert result.seconds >= 12.5


@pytest.mark.parametrize(
    "kw, match",
    [(dict(epsilon=0.0), "epsilon"), (dict(delta=2.0), "delta"), (dict(attack=""), "attack"),
     (dict(confidence=0.0), "confidence"), (dict(method="all"), "method")],
)
def test_bad_arguments_name_the_parameter(kw, match):
    with pytest.raises(DPCoreError, match=match):
        _result(**kw)


def test_result_can_be_built_directly():
    r = AuditResult(attack="one-run", epsilon=2.0, delta=1e-5, epsilon_lower_bound=0.5, confidence=0.95, auc=0.6,
                    tpr_at_fpr={"0.001": 0.0, "0.01": 0.02}, advantage=0.1, n_members=10, n_nonmembers=10,
                    fpr=[0.0, 1.0], tpr=[0.0, 1.0], seconds=1.0, bound_method="one-run-coins")
    assert r.to_json_dict()["bound_method"] == "one-run-coins"
    assert isinstance(r.fpr, np.ndarray)


def test_the_bound_method_is_recorded_and_a_split_is_seeded():
    first, _, _ = _result(method="split", rng=3)
    again, _, _ = _result(method="split", rng=3)
    assert first.bound_method == "split" and first.epsilon_lower_bound == again.epsilon_lower_bound
    assert _result()[0].bound_method == "bonferroni"


def test_the_most_a_two_sample_audit_can_prove_is_clopper_pearsons_bound_for_a_perfect_attack():
    # every member flagged and no non-member: one-sided Clopper-Pearson limits at the Bonferroni levels a / (2P) and
    # a / (2N) (Jagielski, Ullman & Oprea 2020), written out: TPR >= (a / 2P)^(1/P), FPR <= 1 - (a / 2N)^(1/N)
    a, P, N = 0.05, 300, 500
    tpr_lo, fpr_hi = (a / (2 * P)) ** (1 / P), 1 - (a / (2 * N)) ** (1 / N)
    expected = max(np.log(tpr_lo / fpr_hi), np.log((1 - fpr_hi) / (1 - tpr_lo)))
    members, nonmembers = np.random.default_rng(1).normal(1, 1, P), np.random.default_rng(2).normal(0, 1, N)
    result = audit_from_scores(members, nonmembers, attack="loss-threshold", epsilon=1.0, delta=0.0)
    assert result.most_provable() == pytest.approx(expected, rel=1e-9)
    assert result.epsilon_lower_bound < result.most_provable()
    assert result.to_json_dict()["most_provable"] == result.most_provable()
    perfect = audit_from_scores(np.full(P, 5.0), np.zeros(N), attack="perfect", epsilon=np.inf, delta=0.0)
    assert perfect.epsilon_lower_bound == pytest.approx(perfect.most_provable())


def test_the_most_a_one_run_audit_can_prove_is_the_binomial_bound_of_its_best_rule_all_right():
    # Steinke, Nasr & Jagielski 2023 at delta = 0: v right of r guesses proves eps where
    # P[Binomial(r, e^eps / (1 + e^eps)) >= v] = a / (number of rules); solved here with scipy, rule by rule
    from scipy import optimize, stats

    from dpcore.audit.membership import _audit_result
    from dpcore.audit.one_run import default_guess_counts, one_run_guesses

    rng = np.random.default_rng(0)
    included = rng.random(500) < 0.5
    scores = included + rng.normal(0, 0.8, 500)  # a fair attack, far from perfect
    result = _audit_result(scores, included, attack="canaries", epsilon=np.inf, delta=0.0, confidence=0.95,
                           seconds=0.0)
    rules = default_guess_counts(500)
    level = 0.05 / len(rules)
    truth = np.where(np.sort(included)[::-1], 1, -1)  # a perfect attack's order: the members first
    best = 0.0
    for k_pos, k_neg in rules:
        guesses = one_run_guesses(truth.astype(float), k_pos=k_pos, k_neg=k_neg)
        r, v = int(np.count_nonzero(guesses)), int(np.count_nonzero(guesses == truth))
        def tail(e, r=r, v=v):
            return stats.binom.sf(v - 1, r, 1 / (1 + np.exp(-e))) - level

        if tail(0.0) < 0:
            best = max(best, optimize.brentq(tail, 0.0, 50.0, xtol=1e-12))
    assert result.most_provable() == pytest.approx(best, abs=1e-6)
    assert 0 < result.epsilon_lower_bound < result.most_provable() < 5.0
