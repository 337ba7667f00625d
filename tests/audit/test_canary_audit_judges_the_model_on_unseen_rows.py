"""A canary audit judges its model against the trivial predictor on the test rows it never saw, not on a test set
that also holds the mislabelled canaries.

The mislabelled-canary audit (Steinke, Nasr & Jagielski 2023's one-run audit with Carlini et al. 2019's canaries)
asks the learner about its canaries through the learner's test rows. On a small table most test rows become
canaries, every canary carries a wrong label, and the learner's own check ("no more accurate on the test rows than
always answering the most common class") read those wrong labels as misses: a model right on 88 % of unseen records
was reported as having learnt nothing. The check is now made on the unseen rows alone.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore import as_dataset
from dpcore.audit.canaries import input_canary_audit
from dpcore.runtime.thread_warnings import caught

TRIVIAL = "no more accurate on the test rows"


def _customers(n: int = 400) -> "object":
    rng = np.random.default_rng(0)
    visits = rng.uniform(0, 50, n)
    df = pd.DataFrame({"age": rng.uniform(18, 90, n), "visits": visits,
                       "churned": (visits + rng.normal(0, 5, n) > 25).astype(int)})
    return as_dataset(df, label="churned", bounds={"age": (18, 90), "visits": (0, 50)}, name="customers")


@pytest.mark.parametrize("learner, epsilon", [("non-private", None), ("dpsgd", 2.0)])
def test_a_model_that_learnt_is_not_called_trivial_because_of_its_canaries(learner, epsilon):
    data = _customers()
    with caught() as said:
        audit = input_canary_audit(learner, data, epsilon=epsilon or 1.0, canaries=80, seed=0)
    assert audit.accuracy is not None and audit.accuracy > 0.75  # right on most unseen records
    assert not [w for w in said if TRIVIAL in str(w.message)], [str(w.message) for w in said]


def test_a_model_that_learnt_nothing_is_still_called_trivial_on_the_unseen_rows():
    data = _customers()
    with caught() as said:  # at this ε the noise drowns the model: 15 % right on unseen rows, majority share 54 %
        audit = input_canary_audit("dpsgd", data, epsilon=1e-3, canaries=80, seed=0)
    assert audit.accuracy < 0.5
    assert len([w for w in said if TRIVIAL in str(w.message)]) == 1, [str(w.message) for w in said]


def _rare_label(n: int = 1500, shift: float = 1.5) -> "object":
    """A 90/10 label the model can find: 'yes' rows have features larger by ``shift``."""
    rng = np.random.default_rng(1)
    y = rng.random(n) < 0.1
    X = rng.normal(size=(n, 3)) + shift * y[:, None]
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(readmitted=np.where(y, "yes", "no"))
    return as_dataset(df, label="readmitted", bounds="*=-6:6", name="ward")


def test_with_declared_class_shares_the_audited_models_accuracy_follows_them():
    """The Attack page said 'Model accuracy 0.863 ... the model learnt nothing' beside a box saying 'Answers follow
    the declared class shares': the unseen rows were answered by argmax while the run answered by the shares."""
    plain = _rare_label()
    declared = plain.with_class_shares("no=0.9, yes=0.1")
    with caught():
        a = input_canary_audit("non-private", plain, epsilon=1.0, canaries=100, seed=0)
        b = input_canary_audit("non-private", declared, epsilon=1.0, canaries=100, seed=0)
    np.testing.assert_array_equal(a.scores, b.scores)  # the same model and attack: only its answers change
    assert a.result.epsilon_lower_bound == b.result.epsilon_lower_bound
    assert b.balanced_accuracy > a.balanced_accuracy + 0.05  # the rare class is answered
    assert b.accuracy != a.accuracy


def test_a_shares_judgement_on_the_canaries_wrong_labels_does_not_leak_out():
    """The learner's own check, made on test rows holding 500 mislabelled canaries, said DP-SGD 'finds each class no
    better (balanced accuracy) than always answering one class'; on the rows it never saw it finds them better."""
    declared = _rare_label(shift=0.6).with_class_shares("no=0.9, yes=0.1")
    with caught() as said:
        audit = input_canary_audit("dpsgd", declared, epsilon=1.0, seed=0)
    assert audit.balanced_accuracy > 0.5
    assert not [w for w in said if "finds each class no better" in str(w.message)], [str(w.message) for w in said]
