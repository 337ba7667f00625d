"""Balanced accuracy: every classifier's run reports it, equal to scikit-learn's on the run's own test answers."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score

from dpcore.datasets import train_test_split
from dpcore.learners import run_learner
from dpcore.learners.metrics import balanced_accuracy


def test_balanced_accuracy_is_scikit_learns_including_classes_never_predicted():
    rng = np.random.default_rng(0)
    for k in (2, 3, 10):
        y = rng.integers(0, k, 200)
        pred = np.where(rng.random(200) < 0.6, y, rng.integers(0, k, 200))
        pred[pred == k - 1] = 0  # one class never predicted
        assert balanced_accuracy(y, pred) == pytest.approx(balanced_accuracy_score(y, pred))
    assert balanced_accuracy([0] * 19 + [1], [0] * 20) == 0.5  # 95/5, always the common class: accuracy 0.95


@pytest.mark.parametrize("learner, params", [("dpsgd", {"epochs": 2}), ("erm-objective", {}), ("pate", {}),
                                             ("dp-fedavg", {"rounds": 2}), ("majority", {})])
def test_every_classifiers_run_reports_balanced_accuracy_from_its_own_test_answers(learner, params):
    split = train_test_split("breast_cancer", seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = run_learner(learner, split, epsilon=2.0, seed=0, params=params)
    answered = np.argmax(res.test_outputs.values, axis=1)
    assert res.metrics["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(split.y_test, answered))
    assert res.metrics["accuracy"] == pytest.approx(np.mean(answered == split.y_test))
