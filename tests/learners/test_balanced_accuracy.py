"""Balanced accuracy and the rarest class's recall: every classifier's run reports both, equal to scikit-learn's
on the run's own test answers."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, recall_score

from dpcore.datasets import train_test_split
from dpcore.learners import run_learner
from dpcore.learners.metrics import balanced_accuracy, rare_class_recall


def test_balanced_accuracy_is_scikit_learns_including_classes_never_predicted():
    rng = np.random.default_rng(0)
    for k in (2, 3, 10):
        y = rng.integers(0, k, 200)
        pred = np.where(rng.random(200) < 0.6, y, rng.integers(0, k, 200))
        pred[pred == k - 1] = 0  # one class never predicted
        assert balanced_accuracy(y, pred) == pytest.approx(balanced_accuracy_score(y, pred))
    assert balanced_accuracy([0] * 19 + [1], [0] * 20) == 0.5  # 95/5, always the common class: accuracy 0.95


def test_the_rarest_class_recall_is_scikit_learns_recall_of_the_class_with_fewest_test_rows():
    rng = np.random.default_rng(1)
    for shares in ([0.95, 0.05], [0.7, 0.2, 0.1], [0.1, 0.6, 0.3]):
        y = rng.choice(len(shares), size=400, p=shares)
        pred = np.where(rng.random(400) < 0.7, y, rng.integers(0, len(shares), 400))
        rare = int(np.argmin(np.bincount(y, minlength=len(shares))))
        expected = recall_score(y, pred, labels=[rare], average=None)[0]
        assert rare_class_recall(y, pred) == pytest.approx(expected)
    assert rare_class_recall([0] * 19 + [1], [0] * 20) == 0.0  # always the common class finds none of the rare


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
    rare = int(np.argmin(np.bincount(split.y_test)))  # breast cancer: malignant, 37 % of the rows
    assert res.metrics["rare_class_recall"] == pytest.approx(
        recall_score(split.y_test, answered, labels=[rare], average=None)[0])
