"""The Attack page's default audit: mislabelled canaries in the full training set, a leaky twin, and the ε ladder."""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from dpcore.audit import canaries as canaries_module
from dpcore.audit.run import epsilon_ladder, leaky_network_params, run_audit, story_canaries
from dpcore.datasets import train_test_split


def test_the_default_audit_inserts_canaries_into_the_full_training_set_and_scores_accuracy_on_the_rest():
    audit = run_audit("dpsgd", "iris", epsilon=1.0, seed=0)
    m = story_canaries("iris")
    assert audit.result.n_members + audit.result.n_nonmembers == m == audit.scores.size
    assert audit.records.shape[0] == m and (audit.taught != audit.true_labels).all()  # every canary mislabelled
    assert 0.0 <= audit.accuracy <= 1.0 and audit.target_accuracy == audit.accuracy
    # the same seed gives the same canaries and coins to the twin: one experiment, two models
    twin = run_audit("non-private", "iris", epsilon=1.0, seed=0)
    assert (twin.included == audit.included).all() and np.array_equal(twin.taught, audit.taught)
    assert twin.result.epsilon == math.inf


def test_the_leaky_twin_is_a_wide_network_whose_batch_fits_the_rows():
    assert leaky_network_params(3750)["batch_size"] == 128 and leaky_network_params(40)["batch_size"] == 40
    assert leaky_network_params(100)["model"] == "mlp"


def test_a_learner_that_claims_epsilon_one_but_trains_without_noise_is_caught(monkeypatch):
    real = canaries_module.run_learner

    def no_noise(name, split, **kw):  # the leaky network, passed off as DP-SGD at the ε it was asked for
        res = real("non-private", split, **{**kw, "params": leaky_network_params(split.y_train.size)})
        return dataclasses.replace(res, epsilon=kw["epsilon"], delta=kw["delta"])

    monkeypatch.setattr(canaries_module, "run_learner", no_noise)
    audit = run_audit("dpsgd", "digits", epsilon=1.0, seed=0)
    assert audit.result.epsilon == 1.0 and audit.result.epsilon_lower_bound > 1.0


def test_the_ladder_climbs_within_its_intervals_and_never_passes_the_claim():
    rungs = epsilon_ladder("dpsgd", "iris", canaries=400, seed=0)
    claims = [e for e, _ in rungs]
    assert claims == [0.5, 1.0, 2.0, 4.0, 8.0, math.inf]
    proven = [a.result.epsilon_lower_bound for _, a in rungs]
    assert all(p <= e for p, e in zip(proven, claims) if math.isfinite(e))
    assert proven[-1] > 2.0 and proven[-1] > max(proven[:-1])  # no noise: the white-box canaries are found
    for (_, low), (_, high) in zip(rungs, rungs[1:]):  # a higher claim is never caught significantly less often
        lo_iv, hi_iv = low.result.tpr_interval("0.01"), high.result.tpr_interval("0.01")
        assert lo_iv[0] <= hi_iv[1]


def test_the_canaries_come_from_the_held_out_rows_and_leave_the_rest_to_measure_accuracy():
    split = train_test_split("digits", seed=0)
    m = story_canaries("digits")
    assert m == int(0.4 * split.y_test.size)  # 40 % of the held-out rows; 60 % still measure the accuracy


def test_chance_is_the_range_a_guess_reaches_and_a_leak_leaves_it():
    from dpcore.audit.result import audit_from_scores
    from dpcore.audit.roc import chance_tpr_interval, roc_curve

    lo, hi = chance_tpr_interval(250, 250, 0.01)
    rng = np.random.default_rng(3)
    guesses = [roc_curve(rng.random(250), rng.random(250)).tpr_at(0.01) for _ in range(2000)]
    inside = np.mean([lo <= g <= hi for g in guesses])
    assert 0.93 <= inside <= 1.0  # a guess lands in its own range about 95 % of the time
    assert hi > 0.01 + 0.02  # the threshold moves with the non-members: wider than a binomial interval around 1 %
    leak = audit_from_scores(rng.normal(1.5, 1, 250), rng.normal(0, 1, 250), attack="demo", epsilon=1.0, delta=1e-5)
    assert leak.within_chance("0.01") is False
    low, high = leak.tpr_interval("0.01")  # the measured rate sits inside its own Clopper-Pearson interval
    assert low <= leak.tpr_at_fpr["0.01"] <= high


def test_too_few_rows_names_the_rows_each_attack_needs_and_none_for_gradient_canaries():
    import numpy as np

    from dpcore.audit.run import too_few_rows
    from dpcore.datasets import as_dataset

    X = np.arange(24, dtype=float).reshape(12, 2) % 5
    tiny = as_dataset((X, np.arange(12) % 2), bounds=(0.0, 5.0))
    assert "so data with at least 40 rows" in too_few_rows(tiny, attack="canaries")
    assert "so data with at least 40 rows" in too_few_rows(tiny, attack="one-run")  # input canaries
    for attack in ("loss", "lira", "lira-offline"):
        assert "pool needs at least 50 of them, so data with at least 67 rows" in too_few_rows(tiny, attack=attack)
    assert too_few_rows(tiny, attack="one-run", gradient_canaries=True) is None  # canaries in the gradient steps
    assert too_few_rows("digits", attack="loss") is None and too_few_rows("digits", attack="canaries") is None
    three = as_dataset((X[:3], np.array([0, 1, 1])), bounds=(0.0, 5.0))  # one held-out row: "1 test row", singular
    assert too_few_rows(three, attack="canaries").startswith("it holds out 1 test row, and")
