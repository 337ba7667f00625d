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
